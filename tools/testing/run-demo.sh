#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`: two hosts (network namespaces h1 and h2 joined by a veth
# pair), an rrxe device on each, shown as unmodified rdma-core sees them.
set -e
. "$RRXE_TOP/tools/testing/lib.sh"
two_hosts
insmod "$RRXE_KO"
ip netns exec h1 rdma link add rrxe1 type rrxe netdev veth1
ip netns exec h2 rdma link add rrxe2 type rrxe netdev veth2
echo "== rdma link"
rdma link show
echo "== ibv_devices"
ibv_devices
echo "== ibv_devinfo -v -d rrxe1"
ibv_devinfo -v -d rrxe1
echo "== a connected RC QP pair, one QP per namespace"
# Each side creates its QP, publishes its number and GID, then brings its QP
# to RTS against the other's; the data path (issue 4) will add traffic.
qp_side() {
	ip netns exec "$1" python3 - "$2" "$3" "$4" <<'PY'
import os, sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.addr import AHAttr, GlobalRoute
import pyverbs.enums as e
dev, me, peer = sys.argv[1:4]
ctx = Context(name=dev)
pd, cq = PD(ctx), CQ(ctx, 16)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap()))
gid = ctx.query_gid(1, 1)
with open(f"/tmp/{me}.tmp", "w") as f:
    f.write(f"{qp.qp_num} {gid}")
os.rename(f"/tmp/{me}.tmp", f"/tmp/{me}")
while not os.path.exists(f"/tmp/{peer}"):
    time.sleep(0.1)
pqpn, pgid = open(f"/tmp/{peer}").read().split()
a = QPAttr(port_num=1)
a.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
a.path_mtu, a.dest_qp_num, a.rq_psn, a.sq_psn = e.IBV_MTU_1024, int(pqpn), 0, 0
a.max_dest_rd_atomic = a.max_rd_atomic = 1
a.min_rnr_timer, a.timeout, a.retry_cnt, a.rnr_retry = 12, 14, 7, 7
from pyverbs.addr import GID
a.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(pgid), sgid_index=1), is_global=1, port_num=1)
qp.to_rts(a)
attr, _ = qp.query(e.IBV_QP_STATE | e.IBV_QP_DEST_QPN)
print(f"{dev}: QP {qp.qp_num} -> peer QP {attr.dest_qp_num}, state RTS={attr.qp_state == e.IBV_QPS_RTS}")
qp.close(); cq.close(); pd.close(); ctx.close()
PY
}
rm -f /tmp/qp-h1 /tmp/qp-h2
qp_side h1 rrxe1 qp-h1 qp-h2 &
side1=$!
qp_side h2 rrxe2 qp-h2 qp-h1
wait $side1
echo "(the data path arrives with issue 4; then this demo passes traffic)"
ip netns del h1
ip netns del h2
sleep 1
rmmod rrxe
