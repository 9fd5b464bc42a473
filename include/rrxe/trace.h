/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rrxe's trace events (Documentation/usage.rst, "Observing a device"):
 * packets received, sent and dropped (with the reason), NAKs sent and
 * received, retransmissions (with the cause), RNR waits, QP state changes
 * and completions in error. Defined here, created in
 * drivers/infiniband/sw/rrxe/ffi/rrxe_trace.c, fired through the
 * rrxe_trace_*() wrappers of helpers.h that the Rust side calls
 * (ffi/rt/trace.rs). Numbers only: the Rust side passes its enums' values,
 * printed here by name.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM RRXE_TRACE_SYSTEM

#if !defined(_RRXE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RRXE_TRACE_H

#include <linux/tracepoint.h>

/* Why a received packet was dropped (ffi/rt/trace.rs, DropReason). */
#define rrxe_show_drop(r)						\
	__print_symbolic(r, { 0, "malformed" }, { 1, "no_qp" },		\
			 { 2, "wrong_transport" }, { 3, "queue_full" },	\
			 { 4, "bad_icrc" }, { 5, "bad_pkey" },		\
			 { 6, "qp_state" }, { 7, "wrong_path" })

/* Why the requester sends again (ffi/rt/trace.rs, RetryCause). */
#define rrxe_show_retry(c)						\
	__print_symbolic(c, { 0, "timeout" }, { 1, "seq_nak" },		\
			 { 2, "read_gap" })

#define rrxe_show_qp_state(s)						\
	__print_symbolic(s, { 0, "RESET" }, { 1, "INIT" }, { 2, "RTR" },	\
			 { 3, "RTS" }, { 4, "SQD" }, { 5, "SQE" },	\
			 { 6, "ERR" })

#define rrxe_show_wc_status(s)						\
	__print_symbolic(s, { 1, "LOC_LEN_ERR" }, { 2, "LOC_QP_OP_ERR" },	\
			 { 4, "LOC_PROT_ERR" }, { 5, "WR_FLUSH_ERR" },	\
			 { 6, "MW_BIND_ERR" }, { 7, "BAD_RESP_ERR" },	\
			 { 8, "LOC_ACCESS_ERR" }, { 9, "REM_INV_REQ_ERR" }, \
			 { 10, "REM_ACCESS_ERR" }, { 11, "REM_OP_ERR" },	\
			 { 12, "RETRY_EXC_ERR" },			\
			 { 13, "RNR_RETRY_EXC_ERR" },			\
			 { 21, "GENERAL_ERR" })

DECLARE_EVENT_CLASS(rrxe_packet,
	TP_PROTO(u32 dqpn, u8 opcode, u32 psn, u32 len),
	TP_ARGS(dqpn, opcode, psn, len),
	TP_STRUCT__entry(
		__field(u32, dqpn)
		__field(u8, opcode)
		__field(u32, psn)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->dqpn = dqpn;
		__entry->opcode = opcode;
		__entry->psn = psn;
		__entry->len = len;
	),
	TP_printk("dqpn=%u opcode=0x%02x psn=0x%06x len=%u",
		  __entry->dqpn, __entry->opcode, __entry->psn, __entry->len)
);

/* A packet that passed the receive checks, handed to its QP. */
DEFINE_EVENT(rrxe_packet, rrxe_rx,
	TP_PROTO(u32 dqpn, u8 opcode, u32 psn, u32 len),
	TP_ARGS(dqpn, opcode, psn, len));

/* A packet handed to the IP stack (dqpn: the peer's QP). */
DEFINE_EVENT(rrxe_packet, rrxe_tx,
	TP_PROTO(u32 dqpn, u8 opcode, u32 psn, u32 len),
	TP_ARGS(dqpn, opcode, psn, len));

TRACE_EVENT(rrxe_drop,
	TP_PROTO(u32 dqpn, u8 opcode, u32 psn, u8 reason),
	TP_ARGS(dqpn, opcode, psn, reason),
	TP_STRUCT__entry(
		__field(u32, dqpn)
		__field(u8, opcode)
		__field(u32, psn)
		__field(u8, reason)
	),
	TP_fast_assign(
		__entry->dqpn = dqpn;
		__entry->opcode = opcode;
		__entry->psn = psn;
		__entry->reason = reason;
	),
	TP_printk("dqpn=%u opcode=0x%02x psn=0x%06x reason=%s",
		  __entry->dqpn, __entry->opcode, __entry->psn,
		  rrxe_show_drop(__entry->reason))
);

/* An RNR NAK or NAK, sent by the responder or received by the requester. */
TRACE_EVENT(rrxe_nak,
	TP_PROTO(u32 dqpn, u32 psn, u8 syndrome, bool sent),
	TP_ARGS(dqpn, psn, syndrome, sent),
	TP_STRUCT__entry(
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u8, syndrome)
		__field(bool, sent)
	),
	TP_fast_assign(
		__entry->dqpn = dqpn;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
		__entry->sent = sent;
	),
	TP_printk("%s dqpn=%u psn=0x%06x syndrome=0x%02x (%s)",
		  __entry->sent ? "sent" : "received", __entry->dqpn,
		  __entry->psn, __entry->syndrome,
		  (__entry->syndrome & 0xe0) == 0x20 ? "RNR NAK" :
		  (__entry->syndrome & 0xe0) == 0x60 ?
		  __print_symbolic(__entry->syndrome & 0x1f,
				   { 0, "PSN sequence error" },
				   { 1, "invalid request" },
				   { 2, "remote access error" },
				   { 3, "remote operational error" },
				   { 4, "invalid RD request" }) : "other")
);

TRACE_EVENT(rrxe_retransmit,
	TP_PROTO(u32 qpn, u32 psn, u8 cause),
	TP_ARGS(qpn, psn, cause),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, cause)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->cause = cause;
	),
	TP_printk("qpn=%u from psn=0x%06x cause=%s", __entry->qpn,
		  __entry->psn, rrxe_show_retry(__entry->cause))
);

TRACE_EVENT(rrxe_rnr_wait,
	TP_PROTO(u32 qpn, u32 usecs),
	TP_ARGS(qpn, usecs),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, usecs)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->usecs = usecs;
	),
	TP_printk("qpn=%u waits %u us", __entry->qpn, __entry->usecs)
);

TRACE_EVENT(rrxe_qp_state,
	TP_PROTO(u32 qpn, u8 from, u8 to),
	TP_ARGS(qpn, from, to),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u8, from)
		__field(u8, to)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("qpn=%u %s -> %s", __entry->qpn,
		  rrxe_show_qp_state(__entry->from),
		  rrxe_show_qp_state(__entry->to))
);

TRACE_EVENT(rrxe_wc_error,
	TP_PROTO(u32 qpn, u8 status, u8 opcode),
	TP_ARGS(qpn, status, opcode),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u8, status)
		__field(u8, opcode)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->status = status;
		__entry->opcode = opcode;
	),
	TP_printk("qpn=%u status=%s opcode=%u", __entry->qpn,
		  rrxe_show_wc_status(__entry->status), __entry->opcode)
);

#endif /* _RRXE_TRACE_H */

/* Outside the guard: define_trace.h reads the header again. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH rrxe
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
