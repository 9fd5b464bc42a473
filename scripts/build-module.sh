#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build rrxe.ko. Without KDIR: against the cached test kernel, inside the
# toolchain root. With KDIR=/path/to/a/rust-enabled/build/tree: against that
# tree with the toolchain on this machine (it must be the one that built it).
# Extra arguments go to make (e.g. CLIPPY=1, W=1).
#
# DROPIN=1 (in the environment, as `make DROPIN=1` passes it, or as an
# argument) builds the drop-in rdma_rxe.ko instead, next to rrxe.ko and from
# objects of its own (drivers/infiniband/sw/rrxe/Kbuild; Documentation/
# usage.rst, "Drop-in for rdma_rxe").
set -euo pipefail
. "$(dirname "$0")/lib.sh"

args=()
dropin=${DROPIN:-}
for a in "$@"; do
	case $a in
	DROPIN=*) dropin=${a#DROPIN=} ;;
	*) args+=("$a") ;;
	esac
done
case $dropin in
"" | 0) ;;
1) args+=(DROPIN=1) ;;
*) die "DROPIN=$dropin: say DROPIN=1 (or nothing)" ;;
esac
set -- ${args[@]+"${args[@]}"}

if [ -n "${KDIR:-}" ]; then
	[ -f "$KDIR/Module.symvers" ] || die "KDIR=$KDIR is not a built kernel tree (no Module.symvers)"
	grep -q '^CONFIG_RUST=y' "$KDIR/.config" || die "KDIR=$KDIR has no CONFIG_RUST=y"
	make -C "$KDIR" M="$RRXE_TOP" "$@" modules
	# The VM tests' tools, those this machine can build: -k goes on past
	# one that fails (rrxe_mpi needs Open MPI's mpicc, the others
	# libibverbs-dev and librdmacm-dev).
	make -s -k -C "$RRXE_TOP/tools/testing/xfer" ||
		note "not all of tools/testing/xfer built (rrxe_xfer and the others need libibverbs-dev, rrxe_mpi mpicc)"
	exit 0
fi
kdir=$(bash "$RRXE_TOP/scripts/build-kernel.sh" "${RRXE_FLAVOUR:-test}")
inroot make -C "$kdir" M="$RRXE_TOP" LLVM=1 "$@" modules
# The VM tests' userspace tools (tools/testing/xfer: rrxe_xfer for
# 12-lossy.sh and others, ..., rrxe_mpi for 23-userspace-stacks.sh): built
# with the root's gcc, libibverbs and Open MPI's mpicc, like the guest's.
inroot make -s -C "$RRXE_TOP/tools/testing/xfer"
