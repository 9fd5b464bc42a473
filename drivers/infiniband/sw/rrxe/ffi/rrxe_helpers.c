// SPDX-License-Identifier: GPL-2.0
/*
 * Wrappers for static inline kernel functions used by rrxe's Rust code.
 * See include/rrxe/helpers.h.
 */

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/hrtimer.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/srcu.h>
#include <linux/workqueue.h>
#include <linux/timekeeping.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <linux/vmalloc.h>
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/rdma_netlink.h>
#include <net/netlink.h>
#include <rrxe/helpers.h>

struct net_device *rrxe_netdev_from_notifier_info(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

void rrxe_netdev_hold(struct net_device *ndev)
{
	dev_hold(ndev);
}

void rrxe_netdev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

const char *rrxe_netdev_name(const struct net_device *ndev)
{
	return netdev_name(ndev);
}

unsigned int rrxe_netdev_mtu(const struct net_device *ndev)
{
	return READ_ONCE(ndev->mtu);
}

bool rrxe_netdev_is_up(const struct net_device *ndev)
{
	return netif_running(ndev);
}

bool rrxe_netdev_is_ether(const struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER;
}

bool rrxe_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

bool rrxe_netdev_mac(const struct net_device *ndev, u8 mac[6])
{
	if (ndev->addr_len != ETH_ALEN)
		return false;
	ether_addr_copy(mac, ndev->dev_addr);
	return true;
}

int rrxe_netdev_port_state(const struct net_device *ndev)
{
	return ib_get_curr_port_state((struct net_device *)ndev);
}

bool rrxe_netdev_is_registered(const struct net_device *ndev)
{
	return READ_ONCE(ndev->reg_state) == NETREG_REGISTERED;
}

struct net *rrxe_netdev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

struct ib_device *rrxe_ib_alloc_device(size_t size)
{
	return _ib_alloc_device(size, &init_net);
}

bool rrxe_ib_device_try_get(struct ib_device *ibdev)
{
	return ib_device_try_get(ibdev);
}

void rrxe_ib_device_get_dev(struct ib_device *ibdev)
{
	get_device(&ibdev->dev);
}

void rrxe_ib_device_put_dev(struct ib_device *ibdev)
{
	put_device(&ibdev->dev);
}

const char *rrxe_ib_device_name(const struct ib_device *ibdev)
{
	return dev_name(&ibdev->dev);
}

void rrxe_rtnl_lock(void)
{
	rtnl_lock();
}

void rrxe_rtnl_unlock(void)
{
	rtnl_unlock();
}

void rrxe_eui48(u8 eui[8], const u8 mac[6])
{
	addrconf_addr_eui48(eui, mac);
}

void rrxe_random_mac(u8 mac[6])
{
	eth_random_addr(mac);
}

unsigned int rrxe_num_possible_cpus(void)
{
	return num_possible_cpus();
}

void rrxe_dispatch_port_event(struct ib_device *ibdev, u32 port, int event)
{
	struct ib_event ev = {
		.device = ibdev,
		.element.port_num = port,
		.event = event,
	};

	ib_dispatch_event(&ev);
}

void *rrxe_vmalloc_user(size_t size)
{
	return vmalloc_user(size);
}

unsigned long rrxe_vma_len(const struct vm_area_struct *vma)
{
	return vma->vm_end - vma->vm_start;
}

u64 rrxe_mmap_offset(const struct rdma_user_mmap_entry *entry)
{
	return rdma_user_mmap_get_offset(entry);
}

struct ib_udata *rrxe_attrs_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}

struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata)
{
	return rdma_udata_to_uverbs_attr_bundle(udata)->context;
}

int rrxe_udata_respond(struct ib_udata *udata, const void *src, size_t len)
{
	if (udata->outlen < len)
		return -EINVAL;
	return copy_to_user(udata->outbuf, src, len) ? -EFAULT : 0;
}

int rrxe_udata_read(struct ib_udata *udata, void *dst, size_t len)
{
	if (udata->inlen < len)
		return -EINVAL;
	return copy_from_user(dst, udata->inbuf, len) ? -EFAULT : 0;
}

int rrxe_copy_to_user(u64 uaddr, const void *src, size_t len)
{
	return copy_to_user(u64_to_user_ptr(uaddr), src, len) ? -EFAULT : 0;
}

struct ib_umem *rrxe_umem_get(struct ib_device *dev, u64 addr, size_t size,
			      int access)
{
	return ib_umem_get_va(dev, addr, size, access);
}

struct sk_buff *rrxe_skb_alloc(const struct net_device *ndev,
			       unsigned int hdr_len, unsigned int len,
			       unsigned int zero_head, unsigned int zero_tail)
{
	unsigned int room = hdr_len + LL_RESERVED_SPACE(ndev);
	struct sk_buff *skb;
	u8 *data;

	skb = alloc_skb(room + len, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	data = skb_put(skb, len);
	zero_head = min(zero_head, len);
	zero_tail = min(zero_tail, len);
	memset(data, 0, zero_head);
	memset(data + len - zero_tail, 0, zero_tail);
	return skb;
}

void rrxe_skb_free(struct sk_buff *skb)
{
	dev_kfree_skb_any(skb);
}

void rrxe_skb_consume(struct sk_buff *skb)
{
	dev_consume_skb_any(skb);
}

u8 *rrxe_skb_data(const struct sk_buff *skb)
{
	return skb->data;
}

unsigned int rrxe_skb_len(const struct sk_buff *skb)
{
	return skb->len;
}

unsigned int rrxe_skb_headroom(const struct sk_buff *skb)
{
	return skb_headroom(skb);
}

u8 *rrxe_skb_push_transport(struct sk_buff *skb, unsigned int len)
{
	u8 *start = skb_push(skb, len);

	skb_reset_transport_header(skb);
	return start;
}

u8 *rrxe_skb_push_network(struct sk_buff *skb, unsigned int len)
{
	u8 *start = skb_push(skb, len);

	skb_reset_network_header(skb);
	return start;
}

int rrxe_skb_rx_view(struct sk_buff *skb, struct rrxe_skb_rx *view)
{
	const u8 *net;

	if (skb_linearize(skb))
		return -ENOMEM;
	if (!skb->dev)
		return -EINVAL;
	net = skb_network_header(skb);
	if (net < skb->head || net > skb->data)
		return -EINVAL;

	view->net = net;
	view->net_len = skb->data - net;
	view->data = skb->data;
	view->len = skb->len;
	view->dev = skb->dev;
	return 0;
}

#ifdef CONFIG_DEBUG_LOCK_ALLOC
/*
 * Our tunnel sockets get lock classes of their own, so that lockdep does not
 * tie their (softirq) receive path to every other UDP socket's locking, as
 * C rxe does for its sockets.
 */
static struct lock_class_key rrxe_sk_lock_key[2];
static struct lock_class_key rrxe_slock_key[2];

static void rrxe_sock_set_lock_class(struct sock *sk, bool ipv6)
{
	if (WARN_ON_ONCE(!sock_allow_reclassification(sk)))
		return;
	if (ipv6)
		sock_lock_init_class_and_name(sk,
			"slock-AF_INET6-RDMA-RRXE", &rrxe_slock_key[1],
			"sk_lock-AF_INET6-RDMA-RRXE", &rrxe_sk_lock_key[1]);
	else
		sock_lock_init_class_and_name(sk,
			"slock-AF_INET-RDMA-RRXE", &rrxe_slock_key[0],
			"sk_lock-AF_INET-RDMA-RRXE", &rrxe_sk_lock_key[0]);
	/*
	 * The macro pins this module through sk_owner; the owner of the
	 * tunnel closes the socket before the module goes, and a socket freed
	 * after RCU must not put a module reference then. Drop it now.
	 */
	sk_owner_put(sk);
	sk_owner_clear(sk);
}
#else
static void rrxe_sock_set_lock_class(struct sock *sk, bool ipv6)
{
}
#endif

int rrxe_udp_tunnel_open(struct net *net, bool ipv6, u16 port,
			 int (*encap_rcv)(struct sock *sk, struct sk_buff *skb),
			 void *user_data, struct sock **skp)
{
	struct udp_port_cfg ucfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.local_udp_port = htons(port),
		.ipv6_v6only = ipv6,
	};
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = user_data,
		.encap_type = 1,
		.encap_rcv = encap_rcv,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &ucfg, &sock);
	if (err)
		return err;
	rrxe_sock_set_lock_class(sock->sk, ipv6);
	setup_udp_tunnel_sock(net, sock->sk, &tcfg);
	*skp = sock->sk;
	return 0;
}

void *rrxe_sk_user_data(const struct sock *sk)
{
	return rcu_dereference_sk_user_data(sk);
}

#ifdef CONFIG_DEBUG_LOCK_ALLOC
/* Transmit-only sockets get a class of their own, as C rxe's send sockets. */
static struct lock_class_key rrxe_tx_sk_lock_key;
static struct lock_class_key rrxe_tx_slock_key;

static void rrxe_tx_sock_set_lock_class(struct sock *sk)
{
	if (WARN_ON_ONCE(!sock_allow_reclassification(sk)))
		return;
	sock_lock_init_class_and_name(sk,
		"slock-AF_INET-RDMA-RRXE-TX", &rrxe_tx_slock_key,
		"sk_lock-AF_INET-RDMA-RRXE-TX", &rrxe_tx_sk_lock_key);
	/* As for the tunnel sockets: no module reference through sk_owner. */
	sk_owner_put(sk);
	sk_owner_clear(sk);
}
#else
static void rrxe_tx_sock_set_lock_class(struct sock *sk)
{
}
#endif

int rrxe_tx_sock_create(void (*write_space)(struct sock *sk),
			struct socket **sockp)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_DGRAM, IPPROTO_UDP,
			       &sock);
	if (err)
		return err;
	rrxe_tx_sock_set_lock_class(sock->sk);
	write_lock_bh(&sock->sk->sk_callback_lock);
	sock->sk->sk_user_data = NULL;
	WRITE_ONCE(sock->sk->sk_write_space, write_space);
	write_unlock_bh(&sock->sk->sk_callback_lock);
	*sockp = sock;
	return 0;
}

void rrxe_tx_sock_release(struct socket *sock)
{
	sock_release(sock);
}

void *rrxe_tx_sock_xchg_owner(struct socket *sock, void *owner)
{
	return xchg(&sock->sk->sk_user_data, owner);
}

void *rrxe_tx_sock_cmpxchg_owner(struct socket *sock, void *old, void *owner)
{
	return cmpxchg(&sock->sk->sk_user_data, old, owner);
}

void *rrxe_tx_sock_owner(const struct sock *sk)
{
	return READ_ONCE(sk->sk_user_data);
}

int rrxe_tx_sock_wmem(const struct socket *sock)
{
	return sk_wmem_alloc_get(sock->sk);
}

void rrxe_skb_set_owner(struct sk_buff *skb, struct socket *sock)
{
	skb_set_owner_w(skb, sock->sk);
}

struct dst_entry *rrxe_route4(struct net *net, int oif, const u8 saddr[4],
			      const u8 daddr[4])
{
	struct flowi4 fl = {
		.flowi4_oif = oif,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;

	memcpy(&fl.saddr, saddr, 4);
	memcpy(&fl.daddr, daddr, 4);
	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	return &rt->dst;
}

struct dst_entry *rrxe_route6(struct net *net, int oif, const u8 saddr[16],
			      const u8 daddr[16])
{
	struct flowi6 fl = {
		.flowi6_oif = oif,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;
	int err;

	memcpy(&fl.saddr, saddr, 16);
	memcpy(&fl.daddr, daddr, 16);
	dst = ip6_dst_lookup_flow(net, NULL, &fl, NULL);
	if (IS_ERR(dst))
		return dst;
	err = dst->error;
	if (unlikely(err)) {
		dst_release(dst);
		return ERR_PTR(err);
	}
	return dst;
}

void rrxe_dst_release(struct dst_entry *dst)
{
	dst_release(dst);
}

void rrxe_dst_hold(struct dst_entry *dst)
{
	dst_hold(dst);
}

u32 rrxe_dst_cookie(struct dst_entry *dst, bool v6)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (v6)
		return rt6_get_cookie(dst_rt6_info(dst));
#endif
	return 0;
}

bool rrxe_dst_valid(struct dst_entry *dst, u32 cookie)
{
	return !READ_ONCE(dst->obsolete) || dst->ops->check(dst, cookie);
}

bool rrxe_dst_keepable(struct dst_entry *dst, bool v6)
{
	if (v6)
		return true;
	return !(dst_rtable(dst)->rt_flags & (RTCF_MULTICAST | RTCF_BROADCAST));
}

void rrxe_skb_set_route(struct sk_buff *skb, struct net_device *ndev,
			struct dst_entry *dst, bool ipv6)
{
	skb_scrub_packet(skb, false);
	skb_clear_hash(skb);
	skb_dst_set(skb, dst);
	if (ipv6) {
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		skb->protocol = htons(ETH_P_IPV6);
	} else {
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		skb->protocol = htons(ETH_P_IP);
	}
	skb->dev = ndev;
}

void rrxe_ip_select_ident(struct sk_buff *skb)
{
	__ip_select_ident(dev_net(skb_dst(skb)->dev), ip_hdr(skb),
			  skb_shinfo(skb)->gso_segs ?: 1);
}

int rrxe_ip_local_out(struct sk_buff *skb, bool ipv6)
{
	struct net *net = dev_net(skb_dst(skb)->dev);
	int err;

	if (ipv6)
		err = ip6_local_out(net, NULL, skb);
	else
		err = ip_local_out(net, NULL, skb);
	if (err > 0)
		err = net_xmit_errno(err);
	return err;
}

int rrxe_netdev_ifindex(const struct net_device *ndev)
{
	return READ_ONCE(ndev->ifindex);
}

bool rrxe_netdev_is_loopback(const struct net_device *ndev)
{
	return ndev->flags & IFF_LOOPBACK;
}

bool rrxe_netdev_has_addr(struct net_device *ndev, const u8 addr[16])
{
	struct in6_addr a6;
	struct net_device *owner;
	bool found;

	memcpy(&a6, addr, sizeof(a6));
	if (ipv6_addr_v4mapped(&a6)) {
		owner = ip_dev_find(dev_net(ndev), a6.s6_addr32[3]);
		found = owner == ndev;
		if (owner)
			dev_put(owner);
		return found;
	}
#if IS_ENABLED(CONFIG_IPV6)
	return ipv6_chk_addr(dev_net(ndev), &a6, ndev, 0);
#else
	return false;
#endif
}

struct net *rrxe_init_net(void)
{
	return &init_net;
}

struct net_device *rrxe_net_loopback_dev(const struct net *net)
{
	return net->loopback_dev;
}

u64 rrxe_ktime_get_ns(void)
{
	return ktime_get_ns();
}

void rrxe_hrtimer_setup_soft(struct hrtimer *timer,
			     enum hrtimer_restart (*fn)(struct hrtimer *))
{
	hrtimer_setup(timer, fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
}

void rrxe_hrtimer_start_soft(struct hrtimer *timer, u64 ns, u64 slack_ns)
{
	/* ktime_t is signed: a wait past KTIME_MAX is as good as forever. */
	ktime_t at = ns > KTIME_MAX ? KTIME_MAX : ns_to_ktime(ns);

	hrtimer_start_range_ns(timer, at, slack_ns, HRTIMER_MODE_REL_SOFT);
}

bool rrxe_hrtimer_is_queued(struct hrtimer *timer)
{
	return hrtimer_is_queued(timer);
}

/* memory access (dp-mem) */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/uaccess.h>

void *rrxe_kmap_local_page(struct page *page)
{
	return kmap_local_page(page);
}

void rrxe_kunmap_local(const void *addr)
{
	kunmap_local(addr);
}

struct page *rrxe_virt_to_page(unsigned long addr)
{
	return virt_addr_valid(addr) ? virt_to_page(addr) : NULL;
}

size_t rrxe_umem_num_pages(struct ib_umem *umem)
{
	return ib_umem_num_pages(umem);
}

size_t rrxe_umem_pages(struct ib_umem *umem, struct page **pages, size_t max)
{
	struct sg_page_iter iter;
	size_t n = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (n == max)
			break;
		pages[n++] = sg_page_iter_page(&iter);
	}
	return n;
}

bool rrxe_odp_enabled(void)
{
	return IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING);
}

struct ib_umem_odp *rrxe_odp_get(struct ib_device *dev, u64 addr, size_t size,
				 int access,
				 const struct mmu_interval_notifier_ops *ops)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	return ib_umem_odp_get(dev, addr, size, access, ops);
#else
	return ERR_PTR(-EOPNOTSUPP);
#endif
}

void rrxe_odp_release(struct ib_umem_odp *odp)
{
	ib_umem_odp_release(odp);
}

struct ib_umem_odp *rrxe_odp_alloc_implicit(struct ib_device *dev, int access)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	struct ib_umem_odp *root;

	if (!current->mm)
		return ERR_PTR(-EINVAL);
	root = ib_umem_odp_alloc_implicit(dev, access);
	if (!IS_ERR(root))
		mmgrab(root->umem.owning_mm);
	return root;
#else
	return ERR_PTR(-EOPNOTSUPP);
#endif
}

void rrxe_odp_release_implicit(struct ib_umem_odp *root)
{
	struct mm_struct *mm = root->umem.owning_mm;

	ib_umem_odp_release(root);
	mmdrop(mm);
}

struct ib_umem_odp *rrxe_odp_alloc_child(struct ib_umem_odp *root, u64 addr,
					 u64 len,
					 const struct mmu_interval_notifier_ops *ops)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	if (addr > ULONG_MAX || len > SIZE_MAX)
		return ERR_PTR(-EFAULT);
	return ib_umem_odp_alloc_child(root, addr, len, ops);
#else
	return ERR_PTR(-EOPNOTSUPP);
#endif
}

bool rrxe_odp_has_vma(struct ib_umem_odp *root, u64 start, u64 end)
{
	struct mm_struct *mm = root->umem.owning_mm;
	bool found;

	if (start >= end || end > ULONG_MAX || !mmget_not_zero(mm))
		return false;
	mmap_read_lock(mm);
	found = find_vma_intersection(mm, start, end) != NULL;
	mmap_read_unlock(mm);
	/* As the core's faults: the last user may be gone meanwhile. */
	mmput_async(mm);
	return found;
}

void rrxe_odp_geometry(const struct ib_umem_odp *odp, struct rrxe_odp_geometry *g)
{
	/* ib_umem_start() and ib_umem_odp_num_pages() take no const. */
	struct ib_umem_odp *o = (struct ib_umem_odp *)odp;

	g->base = ib_umem_start(o);
	g->pages = ib_umem_odp_num_pages(o);
	g->page_shift = odp->page_shift;
	g->address = odp->umem.address;
	g->length = odp->umem.length;
	g->writable = odp->umem.writable;
}

int rrxe_odp_map_and_lock(struct ib_umem_odp *odp, u64 addr, u64 len,
			  bool write, bool fault)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	return ib_umem_odp_map_dma_and_lock(odp, addr, len,
					    write ? HMM_PFN_WRITE : 0, fault);
#else
	return -EOPNOTSUPP;
#endif
}

struct page *rrxe_odp_page(const struct ib_umem_odp *odp, size_t idx,
			   bool *writable)
{
	unsigned long pfn = odp->map.pfn_list[idx];

	if ((pfn & (HMM_PFN_VALID | HMM_PFN_ERROR)) != HMM_PFN_VALID)
		return NULL;
	*writable = pfn & HMM_PFN_WRITE;
	return hmm_pfn_to_page(pfn);
}

bool rrxe_page_readable(struct page *page)
{
	char byte;

	/* kmap_local_page() maps a high page afresh, wherever it is. */
	if (PageHighMem(page))
		return true;
	/*
	 * Not through a local mapping: this is exactly the address that
	 * kmap_local_page() returns for a page that is not high, and the
	 * read faults (cleanly, the fault disabled) if the page is not in
	 * the direct map.
	 */
	return !copy_from_kernel_nofault(&byte, page_address(page), 1);
}

void rrxe_odp_page_dirty(struct page *page)
{
	folio_mark_dirty(page_folio(page));
}

void rrxe_odp_lock(struct ib_umem_odp *odp)
{
	mutex_lock(&odp->umem_mutex);
}

void rrxe_odp_unlock(struct ib_umem_odp *odp)
{
	mutex_unlock(&odp->umem_mutex);
}

void rrxe_odp_unmap(struct ib_umem_odp *odp, u64 start, u64 end)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	ib_umem_odp_unmap_dma_pages(odp, start, end);
#endif
}

struct ib_umem_odp *rrxe_odp_of_notifier(struct mmu_interval_notifier *mni)
{
	return container_of(mni, struct ib_umem_odp, notifier);
}

bool rrxe_mmu_range_blockable(const struct mmu_notifier_range *range)
{
	return mmu_notifier_range_blockable(range);
}

void rrxe_mmu_range_bounds(const struct mmu_notifier_range *range, u64 *start,
			   u64 *end)
{
	*start = range->start;
	*end = range->end;
}

void rrxe_mmu_set_seq(struct mmu_interval_notifier *mni, unsigned long cur_seq)
{
	mmu_interval_set_seq(mni, cur_seq);
}

/* synchronize_rcu(): waits for every RCU reader that started before. */
void rrxe_synchronize_rcu(void)
{
	synchronize_rcu();
}

void rrxe_cond_resched(void)
{
	cond_resched();
}

DEFINE_STATIC_SRCU(rrxe_rx_srcu);

int rrxe_rx_read_lock(void)
{
	return srcu_read_lock(&rrxe_rx_srcu);
}

void rrxe_rx_read_unlock(int idx)
{
	srcu_read_unlock(&rrxe_rx_srcu, idx);
}

void rrxe_rx_synchronize(void)
{
	synchronize_srcu_expedited(&rrxe_rx_srcu);
}

unsigned int rrxe_this_cpu(void)
{
	return raw_smp_processor_id();
}

bool rrxe_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
}

unsigned int rrxe_next_online_cpu(unsigned int cpu)
{
	return cpumask_next_wrap(cpu, cpu_online_mask);
}

bool rrxe_queue_work_bh_on(unsigned int cpu, struct work_struct *work)
{
	return queue_work_on(cpu, system_bh_wq, work);
}

/*
 * Queues work on CPU @cpu's per-CPU kworker (process context), for what is
 * left after a bottom-half run used its budget: there the scheduler shares
 * the CPU with tasks and RCU's threads, where softirq work that never
 * drains (each interrupt's exit runs up to 2 ms of it) would starve them.
 */
bool rrxe_queue_work_task_on(unsigned int cpu, struct work_struct *work)
{
	return queue_work_on(cpu, system_percpu_wq, work);
}

void rrxe_local_bh_disable(void)
{
	local_bh_disable();
}

void rrxe_local_bh_enable(void)
{
	local_bh_enable();
}

bool rrxe_bh_may_disable(void)
{
	return !in_hardirq() && !in_nmi() && !irqs_disabled();
}

int rrxe_spin_lock_held(spinlock_t *lock, bool irq)
{
	if (irq) {
		spin_lock_irq_disable(lock);
		return RRXE_HELD_IRQ;
	}
	/* Would deadlock against a holder this CPU interrupted: a caller's bug. */
	WARN_ON_ONCE(in_hardirq() || in_nmi());
	if (irqs_disabled()) {
		spin_lock(lock);
		return RRXE_HELD_PLAIN;
	}
	spin_lock_bh(lock);
	return RRXE_HELD_BH;
}

void rrxe_spin_unlock_held(spinlock_t *lock, int held)
{
	switch (held) {
	case RRXE_HELD_IRQ:
		spin_unlock_irq_enable(lock);
		break;
	case RRXE_HELD_BH:
		spin_unlock_bh(lock);
		break;
	default:
		spin_unlock(lock);
		break;
	}
}

void rrxe_rxq_init(struct sk_buff_head *q)
{
	skb_queue_head_init(q);
}

int rrxe_rxq_push(struct sk_buff_head *q, struct sk_buff *skb, unsigned int limit)
{
	unsigned long flags;
	int was_empty;

	spin_lock_irqsave(&q->lock, flags);
	if (skb_queue_len(q) >= limit) {
		spin_unlock_irqrestore(&q->lock, flags);
		return -ENOBUFS;
	}
	was_empty = skb_queue_empty(q);
	__skb_queue_tail(q, skb);
	spin_unlock_irqrestore(&q->lock, flags);
	return was_empty;
}

void rrxe_rxq_push_head(struct sk_buff_head *q, struct sk_buff *skb)
{
	skb_queue_head(q, skb);
}

struct sk_buff *rrxe_rxq_pop(struct sk_buff_head *q)
{
	return skb_dequeue(q);
}

bool rrxe_rxq_empty(const struct sk_buff_head *q)
{
	return skb_queue_empty_lockless(q);
}

static_assert(sizeof_field(struct sk_buff, cb) == 48);

void *rrxe_skb_cb(struct sk_buff *skb)
{
	return skb->cb;
}

struct nlattr *rrxe_nl_driver_nest_start(struct sk_buff *msg)
{
	return nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
}

void rrxe_nl_nest_end(struct sk_buff *msg, struct nlattr *nest)
{
	nla_nest_end(msg, nest);
}

void rrxe_nl_nest_cancel(struct sk_buff *msg, struct nlattr *nest)
{
	nla_nest_cancel(msg, nest);
}
