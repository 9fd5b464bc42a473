/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel API surface rrxe's Rust sys layer is generated from. Only the
 * items allowlisted in drivers/infiniband/sw/rrxe/bindgen_parameters are
 * turned into Rust.
 */
#ifndef RRXE_BINDINGS_H
#define RRXE_BINDINGS_H

#include <linux/crc32.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <linux/hrtimer.h>
#include <linux/if_ether.h>
#include <linux/notifier.h>
#include <linux/random.h>
#include <net/net_namespace.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <linux/mmu_notifier.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <linux/vmalloc.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdma_user_rxe.h>
#include <net/udp_tunnel.h>
#include <rrxe/helpers.h>

#endif /* RRXE_BINDINGS_H */
