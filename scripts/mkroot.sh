#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the Debian trixie root that holds the pinned toolchain:
# rustc 1.85.1 + rust-src, bindgen 0.71.1, clang/libclang 19, gcc 14,
# linux-source-7.3, QEMU + virtme-ng and the guest's rdma-core userspace.
# The root is cached under $RRXE_CACHE keyed by this script and the package
# list; an existing root is reused as is.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MIRROR=${RRXE_MIRROR:-http://deb.debian.org/debian}

[ -x "$RRXE_ROOT/usr/bin/rustc" ] && [ -f "$RRXE_ROOT/.rrxe-complete" ] && {
	echo "$RRXE_ROOT"
	exit 0
}
[ "$(id -u)" = 0 ] || die "building the toolchain root needs root (debootstrap, apt)"
command -v debootstrap >/dev/null || {
	note "installing debootstrap and bubblewrap on the host"
	apt-get install -y -qq debootstrap bubblewrap >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq debootstrap bubblewrap >/dev/null 2>&1; } ||
		die "cannot install debootstrap/bubblewrap on the host"
}
command -v bwrap >/dev/null || apt-get install -y -qq bubblewrap >/dev/null 2>&1 ||
	die "cannot install bubblewrap on the host"

tmp="$RRXE_ROOT.tmp"
log="$RRXE_CACHE/mkroot.log"
rm -rf "$tmp"
note "debootstrap trixie into $tmp (log: $log)"
debootstrap --variant=minbase --include=ca-certificates,apt-utils trixie "$tmp" "$MIRROR" >"$log" 2>&1 ||
	{ tail -5 "$log" >&2; die "debootstrap of trixie from $MIRROR failed (registry unreachable?)"; }

cat >"$tmp/etc/apt/sources.list" <<EOS
deb $MIRROR trixie main
deb $MIRROR trixie-updates main
deb $MIRROR trixie-backports main
EOS
# No documentation or recommends: smaller root, faster install; but keep the
# rdma-core test suite, which ships under /usr/share/doc.
cat >"$tmp/etc/apt/apt.conf.d/90rrxe" <<EOS
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Dpkg::Use-Pty "0";
EOS
echo 'wireshark-common wireshark-common/install-setuid boolean false' >"$tmp/tmp-debconf"

pkgs=$(cat "$RRXE_TOP/scripts/packages-toolchain.txt" "$RRXE_TOP/scripts/packages-guest.txt" | grep -v '^#' | grep -v '^$' | tr '\n' ' ')
RRXE_ROOT=$tmp inroot sh -c "debconf-set-selections /tmp-debconf 2>/dev/null || true" >>"$log" 2>&1 || true
note "installing $(echo "$pkgs" | wc -w) packages into the root"
RRXE_ROOT=$tmp inroot sh -c "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $pkgs" >>"$log" 2>&1 || {
	grep -E '^(E:|Err)' "$log" | tail -5 >&2
	die "installing the root's packages failed (see $log)"
}
rm -f "$tmp/tmp-debconf"
RRXE_ROOT=$tmp inroot sh -c 'apt-get clean' >/dev/null 2>&1 || true
touch "$tmp/.rrxe-complete"
rm -rf "$RRXE_ROOT"
mv "$tmp" "$RRXE_ROOT"
note "toolchain root ready: $RRXE_ROOT"
echo "$RRXE_ROOT"
