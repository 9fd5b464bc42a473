# SPDX-License-Identifier: GPL-2.0
# Helpers for the VM test scripts in tools/testing/vm. Each assertion prints
# `ok - ...` or `not ok - ...`; the test runner counts them. A script exits
# non-zero if any assertion failed.

RRXE_FAILS=0

# sleep SECONDS: bash's own read with a timeout, on a pipe nothing ever
# writes to, instead of /usr/bin/sleep. On the debug kernel under TCG a fork
# and exec costs 0.1-0.3 s of CPU (Documentation/testing.rst, "Where the
# time goes"), which a polling loop paid at every turn, competing with what
# it waited for. The pipe is opened once, read-write, so it never sees EOF.
if [ -z "${RRXE_SLEEP_FD:-}" ]; then
	exec {RRXE_SLEEP_FD}<> <(:)
fi
sleep() { read -r -t "$1" -u "$RRXE_SLEEP_FD" _ || :; }

ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	RRXE_FAILS=$((RRXE_FAILS + 1))
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	local desc=$1
	shift
	local out
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc"
		echo "$out" | head -20 | sed 's/^/    /'
	fi
}

# check_fails DESCRIPTION ERRNO_TEXT COMMAND...: passes when COMMAND fails and
# its output mentions ERRNO_TEXT (e.g. "File exists").
check_fails() {
	local desc=$1 want=$2
	shift 2
	local out
	if out=$("$@" 2>&1); then
		not_ok "$desc (succeeded)"
	elif echo "$out" | grep -q "$want"; then
		ok "$desc"
	else
		not_ok "$desc (wanted '$want')"
		echo "$out" | head -5 | sed 's/^/    /'
	fi
}

# check_dmesg DESCRIPTION REGEX: the kernel log has a line matching REGEX.
check_dmesg() {
	check "$1" sh -c "dmesg | grep -Eq '$2'"
}

# The module's KUnit suites, each with its number of test cases. Each suite
# is the `#[kunit_tests]` module of one source file, named after its path
# (mem/mr.rs: rrxe_mem_mr); the drop-in build adds `_dropin` to every name
# (Documentation/testing.rst, "KUnit"). A test added to the driver is
# counted here. KUnit prints a one-case suite's "pass:1" line only because
# vm-run.sh boots with kunit.stats_enabled=2.
RRXE_KUNIT_SUITES="rrxe_rxe_abi_icrc:1 rrxe_ib:1 rrxe_ib_odp:1 rrxe_dev_params:2 rrxe_dev_counters:3
	rrxe_dev_irq_table:1 rrxe_mem_mr:6 rrxe_mem_mw:1 rrxe_net_skb:2 rrxe_net_udp_tunnel:3 rrxe_net_route:3
	rrxe_rt_time:1 rrxe_rt_work:1 rrxe_rt_timer:3 rrxe_rt_array:2 rrxe_rt_lock:1"

# check_kunit [SUFFIX [NOTE]]: every suite of RRXE_KUNIT_SUITES, its name
# ending in SUFFIX, ran when the module loaded and passed all its cases.
check_kunit() {
	local entry suite n
	for entry in $RRXE_KUNIT_SUITES; do
		suite=${entry%:*}${1:-}
		n=${entry#*:}
		check_dmesg "KUnit suite $suite ran and passed ($n cases)${2:+ ($2)}" \
			"# $suite: pass:$n fail:0"
	done
}

# The number of RDMA links of driver type rrxe (by device name prefix) or all.
link_count() { rdma link show 2>/dev/null | grep -c "^link ${1:-}"; }

# ibv_devinfo -v field of a device, e.g. devinfo_field rrxe0 state
devinfo_field() {
	ibv_devinfo -v -d "$1" | awk -v f="$2" '$1 == f":" { $1 = ""; sub(/^ /, ""); print; exit }'
}

# rrxe's UDP tunnel sockets need udp_tunnel and ip6_udp_tunnel (modules in
# the test kernel); insmod does not load dependencies, modprobe does.
load_rrxe() {
	modprobe -a udp_tunnel ip6_udp_tunnel 2>/dev/null
	insmod "$RRXE_KO" && kmsg_mark "rrxe loaded"
}
unload_rrxe() { rmmod rrxe && kmsg_mark "rrxe unloaded"; }

# kmsg_mark TEXT: "rrxe-test: TEXT" in the kernel log. guest-run.sh lists a
# known ULP KASAN report as a note only after "rrxe unloaded".
kmsg_mark() { echo "rrxe-test: $*" >/dev/kmsg; }

# A veth pair a0 <-> b0 in the initial namespace, both up, with addresses.
veth_pair() {
	ip link add a0 type veth peer name b0
	ip addr add 198.18.0.1/24 dev a0
	ip addr add 198.18.0.2/24 dev b0
	ip link set a0 up
	ip link set b0 up
}

# The polls below (gone, port_active, wait_for) are bounded in wall time, at
# three times their nominal bound: the bounds were chosen when every turn
# of a poll also started /usr/bin/sleep, which on the debug kernel under
# TCG made a turn two to three times its nap, and some waits need that
# time (15-netdev-events: a device under a running transfer unregisters
# once its process has exited, 20-31 s after the netdev went).
POLL_SLACK=3

# poll TENTHS NAP CMD...: runs CMD every NAP seconds until it succeeds;
# fails once TENTHS tenths of a second of wall time have passed. No process
# of its own (sleep above, EPOCHREALTIME).
poll() {
	local end=$((${EPOCHREALTIME/./} + $1 * 100000)) nap=$2
	shift 2
	until "$@"; do
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || return 1
		sleep "$nap"
	done
}

# absent PATH, not CMD...: for polls, without a shell process per turn.
absent() { [ ! -e "$1" ]; }
not() { ! "$@"; }

# matches ERE FILE: a line of FILE matches the extended regular expression
# ERE (`grep -Eq ERE FILE` without a process, for polls).
matches() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line =~ $1 ]] && return 0
	done 2>/dev/null <"$2"
	return 1
}

# gone NAME [TRIES]: waits until RDMA device NAME no longer exists, checking
# every 0.1 s, for TRIES tenths of a second (default 50, i.e. 5 s) times
# POLL_SLACK.
gone() { poll $((${2:-50} * POLL_SLACK)) 0.1 absent "/sys/class/infiniband/$1"; }

# orphans_go NS...: the TCP connections the tools' processes closed in NS
# (orphans) end soon: one more try of their FIN, one second of FIN_WAIT2.
# An orphan whose peer vanished (the link deleted) otherwise sends its FIN
# again tcp_orphan_retries times (0: eight, with backoff, about 100 s), and
# its socket holds the namespace: `ip netns del` left the exit (and
# netns_del_wait) waiting 70-105 s in each pairing of 15-netdev-events.
# Only where a namespace is about to go, or its link: with one retry
# from the start, a tool's FIN sent during 15's second of link down was
# lost for good and its peer never saw the end of the connection. Read by
# the kernel at an orphan's next retransmission.
orphans_go() {
	local ns
	for ns; do
		ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_orphan_retries=1 net.ipv4.tcp_fin_timeout=1 2>/dev/null ||
			echo "# teardown: $ns: the TCP orphan settings failed"
	done
}

# two_hosts [NS1 NS2 NET]: two hosts, network namespaces NS1 and NS2
# (default h1 and h2) joined by a veth pair: veth1 in NS1 at 198.18.NET.1,
# veth2 in NS2 at 198.18.NET.2 (NET default 1), both up, and lo up in both
# (see ns_veth_pair: a device's packets to itself arrive on lo).
two_hosts() {
	local n1=${1:-h1} n2=${2:-h2} net=${3:-1}
	ip netns add "$n1"
	ip netns add "$n2"
	ip link add veth1 netns "$n1" type veth peer name veth2 netns "$n2"
	# One `ip` a namespace (-force: every line, as separate commands would).
	ip -n "$n1" -force -batch - <<-EOF
		addr add 198.18.$net.1/24 dev veth1
		link set veth1 up
		link set lo up
	EOF
	ip -n "$n2" -force -batch - <<-EOF
		addr add 198.18.$net.2/24 dev veth2
		link set veth2 up
		link set lo up
	EOF
}

finish() {
	if [ "$RRXE_FAILS" = 0 ]; then exit 0; fi
	exit 1
}

# port_is_active DEV: port 1 of DEV is ACTIVE now (no process started).
port_is_active() {
	local state
	read -r state 2>/dev/null <"/sys/class/infiniband/$1/ports/1/state" &&
		[[ $state == *ACTIVE* ]]
}

# port_active DEV: waits up to 10 s (times POLL_SLACK) for port 1 of DEV to
# be ACTIVE.
port_active() { poll $((100 * POLL_SLACK)) 0.1 port_is_active "$1"; }

# setup CMD...: runs a setup step, its output as comments.
setup() { "$@" 2>&1 | sed 's/^/# setup: /'; return "${PIPESTATUS[0]}"; }

# rxe_and_rrxe REF DUT: an rdma_rxe device REF and an rrxe device DUT, each
# in its own network namespace: rdma_rxe and rrxe cannot both own UDP port
# 4791 in one namespace. REF is on a0 in namespace "ref" (198.18.0.1), DUT
# on b0 in namespace "dut" (198.18.0.2), a0 and b0 a veth pair. RDMA
# devices are visible from every namespace; traffic must run in the
# namespace of its device's netdev. Problems are reported as comments.
REF_NS=ref
DUT_NS=dut
rxe_and_rrxe() {
	ns_veth_pair
	setup modprobe rdma_rxe || echo "# setup: modprobe rdma_rxe failed"
	setup load_rrxe || echo "# setup: insmod rrxe failed"
	setup ip netns exec $REF_NS rdma link add "$1" type rxe netdev a0 || echo "# setup: no $1"
	setup ip netns exec $DUT_NS rdma link add "$2" type rrxe netdev b0 || echo "# setup: no $2"
}

# ns_veth_pair: namespaces ref and dut joined by a veth pair, a0 in ref at
# 198.18.0.1, b0 in dut at 198.18.0.2, both up, and lo up in both.
ns_veth_pair() {
	ip netns add $REF_NS
	ip netns add $DUT_NS
	ip link add a0 netns $REF_NS type veth peer name b0 netns $DUT_NS
	ip -n $REF_NS addr add 198.18.0.1/24 dev a0
	ip -n $DUT_NS addr add 198.18.0.2/24 dev b0
	ip -n $REF_NS link set a0 up
	ip -n $DUT_NS link set b0 up
	# A namespace's lo starts down. rrxe sends packets for its own address
	# (two QPs of one device) through the IP stack, which delivers them on
	# lo; rdma_rxe short-cuts them inside the driver. Up, as in any host.
	ip -n $REF_NS link set lo up
	ip -n $DUT_NS link set lo up
}

# rxe_and_rrxe_teardown REF DUT: undoes rxe_and_rrxe; problems are comments.
rxe_and_rrxe_teardown() {
	rdma link delete "$2" 2>/dev/null
	rdma link delete "$1" 2>/dev/null
	rmmod rrxe 2>&1 | sed 's/^/# teardown: /'
	rmmod rdma_rxe 2>&1 | sed 's/^/# teardown: /'
	ip netns del $REF_NS
	ip netns del $DUT_NS
}

# roce_v2_ipv4_gid DEV: the index of port 1's RoCEv2 GID holding an IPv4
# address (::ffff:a.b.c.d), waiting up to 5 s for the GID table to fill.
roce_v2_ipv4_gid() {
	local dir=/sys/class/infiniband/$1/ports/1 f n
	local gid type i
	for ((i = 0; i < 50; i++)); do
		for f in "$dir"/gids/*; do
			n=${f##*/}
			gid="" type=""
			read -r gid 2>/dev/null <"$f"
			case $gid in
			0000:0000:0000:0000:0000:ffff:*) ;;
			*) continue ;;
			esac
			read -r type 2>/dev/null <"$dir/gid_attrs/types/$n"
			if [ "$type" = "RoCE v2" ]; then
				echo "$n"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# tcp_listening NS PORT [PID]: something listens on TCP PORT in namespace NS
# (state 0A is LISTEN; NS empty with PID: the script's own). With PID, a
# process in NS (a server just started there), its /proc/PID/net/tcp* are
# read with no process started, once the process is in NS: a poll
# of ours costs nothing, where `ip netns exec` and awk cost a fifth of a
# second each turn on the debug kernel (testing.rst, "Where the time
# goes"). Without, /proc/net/tcp* as a process in NS sees them.
tcp_listening() {
	local hex f addr st
	printf -v hex ':%04X' "$2"
	if [ -z "${3:-}" ]; then
		ip netns exec "$1" awk -v p="$hex" \
			'substr($2, length($2) - 4) == p && $4 == "0A" { f = 1 } END { exit !f }' \
			/proc/net/tcp /proc/net/tcp6
		return
	fi
	# Until `ip netns exec` has entered NS, the process's tables are the
	# script's namespace's: not an answer for NS (empty: this namespace).
	if [ -n "$1" ]; then
		[ "/proc/$3/ns/net" -ef "/run/netns/$1" ] || return 1
	else
		[ "/proc/$3/ns/net" -ef "/proc/$$/ns/net" ] || return 1
	fi
	for f in "/proc/$3/net/tcp" "/proc/$3/net/tcp6"; do
		while read -r _ addr _ st _; do
			[[ $addr == *"$hex" && $st == 0A ]] && return 0
		done 2>/dev/null <"$f"
	done
	return 1
}

# cm_listening NS PORT: an rdma_cm ID listens on PORT in namespace NS.
cm_listening() {
	ip netns exec "$1" rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN.*:$2( |$)"
}

# wait_for SECONDS CMD...: polls CMD every 0.2 s until it succeeds; fails
# after SECONDS times POLL_SLACK.
wait_for() {
	local tenths=$(($1 * 10 * POLL_SLACK))
	shift
	poll "$tenths" 0.2 "$@"
}

# verbs_side_by_side W1 W2 RRXE_OUT RXE_OUT: the "verb NAME FIELDS..." lines
# of a tool's output on rrxe and on rdma_rxe as one table of comments, a
# row per verb either names (sorted), its first two columns W1 and W2
# wide (26-fuzz-verbs, 27-fault-inject).
verbs_side_by_side() {
	local w1=$1 w2=$2 a=$3 b=$4 v
	printf "# %-${w1}s | %-${w2}s | %s\n" verb rrxe rdma_rxe
	sed -n 's/^verb //p' "$a" "$b" | awk '{ print $1 }' | sort -u |
		while read -r v; do
			printf "# %-${w1}s | %-${w2}s | %s\n" "$v" \
				"$(sed -n "s/^verb $v //p" "$a")" "$(sed -n "s/^verb $v //p" "$b")"
		done
}

# rdma_dev_add NS NETDEV TYPE NAME: an RDMA device of TYPE (rxe or rrxe)
# named NAME on NETDEV in namespace NS, loading the driver first if needed.
rdma_dev_add() {
	case $3 in
	rxe) [ -d /sys/module/rdma_rxe ] || modprobe rdma_rxe ;;
	rrxe) [ -d /sys/module/rrxe ] || load_rrxe ;;
	*) echo "unknown RDMA device type $3" >&2; return 1 ;;
	esac
	ip netns exec "$1" rdma link add "$4" type "$3" netdev "$2"
}

# topology_lock / topology_unlock: the pairings of run_pairings take turns
# at creating and deleting network namespaces and at unregistering RDMA
# devices. ib_core (7.3, shared netns mode) gives each device a compat
# device in every other namespace, and remove_one_compat_dev() erases one
# under compat_devs_mutex but calls device_del() after dropping it: when a
# device's unregistration and the exit of a namespace meet there, the
# namespace's exit finds nothing left to remove, frees its uevent socket,
# and device_del()'s uevent then reads the freed socket (KASAN:
# slab-use-after-free in kobject_uevent_net_broadcast; testing.rst, "Known
# ib_core bugs"). Any RDMA driver trips it, rdma_rxe alone too.
topology_lock() {
	exec {TOPOLOGY_FD}>/tmp/rrxe-topology.lock
	flock "$TOPOLOGY_FD"
}
topology_unlock() {
	flock -u "$TOPOLOGY_FD"
	exec {TOPOLOGY_FD}>&-
}

# pair_up A B [NS1 NS2 NET [SUFFIX]]: two_hosts NS1 NS2 NET with an RDMA
# device of type A (rxe or rrxe) on veth1 in NS1 and one of type B on veth2
# in NS2, their ports ACTIVE. Sets PAIR_NS1/PAIR_NS2 and PAIR_IP1/PAIR_IP2
# (the namespaces and addresses), DEV1/DEV2 (the devices, named after the
# type and the host, then SUFFIX: rxe1, rrxe2, ..., or rrxe2_3 with SUFFIX
# _3; RDMA device names are global, so pairs that exist at the same time
# need different suffixes) and GID1/GID2 (their RoCEv2 IPv4 GID indexes).
# Fails (after saying why, as comments) if any step fails.
pair_up() {
	PAIR_NS1=${3:-h1} PAIR_NS2=${4:-h2}
	PAIR_IP1=198.18.${5:-1}.1 PAIR_IP2=198.18.${5:-1}.2
	DEV1=${1}1${6:-} DEV2=${2}2${6:-} GID1= GID2=
	topology_lock
	two_hosts "$PAIR_NS1" "$PAIR_NS2" "${5:-1}"
	setup rdma_dev_add "$PAIR_NS1" veth1 "$1" "$DEV1" || { topology_unlock; return 1; }
	setup rdma_dev_add "$PAIR_NS2" veth2 "$2" "$DEV2" || { topology_unlock; return 1; }
	topology_unlock
	port_active "$DEV1" || { echo "# setup: $DEV1 is not ACTIVE"; return 1; }
	port_active "$DEV2" || { echo "# setup: $DEV2 is not ACTIVE"; return 1; }
	GID1=$(roce_v2_ipv4_gid "$DEV1") || { echo "# setup: $DEV1 has no RoCEv2 IPv4 GID"; return 1; }
	GID2=$(roce_v2_ipv4_gid "$DEV2") || { echo "# setup: $DEV2 has no RoCEv2 IPv4 GID"; return 1; }
}

# pair_down: undoes pair_up (the drivers stay loaded), under the topology
# lock until both namespaces have really gone (netns_del_wait).
pair_down() {
	topology_lock
	[ -n "${DEV1:-}" ] && rdma link delete "$DEV1" 2>/dev/null
	[ -n "${DEV2:-}" ] && rdma link delete "$DEV2" 2>/dev/null
	gone "${DEV1:-none}" 100 || echo "# teardown: $DEV1 still exists"
	gone "${DEV2:-none}" 100 || echo "# teardown: $DEV2 still exists"
	netns_del_wait "${PAIR_NS1:-h1}" "${PAIR_NS2:-h2}"
	topology_unlock
	DEV1= DEV2=
}

# netns_del_wait NS...: deletes the namespaces and waits (NETNS_WAIT_S
# seconds of wall time at most, default 90: an exit that runs takes
# seconds; 21-nfs-rdma waits less for knfsd's namespace, which does not
# exit) until the kernel has run their exit. `ip netns del`
# only drops a reference: the exit runs later, from a kworker, which is
# where ib_core removes the namespace's compat devices (topology_lock). A
# veth with one end in the initial namespace and the other in NS tells
# when: the exit unregisters NS's netdevs (default_device_exit_batch) after
# ib_core's exit for NS, which registered later, and pernet exits run in
# reverse order.
netns_del_wait() {
	local ns i=0 s sentinels=() names=()
	for ns in "$@"; do
		[ -e "/run/netns/$ns" ] || continue
		orphans_go "$ns"
		i=$((i + 1))
		# Named after this (sub)shell, as pairings run in subshells of one
		# script; IFNAMSIZ: 15 characters at most.
		s=rrxe-s$i-$BASHPID
		if ip link add "$s" type veth peer name rrxe-sentinel netns "$ns" 2>/dev/null; then
			sentinels+=("$s")
			names+=("$ns")
		fi
		ip netns del "$ns"
	done
	local bound=${NETNS_WAIT_S:-90}
	for i in "${!sentinels[@]}"; do
		if ! poll $((bound * 10)) 0.2 absent "/sys/class/net/${sentinels[i]}"; then
			echo "# teardown: the exit of namespace ${names[i]} has not run after $bound s"
			# Its name is this shell's: the next pairing's would fail.
			ip link del "${sentinels[i]}" 2>/dev/null
		fi
	done
}

# load_drivers PAIR...: loads rrxe and rdma_rxe if the pairings (CLIENT-SERVER
# types, as parse_pairs gives them) use them and they are not loaded yet;
# problems are comments. Pairings that run at once need their drivers
# loaded before they start: each rdma_dev_add would load a missing one,
# and the second insmod of two at once fails.
load_drivers() {
	local types=" ${*//-/ } "
	if [[ $types == *" rrxe "* ]] && [ ! -d /sys/module/rrxe ]; then
		setup load_rrxe || echo "# setup: insmod rrxe failed"
	fi
	if [[ $types == *" rxe "* ]] && [ ! -d /sys/module/rdma_rxe ]; then
		setup modprobe rdma_rxe || echo "# setup: modprobe rdma_rxe failed"
	fi
	return 0
}

# run_pairings FUNC PAIR...: runs `FUNC PAIR N` for each pairing, N its
# place in the list (1, 2, ...), all at once: with one pairing at a time a
# script keeps one of the guest's two vCPUs busy (testing.rst, "The VM
# harness"). The drivers are loaded first (load_drivers); FUNC may only
# touch what is its own: namespaces, addresses, device names and ports
# from N (pairing_up in traffic.sh), no module loads or unloads. Each
# pairing runs in a subshell with its output in a file of its own; the
# files are printed in the pairings' order, each once it and those before
# it have ended, so the log reads as if they had run one after the other.
# A subshell's RRXE_FAILS is lost, so its `not ok` lines are counted here.
# RRXE_SERIAL=1 runs the pairings one after the other instead (still in
# subshells), their output as it comes: for telling a failure from an
# effect of the concurrency.
run_pairings() {
	local func=$1 pairs dir i rc pids=()
	shift
	pairs=("$@")
	load_drivers "${pairs[@]}"
	dir=$(mktemp -d /tmp/pairings.XXXXXX)
	if [ "${RRXE_SERIAL:-0}" != 0 ]; then
		echo "# RRXE_SERIAL: the pairings run one after the other"
		for i in "${!pairs[@]}"; do
			run_pairing "$func" "${pairs[i]}" $((i + 1)) 2>&1 | tee "$dir/$i"
			count_pairing "${pairs[i]}" "$dir/$i" "${PIPESTATUS[0]}"
		done
	else
		for i in "${!pairs[@]}"; do
			run_pairing "$func" "${pairs[i]}" $((i + 1)) >"$dir/$i" 2>&1 &
			pids[i]=$!
		done
		# Should the script run out of time (guest-run.sh's timeout sends
		# TERM to it and its pairings), what the pairings said so far is
		# still shown: nothing is printed before the first one ends. The
		# files not yet shown in full, from `shown` on, each once: the
		# TERM may cut a `cat` short, so the trap starts a fresh line.
		local shown=0
		trap 'echo; for ((; shown < ${#pairs[@]}; shown++)); do cat "$dir/$shown"; done; exit 143' TERM
		for i in "${!pairs[@]}"; do
			wait "${pids[i]}"
			rc=$?
			cat "$dir/$i"
			shown=$((i + 1))
			count_pairing "${pairs[i]}" "$dir/$i" "$rc"
		done
		trap - TERM
	fi
	rm -rf "$dir"
}

# run_pairing FUNC PAIR N: one pairing of run_pairings, in a subshell that
# starts with no failures and exits 1 if it had any.
run_pairing() {
	(
		# shellcheck disable=SC2030 # the subshell's own count, on purpose
		RRXE_FAILS=0
		"$1" "$2" "$3"
		[ "$RRXE_FAILS" = 0 ]
	)
}

# count_pairing PAIR FILE STATUS: adds the `not ok` lines of a pairing's
# output to RRXE_FAILS. A pairing that failed without one (it died, or the
# shell met an error) fails once more, so that it is not lost.
count_pairing() {
	local n
	n=$(grep -c '^not ok - ' "$2")
	# shellcheck disable=SC2031 # the parent's count
	RRXE_FAILS=$((RRXE_FAILS + n))
	if [ "$3" != 0 ] && [ "$n" = 0 ]; then
		not_ok "$1: the pairing ended with status $3 and no failure reported"
	fi
}

# unload_drivers: removes rrxe and rdma_rxe if loaded; problems are comments.
unload_drivers() {
	if [ -d /sys/module/rrxe ]; then rmmod rrxe 2>&1 | sed 's/^/# teardown: /'; fi
	if [ -d /sys/module/rdma_rxe ]; then rmmod rdma_rxe 2>&1 | sed 's/^/# teardown: /'; fi
}

# xfer_bin [TOOL]: the path of TOOL (rrxe_xfer by default, rrxe_mcast,
# rrxe_mccm, rrxe_odp or rrxe_mpi; tools/testing/xfer), built on the host
# by `make`; when that binary is missing or older than its source, it is
# compiled into /tmp here (the guest has the toolchain root's gcc, and
# Open MPI's mpicc for rrxe_mpi), through a file of its own renamed into
# place: pairings running at once may compile the same tool.
xfer_bin() {
	local tool=${1:-rrxe_xfer}
	local src=$RRXE_TOP/tools/testing/xfer/$tool.c bin=$RRXE_TOP/tools/testing/xfer/$tool
	local tmp=/tmp/$tool.$BASHPID
	if [ -x "$bin" ] && [ "$bin" -nt "$src" ]; then
		echo "$bin"
		return 0
	fi
	echo "# $tool is not built (make builds it): compiling it in the guest" >&2
	if [ "$tool" = rrxe_mpi ]; then
		mpicc -O2 -std=gnu11 -Wall -o "$tmp" "$src" >&2 || return 1
	else
		gcc -O2 -std=gnu11 -Wall -o "$tmp" "$src" -lrdmacm -libverbs >&2 || return 1
	fi
	mv -f "$tmp" "/tmp/$tool" || return 1
	echo "/tmp/$tool"
}
