#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make install` / `make uninstall`: put the built module into (or take it
# out of) INSTALL_MOD_PATH/lib/modules/KREL/updates and run depmod there, so
# that modprobe finds it. It installs what was built, it does not build:
# rrxe.ko, or with DROPIN=1 the drop-in rdma_rxe.ko, which depmod then
# prefers to the C driver's rdma_rxe.ko (updates/ comes before kernel/).
#
#   install-module.sh [--uninstall]
#
# Environment (make passes its command-line variables):
#   DROPIN=1          the drop-in rdma_rxe.ko instead of rrxe.ko
#   INSTALL_MOD_PATH  a root to install under (default /), as Kbuild's
#   KREL              the kernel release (default: the one the module was
#                     built for, from its vermagic)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case ${DROPIN:-} in
"" | 0) ko=$RRXE_KO_NORMAL built="make" ;;
1) ko=$RRXE_KO_DROPIN built="make DROPIN=1" ;;
*) die "DROPIN=$DROPIN: say DROPIN=1 (or nothing)" ;;
esac

[ "${1:-}" = --uninstall ] || [ -f "$ko" ] || die "$ko is not built: run $built first"

# The release the module was built for: the first word of its vermagic,
# read from its .modinfo strings (modinfo itself may be missing where the
# module was built).
krel=${KREL:-}
if [ -z "$krel" ]; then
	[ -f "$ko" ] || die "$ko is not built: say KREL= to uninstall it"
	krel=$(tr '\0' '\n' <"$ko" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p' | head -1)
	[ -n "$krel" ] || die "$ko has no vermagic: say KREL="
fi
command -v depmod >/dev/null || die "depmod not found (package kmod)"

root=${INSTALL_MOD_PATH:-}
dest=$root/lib/modules/$krel/updates
name=$(basename "$ko")

# depmod against the root: -b only when there is one, as Kbuild does.
run_depmod() {
	if [ -n "$root" ]; then
		depmod -b "$root" "$krel"
	else
		depmod "$krel"
	fi
}

if [ "${1:-}" = --uninstall ]; then
	rm -f "$dest/$name"
	run_depmod
	note "removed $dest/$name"
	exit 0
fi

[ -d "$root/lib/modules/$krel" ] || note "$root/lib/modules/$krel does not exist yet: creating it"
install -D -m 0644 "$ko" "$dest/$name"
run_depmod
note "installed $dest/$name"
if [ "$name" = rdma_rxe.ko ]; then
	note "modprobe rdma_rxe now loads rrxe's drop-in (rmmod the C rdma_rxe first if it is loaded);"
	note "make DROPIN=1 uninstall goes back to the C driver"
fi
