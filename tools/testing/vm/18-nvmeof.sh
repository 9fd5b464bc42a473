#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics on RDMA, the way blktests' nvme group drives soft-RoCE:
# one RDMA device on a netdev of the initial namespace (nvmet-rdma and
# nvme-rdma create their rdma_cm IDs there only) serving and connecting to
# its own address, so every capsule and every data transfer crosses the
# device's whole wire path. nvmet is set up through configfs (an RDMA port
# on 4420, a memory-backed null_blk namespace), the host connects through
# /dev/nvme-fabrics (what `nvme connect -t rdma` writes), then:
#   - concurrent O_DIRECT writes of 4 KiB, 128 KiB and 1 MiB blocks to
#     three regions, read back concurrently the same way, compared byte
#     for byte with what was written, and with what the target's null_blk
#     holds (so the data did cross);
#   - disconnect;
# and the same again (256 KiB or less) for each variant of
# tools/testing/nvmeof.sh (NVMEOF_VARIANTS): nvme-rdma register_always=N,
# nr_poll_queues=1 with polled I/O, param_inline_data_size=16384 on a second
# port with writes that fit it, `rdma link delete` under I/O in flight
# followed by the device added again and a new connection, and nvmet-rdma
# use_srq=1; then the target's teardown, module removal.
# It runs on rrxe first, then on rdma_rxe (the control: second, because
# nvmet-rdma can trip lockdep, which then stays off for the boot, see
# guest-run.sh); each case prints
# both results. A case fails if rrxe fails it; a control failure is shown
# next to it, so a bug of the ULP or of rdma_rxe is told apart from ours.
#
# usage: 18-nvmeof.sh [DRIVER...]   (default: rrxe rxe)
# RRXE_NVMEOF_VARIANTS="base use_srq=1 ..." runs only these variants;
# RRXE_NVMEOF_TIMING=1 prints how long each case took.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/nvmeof.sh"

drivers=${*:-rrxe rxe}
read -r -a variants <<<"${RRXE_NVMEOF_VARIANTS:-${NVMEOF_VARIANTS[*]}}"
tmp=$(mktemp -d)
declare -A res
cases=()

# record DRV CASE CMD...: runs CMD (in this shell: it may set variables) and
# keeps its result for the table; CMD's "# " lines are printed as they are.
record() {
	local drv=$1 c=$2 rc t0=$SECONDS
	shift 2
	[[ " ${cases[*]} " == *" $c "* ]] || cases+=("$c")
	"$@" >"$tmp/out" 2>&1
	rc=$?
	grep '^# ' "$tmp/out"
	[ -z "${RRXE_NVMEOF_TIMING:-}" ] || echo "# $drv: $c: $((SECONDS - t0)) s"
	if [ $rc = 0 ]; then
		res[$drv:$c]=ok
		return 0
	fi
	res[$drv:$c]="FAILED ($(grep -v '^# ' "$tmp/out" | tail -1 | tr -s '\t ' ' '))"
	grep -v '^# ' "$tmp/out" | tail -5 | sed "s/^/# $drv: $c: /"
	return 1
}

# run DRV: the whole sequence on an RDMA device of type DRV.
run() {
	local drv=$1 dev=nv$1
	echo "# --- $drv: $dev on a0 ($NVMEOF_ADDR), target and host on the same address"
	veth_pair
	case $drv in
	rxe) modprobe rdma_rxe ;;
	rrxe) load_rrxe ;;
	esac
	record $drv "device" rdma link add $dev type $drv netdev a0 &&
		record $drv "port ACTIVE" port_active $dev &&
		NVMEOF_DEV=$dev NVMEOF_TYPE=$drv NVMEOF_NETDEV=a0 nvmeof_cases $drv "${variants[@]}"
	rdma link delete $dev 2>/dev/null
	record $drv "device deleted" gone $dev 100
	case $drv in
	rxe) record $drv "driver unloaded" rmmod rdma_rxe ;;
	rrxe) record $drv "driver unloaded" unload_rrxe ;;
	esac
	ip link del a0
}

head -c 4194304 /dev/urandom >"$tmp/pattern"
for drv in $drivers; do run $drv; done

for c in "${cases[@]}"; do
	line="$c: rrxe ${res[rrxe:$c]:-not run}, rdma_rxe ${res[rxe:$c]:-not run}"
	if [[ " $drivers " != *" rrxe "* ]]; then
		echo "# $line"
	elif [ "${res[rrxe:$c]:-}" = ok ]; then
		ok "$line"
	else
		not_ok "$line"
	fi
done
rm -rf "$tmp"
finish
