#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Loading and unloading the module; its KUnit suites run at load.
. "$RRXE_TOP/tools/testing/lib.sh"

check "module carries the rdma-link-rrxe alias (rdma link add autoloads it)" \
	sh -c "modinfo -F alias '$RRXE_KO' | grep -qx rdma-link-rrxe"
check "insmod rrxe" load_rrxe
check "module is loaded" grep -q '^rrxe ' /proc/modules
check "no device before a link is added" sh -c "! ls /sys/class/infiniband 2>/dev/null | grep -q ."
check_kunit
dmesg | grep -E '^\[.*\] +(# |ok |not ok ).*rrxe' | sed 's/^/    /'
check "rmmod rrxe" unload_rrxe
check "module is gone" sh -c "! grep -q '^rrxe ' /proc/modules"
finish
