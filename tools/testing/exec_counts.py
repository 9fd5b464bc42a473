#!/usr/bin/env python3
"""What a VM test script starts: reads the NAME.execs file that
RRXE_EXECLOG=1 leaves (scripts/guest-run.sh) and prints how many processes
ran each program, and which program's processes forked them.

Usage: exec_counts.py FILE.execs [TOP]
"""

import collections
import re
import sys

FORK = re.compile(r"sched_process_fork: comm=(\S+) pid=(\d+) child_comm=\S+ child_pid=(\d+)")
EXEC = re.compile(r"sched_process_exec: filename=(\S+) pid=(\d+)")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    parent = {}
    forks = collections.Counter()
    execs = collections.Counter()
    by_parent = collections.Counter()
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            m = FORK.search(line)
            if m:
                parent[m.group(3)] = m.group(1)
                forks[m.group(1)] += 1
                continue
            m = EXEC.search(line)
            if m:
                prog = m.group(1).rsplit("/", 1)[-1]
                execs[prog] += 1
                by_parent[(parent.get(m.group(2), "?"), prog)] += 1
    print(f"{sum(forks.values())} forks, {sum(execs.values())} execs")
    print("execs by program:")
    for prog, n in execs.most_common(top):
        print(f"  {n:6d} {prog}")
    print("execs by (forking program, program):")
    for (par, prog), n in by_parent.most_common(top):
        print(f"  {n:6d} {par} -> {prog}")
    print("forks by forking program:")
    for par, n in forks.most_common(top):
        print(f"  {n:6d} {par}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
