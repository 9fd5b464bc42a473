/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C wrappers for kernel static inline functions and macros that Rust cannot
 * call directly. Each one is a thin, obviously-correct shim; all logic lives
 * in Rust. Implemented in drivers/infiniband/sw/rrxe/rrxe_helpers.c.
 */
#ifndef RRXE_HELPERS_H
#define RRXE_HELPERS_H

#include <linux/types.h>

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

#endif /* RRXE_HELPERS_H */
