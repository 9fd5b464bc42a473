/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C wrappers for kernel static inline functions and macros that Rust cannot
 * call directly. Each one is a thin, obviously-correct shim; all logic lives
 * in Rust. Implemented in drivers/infiniband/sw/rrxe/rrxe_helpers.c.
 */
#ifndef RRXE_HELPERS_H
#define RRXE_HELPERS_H

#include <linux/types.h>
#include <linux/hrtimer_types.h>
#include <linux/spinlock_types.h>

struct net_device;
struct ib_device;
struct net;

struct net_device *rrxe_netdev_from_notifier_info(void *info);
void rrxe_netdev_hold(struct net_device *ndev);
void rrxe_netdev_put(struct net_device *ndev);
const char *rrxe_netdev_name(const struct net_device *ndev);
unsigned int rrxe_netdev_mtu(const struct net_device *ndev);
bool rrxe_netdev_is_up(const struct net_device *ndev);
bool rrxe_netdev_is_ether(const struct net_device *ndev);
bool rrxe_netdev_is_vlan(const struct net_device *ndev);
/* Copies the MAC into @mac and returns true if the netdev has a 6-byte one. */
bool rrxe_netdev_mac(const struct net_device *ndev, u8 mac[6]);
/* IB_PORT_ACTIVE when the netdev is up with carrier, else IB_PORT_DOWN. */
int rrxe_netdev_port_state(const struct net_device *ndev);

/* NETREG_REGISTERED: the netdev will see NETDEV_UNREGISTER later. */
bool rrxe_netdev_is_registered(const struct net_device *ndev);
/* dev_net(): the network namespace the netdev lives in. */
struct net *rrxe_netdev_net(const struct net_device *ndev);

/* ib_alloc_device() in init_net, as the macro does for in-tree drivers. */
struct ib_device *rrxe_ib_alloc_device(size_t size);
bool rrxe_ib_device_try_get(struct ib_device *ibdev);
void rrxe_ib_device_get_dev(struct ib_device *ibdev);
void rrxe_ib_device_put_dev(struct ib_device *ibdev);
const char *rrxe_ib_device_name(const struct ib_device *ibdev);

void rrxe_rtnl_lock(void);
void rrxe_rtnl_unlock(void);
void rrxe_eui48(u8 eui[8], const u8 mac[6]);
void rrxe_random_mac(u8 mac[6]);
unsigned int rrxe_num_possible_cpus(void);
void rrxe_dispatch_port_event(struct ib_device *ibdev, u32 port, int event);

struct vm_area_struct;
struct rdma_user_mmap_entry;
struct uverbs_attr_bundle;
struct ib_udata;

/* vmalloc_user(): zeroed, page-granular, mappable with remap_vmalloc_range. */
void *rrxe_vmalloc_user(size_t size);
unsigned long rrxe_vma_len(const struct vm_area_struct *vma);
u64 rrxe_mmap_offset(const struct rdma_user_mmap_entry *entry);
/* The driver's udata of a command, or NULL for kernel callers. */
struct ib_udata *rrxe_attrs_udata(struct uverbs_attr_bundle *attrs);
/* The user context a command came from. */
struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata);
/* Copies a response out; EINVAL if userspace left too little room. */
int rrxe_udata_respond(struct ib_udata *udata, const void *src, size_t len);
/* Copies a command in; EINVAL if userspace sent too little. */
int rrxe_udata_read(struct ib_udata *udata, void *dst, size_t len);
int rrxe_copy_to_user(u64 uaddr, const void *src, size_t len);

struct ib_umem;
/* ib_umem_get_va(): pins user memory; ERR_PTR on failure. */
struct ib_umem *rrxe_umem_get(struct ib_device *dev, u64 addr, size_t size,
			      int access);

/* ---- Networking data path: socket buffers, UDP tunnels, routes ---- */

struct sk_buff;
struct sock;
struct dst_entry;

/*
 * A linear skb for @len bytes of payload, with @hdr_len bytes of headroom for
 * the caller's headers plus the link layer's LL_RESERVED_SPACE(@ndev). The
 * payload is put; its first @zero_head and last @zero_tail bytes are zeroed,
 * the rest is left for the caller to fill (all of it, if both are @len).
 * GFP_ATOMIC; NULL on failure.
 */
struct sk_buff *rrxe_skb_alloc(const struct net_device *ndev,
			       unsigned int hdr_len, unsigned int len,
			       unsigned int zero_head, unsigned int zero_tail);
/* Frees an skb that was dropped / consumed, from any context. */
void rrxe_skb_free(struct sk_buff *skb);
void rrxe_skb_consume(struct sk_buff *skb);
u8 *rrxe_skb_data(const struct sk_buff *skb);
unsigned int rrxe_skb_len(const struct sk_buff *skb);
unsigned int rrxe_skb_headroom(const struct sk_buff *skb);
/* skb_push() that also marks the new start as the transport header. */
u8 *rrxe_skb_push_transport(struct sk_buff *skb, unsigned int len);
/* skb_push() that also marks the new start as the network header. */
u8 *rrxe_skb_push_network(struct sk_buff *skb, unsigned int len);

/* A received datagram, linearized (see rrxe_skb_rx_view). */
struct rrxe_skb_rx {
	const u8 *net;		/* the network header */
	unsigned int net_len;	/* bytes from the network header to data */
	const u8 *data;		/* the UDP header */
	unsigned int len;	/* bytes from data to the end */
	struct net_device *dev;	/* the device it arrived on */
};
/*
 * Linearizes a datagram handed to a UDP encap_rcv hook and describes it;
 * -ENOMEM if linearizing fails, -EINVAL if it has no device or no network
 * header inside the buffer before data.
 */
int rrxe_skb_rx_view(struct sk_buff *skb, struct rrxe_skb_rx *view);

/*
 * Opens a kernel UDP socket in @net on @port (host order), IPv4 INADDR_ANY or
 * IPv6 in6addr_any v6only, and makes it a UDP tunnel whose datagrams go to
 * @encap_rcv with @user_data as sk_user_data. Returns 0 and the sock in @skp.
 */
int rrxe_udp_tunnel_open(struct net *net, bool ipv6, u16 port,
			 int (*encap_rcv)(struct sock *sk, struct sk_buff *skb),
			 void *user_data, struct sock **skp);
/* rcu_dereference_sk_user_data(): call under RCU (as encap_rcv runs). */
void *rrxe_sk_user_data(const struct sock *sk);

struct socket;
/*
 * A kernel UDP socket (init_net, never bound or connected) that only owns
 * transmitted skbs: @write_space runs from sock_wfree() as each is freed,
 * while the socket still holds a write-memory reference. NULL user data.
 */
int rrxe_tx_sock_create(void (*write_space)(struct sock *sk),
			struct socket **sockp);
void rrxe_tx_sock_release(struct socket *sock);
/* xchg() / cmpxchg() on sk_user_data; return the previous value. */
void *rrxe_tx_sock_xchg_owner(struct socket *sock, void *owner);
void *rrxe_tx_sock_cmpxchg_owner(struct socket *sock, void *old, void *owner);
/* READ_ONCE() of sk_user_data, from a write_space callback. */
void *rrxe_tx_sock_owner(const struct sock *sk);
/* Bytes of skbs the socket still owns (sk_wmem_alloc_get()). */
int rrxe_tx_sock_wmem(const struct socket *sock);
/* skb_set_owner_w(): charges @skb to @sock until it is freed. */
void rrxe_skb_set_owner(struct sk_buff *skb, struct socket *sock);

/*
 * Output routes for UDP from @saddr to @daddr (network order) leaving through
 * device @oif. A dst reference, or an ERR_PTR.
 */
struct dst_entry *rrxe_route4(struct net *net, int oif, const u8 saddr[4],
			      const u8 daddr[4]);
struct dst_entry *rrxe_route6(struct net *net, int oif, const u8 saddr[16],
			      const u8 daddr[16]);
void rrxe_dst_release(struct dst_entry *dst);
/* Takes another reference on @dst. */
void rrxe_dst_hold(struct dst_entry *dst);
/* What a route looked up for IPv6 (@v6) or IPv4 must still match to be
 * valid: rt6_get_cookie() for IPv6, 0 for IPv4 (whose routes check their
 * generation themselves). */
u32 rrxe_dst_cookie(struct dst_entry *dst, bool v6);
/* Whether a route kept since its lookup is still valid (as dst_cache does:
 * an obsolete route must pass its family's check against @cookie). */
bool rrxe_dst_valid(struct dst_entry *dst, u32 cookie);
/* Whether a route may be kept for later packets: not an IPv4 multicast or
 * broadcast route, whose loopback to this host is decided at the lookup
 * (group membership changes do not make the route stale). */
bool rrxe_dst_keepable(struct dst_entry *dst, bool v6);
/*
 * Readies a fresh skb for IP output through @dst (whose reference it takes
 * over) from @ndev: scrubs it, clears the hash, sets the dst, clears the IP
 * control block and sets skb->protocol for IPv4 or IPv6.
 */
void rrxe_skb_set_route(struct sk_buff *skb, struct net_device *ndev,
			struct dst_entry *dst, bool ipv6);
/* __ip_select_ident() for the IPv4 header at the skb's network header. */
void rrxe_ip_select_ident(struct sk_buff *skb);
/*
 * ip_local_out() / ip6_local_out() in the namespace of the skb's route, with
 * no socket. Takes the skb. 0, -ENOBUFS for a drop, or a negative errno.
 */
int rrxe_ip_local_out(struct sk_buff *skb, bool ipv6);

int rrxe_netdev_ifindex(const struct net_device *ndev);
bool rrxe_netdev_is_loopback(const struct net_device *ndev);
/* Whether @addr (IPv6, or IPv4-mapped) is one of @ndev's addresses. */
bool rrxe_netdev_has_addr(struct net_device *ndev, const u8 addr[16]);
struct net *rrxe_init_net(void);
/* The namespace's loopback device, which lives as long as it does. */
struct net_device *rrxe_net_loopback_dev(const struct net *net);

/* ---- Runtime: time ---- */
/* ktime_get_ns(): the monotonic clock in nanoseconds. */
u64 rrxe_ktime_get_ns(void);

/* ---- Runtime: soft hrtimers (relative, CLOCK_MONOTONIC, expiring in
 * softirq context) ---- */
void rrxe_hrtimer_setup_soft(struct hrtimer *timer,
			     enum hrtimer_restart (*fn)(struct hrtimer *));
/* hrtimer_start_range_ns(): expires between @ns and @ns + @slack_ns from now. */
void rrxe_hrtimer_start_soft(struct hrtimer *timer, u64 ns, u64 slack_ns);
bool rrxe_hrtimer_is_queued(struct hrtimer *timer);

/* memory access (dp-mem) */
struct page;
/* kmap_local_page() / kunmap_local(): map a page for the current context. */
void *rrxe_kmap_local_page(struct page *page);
void rrxe_kunmap_local(const void *addr);
/* The page of a linear-map address, or NULL unless virt_addr_valid(). */
struct page *rrxe_virt_to_page(unsigned long addr);
/* ib_umem_num_pages(). */
size_t rrxe_umem_num_pages(struct ib_umem *umem);
/* Stores up to @max of @umem's pinned pages, in order, into @pages;
 * returns how many were stored. */
size_t rrxe_umem_pages(struct ib_umem *umem, struct page **pages, size_t max);

/* ---- On-demand paging (struct ib_umem_odp) ---- */
struct ib_umem_odp;
struct mmu_interval_notifier;
struct mmu_interval_notifier_ops;
struct mmu_notifier_range;
/* IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING). */
bool rrxe_odp_enabled(void);
/* ib_umem_odp_get(); ERR_PTR(-EOPNOTSUPP) without ODP in the kernel. */
struct ib_umem_odp *rrxe_odp_get(struct ib_device *dev, u64 addr, size_t size,
				 int access,
				 const struct mmu_interval_notifier_ops *ops);
void rrxe_odp_release(struct ib_umem_odp *odp);
/*
 * ib_umem_odp_alloc_implicit(): the root of an implicit registration (the
 * whole address space of the calling process), with no range, no notifier
 * and no pages; ERR_PTR(-EOPNOTSUPP) without ODP in the kernel. The root
 * also holds a reference to the process's mm_struct (mmgrab), which the
 * core's root does not take: the children are created from it at fault
 * time (ib_umem_odp_alloc_child() calls mmget_not_zero() on it), possibly
 * after the process exited. Released with rrxe_odp_release_implicit().
 */
struct ib_umem_odp *rrxe_odp_alloc_implicit(struct ib_device *dev, int access);
void rrxe_odp_release_implicit(struct ib_umem_odp *root);
/*
 * ib_umem_odp_alloc_child(): an ODP umem over @addr..@addr+@len of the
 * root's process, with its own interval notifier (@ops) and page list, no
 * page mapped; released with rrxe_odp_release(). Process context.
 */
struct ib_umem_odp *rrxe_odp_alloc_child(struct ib_umem_odp *root, u64 addr,
					 u64 len,
					 const struct mmu_interval_notifier_ops *ops);
/*
 * Whether the root's process has a mapping (a VMA) that meets
 * @start..@end: false too if the process's address space is gone. Takes
 * its mmap_lock for reading. Process context.
 */
bool rrxe_odp_has_vma(struct ib_umem_odp *root, u64 start, u64 end);
/* Where an ODP umem lies: its pages from the page-aligned @base, and the
 * registration's own address and length. */
struct rrxe_odp_geometry {
	u64 base;
	size_t pages;
	unsigned int page_shift;
	u64 address;
	size_t length;
	bool writable;
};
void rrxe_odp_geometry(const struct ib_umem_odp *odp, struct rrxe_odp_geometry *g);
/*
 * ib_umem_odp_map_dma_and_lock(): faults @addr..@addr+@len in (for writing
 * if @write; only what is mapped already unless @fault) and, on success
 * (>= 0), returns with the umem's mutex held and its pfn list valid for
 * the range until that mutex is dropped.
 */
int rrxe_odp_map_and_lock(struct ib_umem_odp *odp, u64 addr, u64 len,
			  bool write, bool fault);
/* The page entry @idx of the pfn list names, if valid, and whether it may
 * be written; NULL if none. Under the umem's mutex. */
struct page *rrxe_odp_page(const struct ib_umem_odp *odp, size_t idx,
			   bool *writable);
/*
 * Whether the kernel can read the page where kmap_local_page() maps it:
 * not if it was taken out of the direct map (memfd_secret's pages, which
 * hmm_range_fault() returns as any other page; only GUP refuses them).
 * Reads one byte with copy_from_kernel_nofault(), which fails instead of
 * oopsing. The page must stay allocated during the call. Any context.
 */
bool rrxe_page_readable(struct page *page);
/* folio_mark_dirty() of the page's folio: what a device may have written
 * is written back (or kept), whatever its PTE says. Any context. */
void rrxe_odp_page_dirty(struct page *page);
/* The umem's mutex (umem_mutex). */
void rrxe_odp_lock(struct ib_umem_odp *odp);
void rrxe_odp_unlock(struct ib_umem_odp *odp);
/* ib_umem_odp_unmap_dma_pages(), under the umem's mutex. */
void rrxe_odp_unmap(struct ib_umem_odp *odp, u64 start, u64 end);
/* The umem of an interval notifier, in its invalidate callback. */
struct ib_umem_odp *rrxe_odp_of_notifier(struct mmu_interval_notifier *mni);
bool rrxe_mmu_range_blockable(const struct mmu_notifier_range *range);
void rrxe_mmu_range_bounds(const struct mmu_notifier_range *range, u64 *start,
			   u64 *end);
/* mmu_interval_set_seq(), under the umem's mutex. */
void rrxe_mmu_set_seq(struct mmu_interval_notifier *mni, unsigned long cur_seq);

void rrxe_synchronize_rcu(void);
/* cond_resched(): a long loop in process context lets other tasks run
 * (and RCU see a quiescent state) between its steps. May sleep. */
void rrxe_cond_resched(void);
/*
 * The receive path's SRCU domain (one per module, DEFINE_STATIC_SRCU): a
 * reader from a QP's lookup by number to the end of what it did with the
 * QP; destroy_qp waits for the readers that may have found the QP, with an
 * expedited SRCU grace period (no IPI, no wait for every CPU's quiescent
 * state, as an RCU grace period would).
 */
int rrxe_rx_read_lock(void);
void rrxe_rx_read_unlock(int idx);
void rrxe_rx_synchronize(void);

/* ---- Runtime: CPUs and BH work ---- */
/* raw_smp_processor_id(): a hint where preemption is on. */
unsigned int rrxe_this_cpu(void);
bool rrxe_cpu_online(unsigned int cpu);
/* The next online CPU after @cpu, wrapping around. */
unsigned int rrxe_next_online_cpu(unsigned int cpu);
struct work_struct;
/* queue_work_on(@cpu, system_bh_wq, @work): runs in softirq on @cpu. On this
 * CPU it only raises the softirq: from process context it runs when bottom
 * halves come back on, if the caller turned them off around this call
 * (QpInner::defer does), else at the next interrupt or in ksoftirqd. */
bool rrxe_queue_work_bh_on(unsigned int cpu, struct work_struct *work);
/* queue_work_on(@cpu, system_percpu_wq, @work): process context on @cpu. */
bool rrxe_queue_work_task_on(unsigned int cpu, struct work_struct *work);
/* local_bh_disable()/local_bh_enable(): a run in process context sees what
 * a softirq run sees (no preemption, no softirq on this CPU meanwhile). */
void rrxe_local_bh_disable(void);
void rrxe_local_bh_enable(void);
/* Whether local_bh_disable()/local_bh_enable() may be called here: not in a
 * hard interrupt or NMI, interrupts on (local_bh_enable() warns otherwise). */
bool rrxe_bh_may_disable(void);
/* rt::SpinLockBh, a spinlock whose holder keeps out what else takes it.
 * With @irq, interrupts off (spin_lock_irq_disable(): it nests), for a lock
 * that hard interrupts take too. Without, bottom halves off (spin_lock_bh()),
 * or nothing more where interrupts are off already (a caller under its own
 * irqsave lock: softirqs cannot run on this CPU meanwhile, and turning bottom
 * halves on there would warn); never in a hard interrupt or NMI then, where a
 * holder this CPU interrupted would never let go. Returns how the lock was
 * taken (RRXE_HELD_*), for the unlock. */
#define RRXE_HELD_PLAIN 0
#define RRXE_HELD_BH 1
#define RRXE_HELD_IRQ 2
int rrxe_spin_lock_held(spinlock_t *lock, bool irq);
void rrxe_spin_unlock_held(spinlock_t *lock, int held);

/* ---- Net: a bounded queue of received buffers ---- */
struct sk_buff_head;
void rrxe_rxq_init(struct sk_buff_head *q);
/* Queues @skb at the tail unless @q holds @limit buffers already: 1 if @q
 * was empty, 0 if not, -ENOBUFS (and @skb not queued) if it was full. */
int rrxe_rxq_push(struct sk_buff_head *q, struct sk_buff *skb, unsigned int limit);
/* Queues @skb at the head, whatever the queue holds (a datagram taken out
 * and put back, which must be taken first). */
void rrxe_rxq_push_head(struct sk_buff_head *q, struct sk_buff *skb);
struct sk_buff *rrxe_rxq_pop(struct sk_buff_head *q);
bool rrxe_rxq_empty(const struct sk_buff_head *q);
/* skb->cb: 48 bytes the buffer's owner may use. */
void *rrxe_skb_cb(struct sk_buff *skb);

/* The nest of driver attributes (RDMA_NLDEV_ATTR_DRIVER) in a resource
 * tracking message: opened (NULL if the message is full), closed, or
 * taken back with what was put in it. */
struct sk_buff;
struct nlattr;
struct nlattr *rrxe_nl_driver_nest_start(struct sk_buff *msg);
void rrxe_nl_nest_end(struct sk_buff *msg, struct nlattr *nest);
void rrxe_nl_nest_cancel(struct sk_buff *msg, struct nlattr *nest);

/* Fire rrxe's trace events (include/rrxe/trace.h; ffi/rrxe_trace.c). */
void rrxe_trace_rx(u32 dqpn, u8 opcode, u32 psn, u32 len);
void rrxe_trace_tx(u32 dqpn, u8 opcode, u32 psn, u32 len);
void rrxe_trace_drop(u32 dqpn, u8 opcode, u32 psn, u8 reason);
void rrxe_trace_nak(u32 dqpn, u32 psn, u8 syndrome, bool sent);
void rrxe_trace_retransmit(u32 qpn, u32 psn, u8 cause);
void rrxe_trace_rnr_wait(u32 qpn, u32 usecs);
void rrxe_trace_qp_state(u32 qpn, u8 from, u8 to);
void rrxe_trace_wc_error(u32 qpn, u8 status, u8 opcode);

#endif /* RRXE_HELPERS_H */
