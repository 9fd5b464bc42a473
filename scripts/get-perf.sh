#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetches Debian trixie's `perf` and the libraries it needs that the
# toolchain root lacks, unpacked into $RRXE_CACHE/perf (not into the root:
# that would change the root's key and rebuild both kernels). The guest
# reaches the cache at its host path; `make bench` with BENCH_PERF=1 runs
# perf from there (LD_LIBRARY_PATH). Prints the directory.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dir=$RRXE_CACHE/perf
if [ -x "$dir/usr/bin/perf" ] && [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi
bash "$RRXE_TOP/scripts/mkroot.sh" >/dev/null || exit 1
debs=$RRXE_CACHE/perf-debs
mkdir -p "$debs"
rm -rf "$dir"
note "fetching linux-perf and its libraries into $dir"
inroot bash -c "
	set -e
	cd '$debs'
	apt-get download linux-perf libopencsd1 libdebuginfod1t64 libdw1t64 libunwind8 \
		libslang2 libbabeltrace1 libtraceevent1 libcurl3t64-gnutls libjson-c5 \
		libngtcp2-16 libngtcp2-crypto-gnutls8 2>&1 | grep -v '^W:' >&2 || true
	for f in *.deb; do dpkg-deb -x \"\$f\" '$dir'; done
	missing=\$(LD_LIBRARY_PATH='$dir/usr/lib/x86_64-linux-gnu' ldd '$dir/usr/bin/perf' | grep 'not found' || true)
	[ -z \"\$missing\" ] || { echo \"perf still lacks: \$missing\" >&2; exit 1; }
	LD_LIBRARY_PATH='$dir/usr/lib/x86_64-linux-gnu' '$dir/usr/bin/perf' --version >&2
" || die "could not set up perf in $dir"
touch "$dir/.complete"
echo "$dir"
