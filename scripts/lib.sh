# SPDX-License-Identifier: GPL-2.0
# Shared helpers for rrxe's build and test scripts. Source it; do not run it.

RRXE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RRXE_CACHE=${RRXE_CACHE:-$HOME/.cache/rrxe}
mkdir -p "$RRXE_CACHE"

# The module the normal build makes, and the drop-in (DROPIN=1) build's.
RRXE_KO_NORMAL=$RRXE_TOP/drivers/infiniband/sw/rrxe/rrxe.ko
RRXE_KO_DROPIN=$RRXE_TOP/drivers/infiniband/sw/rrxe/rdma_rxe.ko

die() { echo "rrxe: error: $*" >&2; exit 1; }
note() { echo "rrxe: $*" >&2; }

# Content key: a short hash over the named files (and any extra words), so
# that a cached artefact is rebuilt exactly when what produced it changes.
content_key() {
	local f
	{
		for f in "$@"; do
			if [ -f "$f" ]; then cat "$f"; else echo "$f"; fi
		done
	} | sha256sum | cut -c1-16
}

TOOLCHAIN_KEY=$(content_key "$RRXE_TOP/scripts/mkroot.sh" "$RRXE_TOP/scripts/packages-toolchain.txt")
ROOT_KEY=$(content_key "toolchain=$TOOLCHAIN_KEY" "$RRXE_TOP/scripts/packages-guest.txt")
RRXE_ROOT=${RRXE_ROOT:-$RRXE_CACHE/root-$ROOT_KEY}

# Run a command inside the trixie toolchain root. The repo and the cache are
# visible at the same paths as on the host, so paths printed inside make sense
# outside too.
inroot() {
	[ -d "$RRXE_ROOT/usr/bin" ] || die "toolchain root missing: run scripts/mkroot.sh"
	local cwd=$PWD ca=()
	# The host may reach registries through its own CA (cargo needs it).
	[ -f /etc/ssl/certs/ca-certificates.crt ] &&
		ca=(--ro-bind /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt)
	bwrap --bind "$RRXE_ROOT" / "${ca[@]}" \
		--dev-bind /dev /dev --proc /proc --ro-bind /sys /sys \
		--perms 01777 --tmpfs /tmp --tmpfs /run \
		--ro-bind /etc/resolv.conf /etc/resolv.conf \
		--bind "$RRXE_TOP" "$RRXE_TOP" \
		--bind "$RRXE_CACHE" "$RRXE_CACHE" \
		--setenv HOME /root --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin \
		--setenv RRXE_CACHE "$RRXE_CACHE" --setenv RRXE_ROOT / \
		--setenv RRXE_IN_ROOT 1 \
		--chdir "$cwd" "$@"
}

# The cached build tree of the test or bench kernel.
kernel_dir() {
	local flavour=$1
	local key
	key=$(content_key "$RRXE_TOP/scripts/build-kernel.sh" \
		"$RRXE_TOP/scripts/kernel/common.config" \
		"$RRXE_TOP/scripts/kernel/$flavour.config" "toolchain=$TOOLCHAIN_KEY")
	echo "$RRXE_CACHE/kernel-$flavour-$key"
}
