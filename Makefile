# SPDX-License-Identifier: GPL-2.0
#
# rrxe developer entry points. Kbuild reads ./Kbuild, not this file, when it
# builds the module, so everything here is for people.
#
#   make            build rrxe.ko (first run: toolchain root + test kernel)
#   make DROPIN=1   build rdma_rxe.ko instead: the same sources as a drop-in
#                   for the C rdma_rxe (link type rxe), next to rrxe.ko
#   make install [DROPIN=1] [INSTALL_MOD_PATH=root] [KREL=release]
#                   the built module into root/lib/modules/KREL/updates, then
#                   depmod (KREL: the release it was built for)
#   make uninstall [DROPIN=1] ...   take it out again
#   make run        boot a VM, add rrxe devices on a veth pair, show them
#   make check      all tests: host unit tests, lint, VM tests
#   make vm         interactive shell in the test VM
#   make vm-run SCRIPT=path [ARGS=...]
#   make clippy     build with CLIPPY=1
#   make fmt        rustfmt the Rust sources
#   make bench      rdma_rxe vs rrxe perftest table (bench kernel) [ARGS="SECS LAT_ITERS REPEAT"]
#   make fuzz       wire fuzzing at scale: 1,000,000 mutated packets
#                   against rrxe's QPs (RRXE_FUZZ_PACKETS, RRXE_FUZZ_SEED)
#   make fuzz-verbs verbs fuzzing at scale: 800 sequences of random verbs
#                   on rrxe, then rdma_rxe (RRXE_FUZZ_VERBS, RRXE_FUZZ_SEED)
#   make soak       30 minutes of disturbed mixed traffic on rrxe (then 10 on
#                   rdma_rxe), memory back where it was (RRXE_SOAK_SECS, RRXE_SOAK_SEED)
#   make KDIR=/path/to/rust-enabled/kernel/build   build against your kernel

S := scripts

.PHONY: all modules install uninstall run check vm vm-run clippy fmt fmt-check test-host bench fuzz fuzz-verbs soak clean toolchain kernel

all modules:
	@bash $(S)/build-module.sh

# Installs what was built (it does not build, as modules_install).
install:
	@bash $(S)/install-module.sh

uninstall:
	@bash $(S)/install-module.sh --uninstall

toolchain:
	@bash $(S)/mkroot.sh >/dev/null

kernel:
	@bash $(S)/build-kernel.sh test

clippy:
	@bash $(S)/build-module.sh CLIPPY=1

run: modules
	@bash $(S)/vm-run.sh tools/testing/run-demo.sh

vm: modules
	@bash $(S)/vm-run.sh

vm-run: modules
	@test -n "$(SCRIPT)" || { echo "usage: make vm-run SCRIPT=path [ARGS=...]"; exit 2; }
	@bash $(S)/vm-run.sh $(SCRIPT) $(ARGS)

check:
	@bash $(S)/check.sh

# Developer-run: hours at most, kmemleak off (it halves the packet rate;
# make check's slice runs with it on).
fuzz: modules
	@RRXE_FUZZ_PACKETS=$${RRXE_FUZZ_PACKETS:-1000000} RRXE_FUZZ_TIMEOUT=$${RRXE_FUZZ_TIMEOUT:-14000} \
	RRXE_SCRIPT_TIMEOUT=15000 RRXE_VM_TIMEOUT=15500 RRXE_VM_APPEND=$${RRXE_VM_APPEND:-kmemleak=off} \
		bash $(S)/vm-run.sh tools/testing/vm/25-fuzz-wire.sh

# Developer-run: 100 times make check's sequences, kmemleak off as above.
fuzz-verbs: modules
	@RRXE_FUZZ_VERBS=$${RRXE_FUZZ_VERBS:-800} RRXE_FUZZ_TIMEOUT=$${RRXE_FUZZ_TIMEOUT:-7000} \
	RRXE_SCRIPT_TIMEOUT=15000 RRXE_VM_TIMEOUT=15500 RRXE_VM_APPEND=$${RRXE_VM_APPEND:-kmemleak=off} \
		bash $(S)/vm-run.sh tools/testing/vm/26-fuzz-verbs.sh

# Developer-run: 1800 s of rrxe-rrxe, 600 of the rxe-rxe control, kmemleak
# off as above (the soak checks slab and pinned pages itself; make check's
# two-phase slice runs with kmemleak on). A phase may overrun the deadline
# by its own length and the control's teardown can wait 50 s per leaked QP,
# hence the margin.
soak: modules
	@RRXE_SOAK_SECS=$${RRXE_SOAK_SECS:-1800} RRXE_SOAK_CONTROL_SECS=$${RRXE_SOAK_CONTROL_SECS:-600} \
	RRXE_SOAK_PHASE_SECS=$${RRXE_SOAK_PHASE_SECS:-60} RRXE_SOAK_XFER_BYTES=$${RRXE_SOAK_XFER_BYTES:-1048576} \
	RRXE_SCRIPT_TIMEOUT=4200 RRXE_VM_TIMEOUT=4500 RRXE_VM_APPEND=$${RRXE_VM_APPEND:-kmemleak=off} \
		bash $(S)/vm-run.sh tools/testing/soak.sh

test-host:
	@bash $(S)/check.sh host

fmt:
	@bash $(S)/fmt.sh

fmt-check:
	@bash $(S)/fmt.sh --check

bench:
	@bash $(S)/bench.sh $(ARGS)

clean:
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; \
	else bash -c '. $(S)/lib.sh; k=$$(kernel_dir test); \
		[ -d "$$k" ] && inroot make -C "$$k" M="$$RRXE_TOP" LLVM=1 clean || true'; fi
