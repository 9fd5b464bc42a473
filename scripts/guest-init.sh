#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the test VM (see vm-run.sh). The root filesystem is the trixie
# toolchain root over 9p, read-only; this makes the few directories tests
# write to writable (tmpfs overlays), links the kernel's modules in, runs the
# command file named by rrxe_cmd= on the kernel command line, and powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=${TERM:-linux}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
# devtmpfs has no /dev/fd; bash's process substitution needs it.
ln -sfn /proc/self/fd /dev/fd
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

# Writable views of the read-only root, for what tests and tools write.
# Overlays, not empty tmpfs: the repo or the cache may live under any of
# them (a CI clone in /tmp, the cache in /root/.cache).
mkdir -p /run/ovl
for d in etc usr var root home tmp; do
	mkdir -p "/run/ovl/$d/upper" "/run/ovl/$d/work"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=/run/ovl/$d/upper,workdir=/run/ovl/$d/work" "/$d"
done
mkdir -p /run/netns /var/tmp

# Kernel modules of the running kernel (installed by vm-run.sh).
if [ -n "${rrxe_mods:-}" ]; then
	mkdir -p /usr/lib/modules
	ln -sfn "$rrxe_mods/lib/modules/$(uname -r)" "/usr/lib/modules/$(uname -r)"
fi

# vm-run.sh's RRXE_VM_OUT: a writable share at the same path as on the host.
if [ -n "${rrxe_out:-}" ]; then
	mkdir -p "$rrxe_out"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rrxeout "$rrxe_out"
fi

# libibverbs dlopens every provider /etc/libibverbs.d names, at every
# program start: under TCG with KASAN that is half of a tool's start-up
# (1.7 s of ibv_devices' 1.7 s, 0.8 s with rxe's alone, measured). Every
# device in the guest speaks rxe's ABI, so only rxe's provider stays.
for f in /etc/libibverbs.d/*.driver; do
	[ "$f" = /etc/libibverbs.d/rxe.driver ] || rm -f "$f"
done

hostname rrxe-vm
ip link set lo up

if [ -n "${rrxe_cmd:-}" ] && [ -f "$rrxe_cmd" ]; then
	bash "$rrxe_cmd"
else
	echo "rrxe VM: interactive shell; exit to power off."
	setsid bash -c 'exec bash -l </dev/ttyS0 >/dev/ttyS0 2>&1'
fi
sync
busybox poweroff -f
