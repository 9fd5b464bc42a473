#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The drop-in build (make DROPIN=1: rdma_rxe.ko from rrxe's sources, link
# type rxe) installed over the C rdma_rxe with `make DROPIN=1 install`, then
# driven exactly as blktests drives soft RoCE (common/multipath-over-rdma:
# start_soft_rdma and stop_soft_rdma): `modprobe rdma_rxe`, `rdma link add
# <netdev>_rxe type rxe netdev <netdev>` on every Ethernet netdev with
# carrier (a veth pair a0/b0 in the initial namespace), a verified
# transfer (rrxe_xfer) and NVMe-oF (tools/testing/nvmeof.sh, as
# 18-nvmeof) on a0_rxe talking to its own address, as blktests' nvme group
# runs, then `rdma link del` of every link and `modprobe -r rdma_rxe`.
#
# The loaded module and its devices are shown to be rrxe's: modinfo finds
# updates/rdma_rxe.ko with rrxe's description, its KUnit suites (named
# *_dropin) run at load, and each device's node description is "rrxe"
# where the C driver's says "rxe" (Documentation/usage.rst).
#
# The guest's /lib/modules/$(uname -r) is a symlink into the read-only
# root (scripts/guest-init.sh). The drop-in is installed into a writable
# overlay of that tree (INSTALL_MOD_PATH=), the symlink pointed at the
# overlay, and at the end pointed back: whatever runs next in this boot
# finds the C rdma_rxe again, which the script checks by loading it.
#
# $RRXE_XFER_BYTES (default 1 MiB) is moved per operation.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"
. "$RRXE_TOP/tools/testing/nvmeof.sh"

ko=$RRXE_TOP/drivers/infiniband/sw/rrxe/rdma_rxe.ko
bytes=${RRXE_XFER_BYTES:-$((1 << 20))}
rel=$(uname -r)
mods=/lib/modules/$rel
work=/run/rrxe-dropin
root=$work/root

if [ ! -f "$ko" ]; then
	not_ok "drop-in built"
	echo "# $ko is missing: make DROPIN=1 builds it (make check's build step does)"
	finish
fi
ok "drop-in built"
need_xfer

# The modules tree as booted: guest-init.sh's symlink into the read-only root.
booted=$(readlink "$mods")
if [ -z "$booted" ]; then
	not_ok "$mods is a symlink (scripts/guest-init.sh)"
	finish
fi
check "modprobe rdma_rxe would load the C driver before the install" \
	sh -c "modinfo -n rdma_rxe | grep -q '/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko$'"
[ -d /sys/module/rdma_rxe ] && modprobe -r rdma_rxe

# restore: the booted modules tree again, the C driver unloaded if loaded.
restore() {
	[ -d /sys/module/rdma_rxe ] && modprobe -r rdma_rxe 2>&1 | sed 's/^/# restore: /'
	ln -sfn "$booted" "$mods"
	mountpoint -q "$root$mods" && umount "$root$mods"
	rm -rf "$work"
}
trap restore EXIT

mkdir -p "$root$mods" "$work/upper" "$work/work"
check "a writable overlay of $mods" mount -t overlay overlay \
	-o "lowerdir=$booted,upperdir=$work/upper,workdir=$work/work" "$root$mods"
check "make DROPIN=1 install INSTALL_MOD_PATH=$root" \
	make -s -C "$RRXE_TOP" install DROPIN=1 INSTALL_MOD_PATH="$root" KREL="$rel"
ln -sfn "$root$mods" "$mods"

# --- Which rdma_rxe modprobe finds, and which one it loads.
check "modprobe rdma_rxe would load updates/rdma_rxe.ko" \
	sh -c "modinfo -n rdma_rxe | grep -q '/updates/rdma_rxe.ko$'"
check "its description is rrxe's" \
	sh -c "modinfo -F description rdma_rxe | grep -q 'rrxe, drop-in for rdma_rxe'"
check "the rdma-link-rxe alias names it" sh -c "modprobe -R rdma-link-rxe | grep -qx rdma_rxe"
check "modprobe rdma_rxe" modprobe rdma_rxe
check "rdma_rxe is loaded" grep -q '^rdma_rxe ' /proc/modules
check_kunit _dropin "rrxe's code is what loaded"

# --- blktests' start_soft_rdma: a device on every Ethernet netdev with
# carrier that has none yet, named <netdev>_rxe.
veth_pair
for _ in $(seq 50); do
	[ "$(cat /sys/class/net/a0/carrier 2>/dev/null)$(cat /sys/class/net/b0/carrier 2>/dev/null)" = 11 ] && break
	sleep 0.1
done
devs=()
for p in /sys/class/net/*; do
	i=${p##*/}
	[ "$i" = lo ] && continue
	[ "$(cat "/sys/class/net/$i/addr_len")" = 6 ] || continue
	[ "$(cat "/sys/class/net/$i/carrier" 2>/dev/null)" = 1 ] || continue
	rdma link | grep -q " netdev ${i}[[:blank:]]*\$" && continue
	check "rdma link add ${i}_rxe type rxe netdev $i" rdma link add "${i}_rxe" type rxe netdev "$i"
	devs+=("${i}_rxe")
done
check "a0_rxe and b0_rxe exist" sh -c "[ -e /sys/class/infiniband/a0_rxe ] && [ -e /sys/class/infiniband/b0_rxe ]"
for d in "${devs[@]}"; do
	check "$d: port ACTIVE" port_active "$d"
	check "$d: node description 'rrxe' (C rdma_rxe's devices say 'rxe')" \
		grep -qx rrxe "/sys/class/infiniband/$d/node_desc"
done
rdma link show | sed 's/^/# /'

# --- Traffic on a0_rxe to its own address, in the initial namespace as
# blktests has it (the packets go through lo). run_traffic runs its tools
# in named namespaces: "init" names the initial one. (Two devices of one
# namespace talking to each other is not something rdma_rxe does: it
# short-cuts a packet for a local address back into the sending device.)
check "the initial namespace named init (ip netns attach)" ip netns attach init 1
PAIR_NS1=init PAIR_NS2=init PAIR_IP2=$NVMEOF_ADDR
DEV1=a0_rxe DEV2=a0_rxe
GID1=$(roce_v2_ipv4_gid $DEV1) || echo "# setup: $DEV1 has no RoCEv2 IPv4 GID"
GID2=$GID1
if run_traffic dropin 240 "xfer: OK bytes=$((3 * bytes))" "$xfer" -t 220 -- -b "$bytes" -s 1; then
	ok "rrxe_xfer a0_rxe -> a0_rxe: $bytes bytes each of write/read/send verified (${TRAFFIC_SECS}s)"
else
	not_ok "rrxe_xfer a0_rxe -> a0_rxe"
fi
ip netns del init
DEV1= DEV2=

# record DRV CASE CMD...: nvmeof_cases' reporter, one ok/not ok line per
# case (CMD runs in this shell: it sets the controller's name).
record() {
	local c=$2 rc
	shift 2
	"$@" >"$nvtmp/out" 2>&1
	rc=$?
	grep '^# ' "$nvtmp/out"
	if [ $rc = 0 ]; then
		ok "NVMe-oF over a0_rxe: $c"
	else
		not_ok "NVMe-oF over a0_rxe: $c"
		grep -v '^# ' "$nvtmp/out" | tail -5 | sed 's/^/    /'
	fi
	return $rc
}
nvtmp=$(mktemp -d)
tmp=$nvtmp
head -c 4194304 /dev/urandom >"$tmp/pattern"
nvmeof_cases dropin
rm -rf "$nvtmp"

# --- blktests' stop_soft_rdma: every link deleted, then the module removed.
for i in $(rdma link | sed -n 's,^link[[:blank:]]*\([^/]*\)/.* netdev .*,\1,p'); do
	check "rdma link del $i" rdma link del "$i"
done
check "no RDMA device left" sh -c "! ls /sys/class/infiniband 2>/dev/null | grep -q ."
check "modprobe -r rdma_rxe" modprobe -r rdma_rxe
check "rdma_rxe is gone" sh -c "! grep -q '^rdma_rxe ' /proc/modules"

# --- Back to the booted tree: the C driver again, whose devices say "rxe".
trap - EXIT
restore
check "modprobe rdma_rxe would load the C driver again" \
	sh -c "modinfo -n rdma_rxe | grep -q '/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko$'"
check "modprobe rdma_rxe (the C driver)" modprobe rdma_rxe
check "rdma link add a0_rxe type rxe netdev a0 (the C driver)" rdma link add a0_rxe type rxe netdev a0
check "the C driver's device says node description 'rxe'" \
	grep -qx rxe /sys/class/infiniband/a0_rxe/node_desc
rdma link del a0_rxe 2>/dev/null
check "modprobe -r rdma_rxe (the C driver)" modprobe -r rdma_rxe
ip link del a0
rm -rf "$TRAFFIC_TMP"
finish
