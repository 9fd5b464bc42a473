// SPDX-License-Identifier: GPL-2.0
/*
 * Wrappers for static inline kernel functions used by rrxe's Rust code.
 * See include/rrxe/helpers.h.
 */

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
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

/* memory access (dp-mem) */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>

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
