#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rustfmt every Rust source with the kernel's settings (the toolchain root's
# rustfmt, so results match the pinned compiler). --check only reports.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bash "$RRXE_TOP/scripts/mkroot.sh" >/dev/null
cd "$RRXE_TOP"
mapfile -t files < <(git ls-files -co --exclude-standard '*.rs' | grep -v bindings_generated)
inroot rustfmt --edition 2021 --config-path "$RRXE_TOP/.rustfmt.toml" "$@" "${files[@]}"
