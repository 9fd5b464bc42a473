#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Loading and unloading the module; its KUnit suite runs at load.
. "$RRXE_TOP/tools/testing/lib.sh"

check "module carries the rdma-link-rrxe alias (rdma link add autoloads it)" \
	sh -c "modinfo -F alias '$RRXE_KO' | grep -qx rdma-link-rrxe"
check "insmod rrxe" load_rrxe
check "module is loaded" grep -q '^rrxe ' /proc/modules
check "no device before a link is added" sh -c "! ls /sys/class/infiniband 2>/dev/null | grep -q ."
for suite in rrxe rrxe_net rrxe_rt; do
	check "KUnit suite $suite ran and passed" \
		sh -c "dmesg | grep -Eq '# $suite: pass:[1-9][0-9]* fail:0'"
done
dmesg | grep -E '^\[.*\] +(# |ok |not ok ).*rrxe' | sed 's/^/    /'
check "rmmod rrxe" unload_rrxe
check "module is gone" sh -c "! grep -q '^rrxe ' /proc/modules"
finish
