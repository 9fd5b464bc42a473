# SPDX-License-Identifier: GPL-2.0
# Helpers for the VM test scripts in tools/testing/vm. Each assertion prints
# `ok - ...` or `not ok - ...`; the test runner counts them. A script exits
# non-zero if any assertion failed.

RRXE_FAILS=0

ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	RRXE_FAILS=$((RRXE_FAILS + 1))
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	local desc=$1
	shift
	local out
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc"
		echo "$out" | head -20 | sed 's/^/    /'
	fi
}

# check_fails DESCRIPTION ERRNO_TEXT COMMAND...: passes when COMMAND fails and
# its output mentions ERRNO_TEXT (e.g. "File exists").
check_fails() {
	local desc=$1 want=$2
	shift 2
	local out
	if out=$("$@" 2>&1); then
		not_ok "$desc (succeeded)"
	elif echo "$out" | grep -q "$want"; then
		ok "$desc"
	else
		not_ok "$desc (wanted '$want')"
		echo "$out" | head -5 | sed 's/^/    /'
	fi
}

# check_dmesg DESCRIPTION REGEX: the kernel log has a line matching REGEX.
check_dmesg() {
	check "$1" sh -c "dmesg | grep -Eq '$2'"
}

# The number of RDMA links of driver type rrxe (by device name prefix) or all.
link_count() { rdma link show 2>/dev/null | grep -c "^link ${1:-}"; }

# ibv_devinfo -v field of a device, e.g. devinfo_field rrxe0 state
devinfo_field() {
	ibv_devinfo -v -d "$1" | awk -v f="$2" '$1 == f":" { $1 = ""; sub(/^ /, ""); print; exit }'
}

load_rrxe() { insmod "$RRXE_KO"; }
unload_rrxe() { rmmod rrxe; }

# A veth pair a0 <-> b0 in the initial namespace, both up, with addresses.
veth_pair() {
	ip link add a0 type veth peer name b0
	ip addr add 198.18.0.1/24 dev a0
	ip addr add 198.18.0.2/24 dev b0
	ip link set a0 up
	ip link set b0 up
}

# gone NAME [TRIES]: waits until RDMA device NAME no longer exists, checking
# every 0.1 s, at most TRIES times (default 50, i.e. 5 s).
gone() {
	for _ in $(seq "${2:-50}"); do
		[ -e "/sys/class/infiniband/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

# Two hosts: network namespaces h1 and h2 joined by a veth pair (veth1 in
# h1 at 198.18.1.1, veth2 in h2 at 198.18.1.2), both up.
two_hosts() {
	ip netns add h1
	ip netns add h2
	ip link add veth1 netns h1 type veth peer name veth2 netns h2
	ip -n h1 addr add 198.18.1.1/24 dev veth1
	ip -n h2 addr add 198.18.1.2/24 dev veth2
	ip -n h1 link set veth1 up
	ip -n h2 link set veth2 up
}

finish() {
	if [ "$RRXE_FAILS" = 0 ]; then exit 0; fi
	exit 1
}

# port_active DEV: waits up to 10 s for port 1 of DEV to be ACTIVE.
port_active() {
	for _ in $(seq 100); do
		grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# setup CMD...: runs a setup step, its output as comments.
setup() { "$@" 2>&1 | sed 's/^/# setup: /'; return "${PIPESTATUS[0]}"; }

# rxe_and_rrxe REF DUT: a veth pair with an rdma_rxe device REF on a0 and
# an rrxe device DUT on b0. Problems are reported as comments.
rxe_and_rrxe() {
	veth_pair
	setup modprobe rdma_rxe || echo "# setup: modprobe rdma_rxe failed"
	setup load_rrxe || echo "# setup: insmod rrxe failed"
	setup rdma link add "$1" type rxe netdev a0 || echo "# setup: no $1"
	setup rdma link add "$2" type rrxe netdev b0 || echo "# setup: no $2"
}

# rxe_and_rrxe_teardown REF DUT: undoes rxe_and_rrxe; problems are comments.
rxe_and_rrxe_teardown() {
	rdma link delete "$2" 2>/dev/null
	rdma link delete "$1" 2>/dev/null
	rmmod rrxe 2>&1 | sed 's/^/# teardown: /'
	rmmod rdma_rxe 2>&1 | sed 's/^/# teardown: /'
	ip link del a0
}
