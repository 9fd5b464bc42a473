// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe's trace events (include/rrxe/trace.h), created here, and the
 * wrappers the Rust side fires them through: a trace_*() call is a static
 * inline behind a static key, which Rust cannot reach. Each wrapper costs
 * a call when its event is off.
 */
#define CREATE_TRACE_POINTS
#include "rrxe/trace.h"
#include <rrxe/helpers.h>

void rrxe_trace_rx(u32 dqpn, u8 opcode, u32 psn, u32 len)
{
	trace_rrxe_rx(dqpn, opcode, psn, len);
}

void rrxe_trace_tx(u32 dqpn, u8 opcode, u32 psn, u32 len)
{
	trace_rrxe_tx(dqpn, opcode, psn, len);
}

void rrxe_trace_drop(u32 dqpn, u8 opcode, u32 psn, u8 reason)
{
	trace_rrxe_drop(dqpn, opcode, psn, reason);
}

void rrxe_trace_nak(u32 dqpn, u32 psn, u8 syndrome, bool sent)
{
	trace_rrxe_nak(dqpn, psn, syndrome, sent);
}

void rrxe_trace_retransmit(u32 qpn, u32 psn, u8 cause)
{
	trace_rrxe_retransmit(qpn, psn, cause);
}

void rrxe_trace_rnr_wait(u32 qpn, u32 usecs)
{
	trace_rrxe_rnr_wait(qpn, usecs);
}

void rrxe_trace_qp_state(u32 qpn, u8 from, u8 to)
{
	trace_rrxe_qp_state(qpn, from, to);
}

void rrxe_trace_wc_error(u32 qpn, u8 status, u8 opcode)
{
	trace_rrxe_wc_error(qpn, status, opcode);
}
