#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the test or bench kernel inside the toolchain root and print
# its build directory. The tree is cached under $RRXE_CACHE keyed by the
# toolchain root, this script and the config fragments; an interrupted build
# resumes where it stopped, a finished one is reused as is.
#
# usage: build-kernel.sh [test|bench]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${1:-test}
frags=("$RRXE_TOP/scripts/kernel/common.config" "$RRXE_TOP/scripts/kernel/$flavour.config")
[ -f "${frags[1]}" ] || die "unknown kernel flavour '$flavour' (test or bench)"
KDIR=$(kernel_dir "$flavour")

if [ -f "$KDIR/.rrxe-complete" ]; then
	echo "$KDIR"
	exit 0
fi
[ -z "${RRXE_IN_ROOT:-}" ] && { bash "$RRXE_TOP/scripts/mkroot.sh" >/dev/null || exit 1; }

log="$RRXE_CACHE/kernel-$flavour.log"
jobs=$(($(nproc) + 1))
if [ ! -f "$KDIR/Makefile" ]; then
	note "unpacking linux-source-7.3 into $KDIR"
	rm -rf "$KDIR.unpack"
	mkdir -p "$KDIR.unpack"
	tar -C "$KDIR.unpack" -xf "$RRXE_ROOT/usr/src/linux-source-7.3.tar.xz" --strip-components=1 ||
		die "cannot unpack the kernel source"
	mv "$KDIR.unpack" "$KDIR"
fi

note "configuring the $flavour kernel (log: $log)"
inroot bash -c "
	set -e
	cd '$KDIR'
	virtme-configkernel --defconfig LLVM=1
	./scripts/kconfig/merge_config.sh -m .config ${frags[*]}
	make LLVM=1 olddefconfig
	make LLVM=1 rustavailable
" >"$log" 2>&1 || { tail -20 "$log" >&2; die "kernel configuration failed"; }

# merge_config only warns when a requested option does not stick; a kernel
# without Rust or without the debug options we promise is a silent lie.
missing=0
for frag in "${frags[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=n) opt=${line%%=*}; grep -q "^$opt=" "$KDIR/.config" && { note "$opt is set, wanted off"; missing=1; } ;;
		CONFIG_*=*) grep -qx "$line" "$KDIR/.config" || { note "$line did not stick"; missing=1; } ;;
		esac
	done <"$frag"
done
[ $missing = 0 ] || die "the $flavour kernel config is not what scripts/kernel/*.config asks for"

note "building the $flavour kernel with make -j$jobs (first time: 20-40 min; log: $log)"
start=$(date +%s)
inroot bash -c "cd '$KDIR' && make LLVM=1 -j$jobs bzImage modules" >>"$log" 2>&1 ||
	{ grep -E 'error|Error' "$log" | tail -20 >&2; die "kernel build failed (see $log)"; }
inroot bash -c "cd '$KDIR' && make LLVM=1 -s kernelrelease" >"$KDIR/.rrxe-release"
touch "$KDIR/.rrxe-complete"
note "the $flavour kernel took $(($(date +%s) - start)) s: $KDIR"
echo "$KDIR"
