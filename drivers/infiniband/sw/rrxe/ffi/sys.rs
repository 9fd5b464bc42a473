// SPDX-License-Identifier: GPL-2.0

//! Raw FFI: the one place where rrxe touches the kernel's C API directly.
//!
//! `bindings_generated.rs` is produced at build time by bindgen from
//! `include/rrxe/bindings.h` against the headers of the kernel we build for
//! (see the module's `Kbuild`), so struct layouts always match that kernel.
//! The C helpers in `rrxe_helpers.c` wrap static inline functions. Only the
//! safe abstractions in [`crate::ffi::ib`] and [`crate::ffi::net`] (and the
//! rxe ABI bridge, [`crate::ffi::rxe_abi`]) use this module; it
//! re-exports just what they need, as drivers/gpu/nova-core does.

#[allow(
    clippy::all,
    missing_docs,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    improper_ctypes,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    dead_code,
    clippy::as_underscore,
    clippy::cast_lossless,
    clippy::ptr_as_ptr,
    clippy::ref_as_ptr,
    clippy::undocumented_unsafe_blocks
)]
mod raw {
    use kernel::ffi;
    use pin_init::{MaybeZeroable, Zeroable};

    // Blocklisted by the kernel's bindgen parameters; defined as rust/bindings does.
    type __kernel_size_t = usize;
    type __kernel_ssize_t = isize;
    type __kernel_ptrdiff_t = isize;

    // SAFETY: `__BindgenBitfieldUnit<Storage>` is a newtype around `Storage`, so it is
    // all-zeroes-valid exactly when `Storage` is.
    unsafe impl<Storage> Zeroable for __BindgenBitfieldUnit<Storage> where Storage: Zeroable {}

    include!("../bindings_generated.rs");
}

// Types.
pub(crate) use raw::{
    ib_ah, ib_atomic_wr, ib_cq, ib_cq_init_attr, ib_dmah, ib_event, ib_event__bindgen_ty_1, ib_gid,
    ib_grh, ib_mad, ib_mr, ib_mw, ib_pd, ib_qp, ib_qp_attr, ib_qp_cap, ib_qp_init_attr, ib_rdma_wr,
    ib_recv_wr, ib_reg_wr, ib_send_wr, ib_sge, ib_srq, ib_srq_attr, ib_srq_init_attr, ib_ud_wr,
    ib_umem, ib_uverbs_wc, ib_wc, mminfo, rdma_ah_attr, rdma_ah_init_attr, rdma_counter,
    rdma_hw_stats, rdma_stat_desc, rdma_user_mmap_entry, rxe_create_ah_resp, rxe_create_cq_resp,
    rxe_create_qp_resp, rxe_create_srq_resp, rxe_modify_srq_cmd, rxe_recv_wqe, rxe_resize_cq_resp,
    rxe_send_wqe, rxe_sge, scatterlist, uverbs_attr_bundle, vm_area_struct,
};
pub(crate) use raw::{
    ib_device, ib_device_attr, ib_device_modify, ib_device_ops, ib_port_attr, ib_port_immutable,
    ib_port_modify, ib_ucontext, ib_udata, net, net_device, notifier_block, pernet_operations,
    rdma_link_ops,
};

// Functions.
pub(crate) use raw::{
    ib_dealloc_device, ib_device_get_by_netdev, ib_device_put, ib_get_eth_speed,
    ib_register_device, ib_set_device_ops, ib_unregister_device, ib_unregister_device_queued,
    rdma_link_register, rdma_link_unregister, register_netdevice_notifier, register_pernet_device,
    unregister_netdevice_notifier, unregister_pernet_device,
};

pub(crate) use raw::{
    ib_sg_to_pages, ib_umem_release, rdma_alloc_hw_stats_struct, rdma_user_mmap_entry_get,
    rdma_user_mmap_entry_insert, rdma_user_mmap_entry_put, rdma_user_mmap_entry_remove,
    remap_vmalloc_range, vfree,
};

// C helpers (rrxe_helpers.c).
pub(crate) use raw::{
    rrxe_attrs_udata, rrxe_copy_to_user, rrxe_mmap_offset, rrxe_udata_read, rrxe_udata_respond,
    rrxe_udata_ucontext, rrxe_umem_get, rrxe_vma_len, rrxe_vmalloc_user,
};
pub(crate) use raw::{
    rrxe_dispatch_port_event, rrxe_eui48, rrxe_ib_alloc_device, rrxe_ib_device_get_dev,
    rrxe_ib_device_name, rrxe_ib_device_put_dev, rrxe_ib_device_try_get,
    rrxe_netdev_from_notifier_info, rrxe_netdev_hold, rrxe_netdev_is_ether,
    rrxe_netdev_is_registered, rrxe_netdev_is_up, rrxe_netdev_is_vlan, rrxe_netdev_mac,
    rrxe_netdev_mtu, rrxe_netdev_name, rrxe_netdev_net, rrxe_netdev_port_state, rrxe_netdev_put,
    rrxe_num_possible_cpus, rrxe_random_mac, rrxe_rtnl_lock, rrxe_rtnl_unlock,
};

// The UDP data path (net/) and the runtime helpers (rt/).
pub(crate) use raw::{
    cancel_work_sync, dev_mc_add, dev_mc_del, flush_work, udp_tunnel_sock_release,
};
pub(crate) use raw::{dst_entry, sk_buff, sock, socket, work_struct, ETH_HLEN};
pub(crate) use raw::{
    hrtimer, hrtimer_cancel, hrtimer_restart, hrtimer_try_to_cancel, rrxe_hrtimer_is_queued,
    rrxe_hrtimer_setup_soft, rrxe_hrtimer_start_soft, rrxe_ktime_get_ns, HRTIMER_NORESTART,
};
pub(crate) use raw::{
    rrxe_bh_may_disable, rrxe_cpu_online, rrxe_local_bh_disable, rrxe_local_bh_enable,
    rrxe_next_online_cpu, rrxe_queue_work_bh_on, rrxe_queue_work_task_on, rrxe_rxq_empty,
    rrxe_rxq_init, rrxe_rxq_pop, rrxe_rxq_push, rrxe_rxq_push_head, rrxe_skb_cb,
    rrxe_spin_lock_held, rrxe_spin_unlock_held, rrxe_this_cpu, sk_buff_head, spinlock_t,
    RRXE_HELD_BH, RRXE_HELD_IRQ, RRXE_HELD_PLAIN,
};
pub(crate) use raw::{
    rrxe_dst_cookie, rrxe_dst_hold, rrxe_dst_keepable, rrxe_dst_release, rrxe_dst_valid,
    rrxe_init_net, rrxe_ip_local_out, rrxe_ip_select_ident, rrxe_net_loopback_dev,
    rrxe_netdev_has_addr, rrxe_netdev_ifindex, rrxe_netdev_is_loopback, rrxe_route4, rrxe_route6,
    rrxe_sk_user_data, rrxe_skb_alloc, rrxe_skb_consume, rrxe_skb_data, rrxe_skb_free,
    rrxe_skb_headroom, rrxe_skb_len, rrxe_skb_push_network, rrxe_skb_push_transport, rrxe_skb_rx,
    rrxe_skb_rx_view, rrxe_skb_set_route, rrxe_udp_tunnel_open,
};
pub(crate) use raw::{
    rrxe_skb_set_owner, rrxe_tx_sock_cmpxchg_owner, rrxe_tx_sock_create, rrxe_tx_sock_owner,
    rrxe_tx_sock_release, rrxe_tx_sock_wmem, rrxe_tx_sock_xchg_owner,
};

// Constants of the data path.
pub(crate) use raw::{
    IB_EVENT_SRQ_LIMIT_REACHED, IB_WC_ATOMIC_WRITE, IB_WC_BAD_RESP_ERR, IB_WC_BIND_MW,
    IB_WC_COMP_SWAP, IB_WC_FETCH_ADD, IB_WC_FLUSH, IB_WC_GRH, IB_WC_LOCAL_INV, IB_WC_LOC_LEN_ERR,
    IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR, IB_WC_MW_BIND_ERR, IB_WC_RDMA_READ, IB_WC_RDMA_WRITE,
    IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM, IB_WC_REG_MR, IB_WC_REM_ACCESS_ERR,
    IB_WC_REM_INV_REQ_ERR, IB_WC_REM_OP_ERR, IB_WC_RETRY_EXC_ERR, IB_WC_RNR_RETRY_EXC_ERR,
    IB_WC_SEND, IB_WC_SUCCESS, IB_WC_WITH_IMM, IB_WC_WITH_INVALIDATE, IB_WC_WITH_NETWORK_HDR_TYPE,
    RDMA_NETWORK_IPV4, RDMA_NETWORK_IPV6,
};
pub(crate) use raw::{
    IB_SEND_INLINE, IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD, IB_WR_ATOMIC_WRITE,
    IB_WR_BIND_MW, IB_WR_FLUSH, IB_WR_LOCAL_INV, IB_WR_LSO, IB_WR_RDMA_READ,
    IB_WR_RDMA_READ_WITH_INV, IB_WR_RDMA_WRITE, IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_REG_MR,
    IB_WR_SEND, IB_WR_SEND_WITH_IMM, IB_WR_SEND_WITH_INV,
};

// Constants.
pub(crate) use raw::{
    IBK_ALLOW_USER_UNREG, IB_AH_GRH, IB_ATOMIC_HCA, IB_CQ_NEXT_COMP, IB_CQ_REPORT_MISSED_EVENTS,
    IB_CQ_SOLICITED_MASK, IB_DEFAULT_PKEY_FULL, IB_DEVICE_ATOMIC_WRITE, IB_DEVICE_AUTO_PATH_MIG,
    IB_DEVICE_BAD_PKEY_CNTR, IB_DEVICE_BAD_QKEY_CNTR, IB_DEVICE_CHANGE_PHY_PORT,
    IB_DEVICE_FLUSH_GLOBAL, IB_DEVICE_FLUSH_PERSISTENT, IB_DEVICE_MEM_MGT_EXTENSIONS,
    IB_DEVICE_MEM_WINDOW, IB_DEVICE_MEM_WINDOW_TYPE_2B, IB_DEVICE_MODIFY_NODE_DESC,
    IB_DEVICE_MODIFY_SYS_IMAGE_GUID, IB_DEVICE_PORT_ACTIVE_EVENT, IB_DEVICE_RC_RNR_NAK_GEN,
    IB_DEVICE_SRQ_RESIZE, IB_DEVICE_SYS_IMAGE_GUID, IB_DEVICE_UD_AV_PORT_ENFORCE, IB_EVENT_CQ_ERR,
    IB_EVENT_PORT_ACTIVE, IB_EVENT_PORT_ERR, IB_EVENT_QP_LAST_WQE_REACHED, IB_EVENT_SQ_DRAINED,
    IB_GID_TYPE_ROCE_UDP_ENCAP, IB_LINK_LAYER_ETHERNET, IB_MGMT_MAD_SIZE, IB_MR_REREG_PD,
    IB_MR_TYPE_MEM_REG, IB_MTU_256, IB_MTU_4096, IB_MW_TYPE_1, IB_MW_TYPE_2, IB_PORT_ACTIVE,
    IB_PORT_CM_SUP, IB_PORT_DOWN, IB_PORT_PHYS_STATE_DISABLED, IB_PORT_PHYS_STATE_LINK_UP,
    IB_PORT_PHYS_STATE_POLLING, IB_PORT_RESET_QKEY_CNTR, IB_QPT_GSI, IB_QPT_UD, IB_SIGNAL_ALL_WR,
    IB_SIGNAL_REQ_WR, IB_SRQT_BASIC, IB_SRQ_LIMIT, IB_SRQ_MAX_WR, IB_USER_VERBS_CMD_POST_SEND,
    IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, IB_WC_WR_FLUSH_ERR, IB_WIDTH_1X, NETDEV_CHANGE,
    NETDEV_CHANGEMTU, NETDEV_DOWN, NETDEV_UNREGISTER, NETDEV_UP, NOTIFY_DONE,
    RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP, RDMA_CREATE_AH_SLEEPABLE, RDMA_DRIVER_RXE,
    RDMA_HW_STATS_DEFAULT_LIFESPAN, RDMA_NODE_IB_CA,
};

// Only the KUnit tests name it.
#[cfg(CONFIG_KUNIT)]
pub(crate) use raw::IB_MR_TYPE_SG_GAPS;

// On-demand paging (ib/odp.rs).
pub(crate) use raw::{
    ib_umem_odp, mmu_interval_notifier, mmu_interval_notifier_ops, mmu_notifier_range,
    rrxe_mmu_range_blockable, rrxe_mmu_range_bounds, rrxe_mmu_set_seq, rrxe_odp_enabled,
    rrxe_odp_geometry, rrxe_odp_get, rrxe_odp_lock, rrxe_odp_map_and_lock, rrxe_odp_of_notifier,
    rrxe_odp_page, rrxe_odp_page_dirty, rrxe_odp_release, rrxe_odp_unlock, rrxe_odp_unmap,
    rrxe_page_readable,
};
pub(crate) use raw::{
    rrxe_odp_alloc_child, rrxe_odp_alloc_implicit, rrxe_odp_has_vma, rrxe_odp_release_implicit,
};
pub(crate) use raw::{
    IBK_ON_DEMAND_PAGING, IB_ODP_SUPPORT, IB_ODP_SUPPORT_ATOMIC, IB_ODP_SUPPORT_ATOMIC_WRITE,
    IB_ODP_SUPPORT_FLUSH, IB_ODP_SUPPORT_IMPLICIT, IB_ODP_SUPPORT_READ, IB_ODP_SUPPORT_RECV,
    IB_ODP_SUPPORT_SEND, IB_ODP_SUPPORT_SRQ_RECV, IB_ODP_SUPPORT_WRITE,
    IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
    IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
};

// memory access (dp-mem)
pub(crate) use raw::{
    page, rrxe_kmap_local_page, rrxe_kunmap_local, rrxe_umem_num_pages, rrxe_umem_pages,
    rrxe_virt_to_page,
};

// RCU, rescheduling, CRC-32 and the random number generator.
pub(crate) use raw::{
    crc32_le, get_random_u32, rrxe_cond_resched, rrxe_rx_read_lock, rrxe_rx_read_unlock,
    rrxe_rx_synchronize, rrxe_synchronize_rcu,
};

// The trace events (ffi/rt/trace.rs).
pub(crate) use raw::{
    rrxe_trace_drop, rrxe_trace_nak, rrxe_trace_qp_state, rrxe_trace_retransmit,
    rrxe_trace_rnr_wait, rrxe_trace_rx, rrxe_trace_tx, rrxe_trace_wc_error,
};

// Resource tracking's driver attributes (ib/restrack.rs).
pub(crate) use raw::{
    rdma_nl_put_driver_u32, rdma_nl_put_driver_u32_hex, rdma_nl_put_driver_u64,
    rrxe_nl_driver_nest_start, rrxe_nl_nest_cancel, rrxe_nl_nest_end,
};

// The QP states and types, and the port speed, `logic` and `ib` name
// (checked in rxe_abi/numbers.rs, used in ib/port_attr.rs).
pub(crate) use raw::{
    IB_QPS_ERR, IB_QPS_INIT, IB_QPS_RESET, IB_QPS_RTR, IB_QPS_RTS, IB_QPS_SQD, IB_QPS_SQE,
    IB_QPT_RC, IB_QPT_SMI, IB_QPT_UC, IB_SPEED_SDR,
};
