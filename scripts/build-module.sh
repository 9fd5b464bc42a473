#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build rrxe.ko. Without KDIR: against the cached test kernel, inside the
# toolchain root. With KDIR=/path/to/a/rust-enabled/build/tree: against that
# tree with the toolchain on this machine (it must be the one that built it).
# Extra arguments go to make (e.g. CLIPPY=1, W=1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${KDIR:-}" ]; then
	[ -f "$KDIR/Module.symvers" ] || die "KDIR=$KDIR is not a built kernel tree (no Module.symvers)"
	grep -q '^CONFIG_RUST=y' "$KDIR/.config" || die "KDIR=$KDIR has no CONFIG_RUST=y"
	exec make -C "$KDIR" M="$RRXE_TOP" "$@" modules
fi
kdir=$(bash "$RRXE_TOP/scripts/build-kernel.sh" "${RRXE_FLAVOUR:-test}")
inroot make -C "$kdir" M="$RRXE_TOP" LLVM=1 "$@" modules
