#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bad input to `rdma link add`: a clear errno, a line in the kernel log,
# nothing registered, nothing leaked (kmemleak runs after the script).
. "$RRXE_TOP/tools/testing/lib.sh"

veth_pair
load_rrxe
devices() { ls /sys/class/infiniband 2>/dev/null | wc -l; }

check_fails "unknown netdev: ENODEV" "No such device" rdma link add bad0 type rrxe netdev nosuch0

ip tuntap add dev tun0 mode tun
ip link set tun0 up
check_fails "tun (not Ethernet): EOPNOTSUPP" "Operation not supported" \
	rdma link add bad1 type rrxe netdev tun0
check_dmesg "kernel log says why (tun0)" 'rrxe: cannot add bad1 on tun0: not an Ethernet device'

if ip link add link a0 name a0.7 type vlan id 7 2>/dev/null; then
	check_fails "VLAN device: EPERM" "Operation not permitted" rdma link add bad2 type rrxe netdev a0.7
	check_dmesg "kernel log says why (VLAN)" 'rrxe: cannot add bad2 on a0.7: a VLAN device'
	ip link del a0.7
else
	echo "# skip - VLAN refusal: this kernel has no 802.1Q support"
fi
check "nothing registered after refusals" test "$(devices)" = 0

check "first link on a0" rdma link add rrxe0 type rrxe netdev a0
check_fails "second link on a0: EEXIST" "File exists" rdma link add rrxe1 type rrxe netdev a0
check_dmesg "kernel log says why (second link)" 'rrxe: cannot add rrxe1 on a0: it already has an rrxe device'
check_fails "name already taken: EEXIST" "File exists" rdma link add rrxe0 type rrxe netdev b0
check_dmesg "kernel log says why (name taken)" 'rrxe: cannot add rrxe0 on b0: the device name is already in use'
check "still exactly one device" test "$(devices)" = 1
check "b0 is still free for a link" rdma link add rrxe1 type rrxe netdev b0

# What the driver refuses fails cleanly, with EOPNOTSUPP (as rdma_rxe): an
# on-demand paging MR over huge pages (28-odp runs on-demand paging itself).
check "unsupported requests fail cleanly (on-demand paging MR over huge pages)" python3 - <<'PY'
import errno
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
import pyverbs.enums as e
ctx = Context(name="rrxe0")
pd = PD(ctx)
try:
    MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_ON_DEMAND | e.IBV_ACCESS_HUGETLB)
except PyverbsRDMAError as err:
    print("reg_mr(ON_DEMAND | HUGETLB):", err)
    assert err.error_code == errno.EOPNOTSUPP, err.error_code
else:
    raise SystemExit("an on-demand MR over huge pages was registered")
pd.close()
ctx.close()
PY

check "rmmod with devices present" unload_rrxe
check "all devices gone" test "$(devices)" = 0
ip link del tun0
ip link del a0
finish
