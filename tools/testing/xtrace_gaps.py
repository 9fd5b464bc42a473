#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a VM test script waits: reads the trace that RRXE_XTRACE=1 leaves
in $RRXE_VM_OUT (every command as `+[SECONDS] FILE:LINE: COMMAND`) and
prints each command after which nothing new started for GAP seconds or
more (default 3), with the second it started at and the gap. Commands of
subshells that run at once (a script's pairings) are interleaved, so a
gap is the whole script's, not one pairing's.

usage: xtrace_gaps.py TRACE [GAP]"""
import re
import sys


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    gap = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    stamp = re.compile(r'^\++\[(\d+)\] ')
    prev, prev_t = None, 0
    with open(sys.argv[1], errors='replace') as f:
        for line in f:
            m = stamp.match(line)
            if not m:
                continue
            t = int(m.group(1))
            if prev is not None and t - prev_t >= gap:
                print(f'{prev_t:5d} s  +{t - prev_t:4d} s  {prev.rstrip()[:160]}')
            prev, prev_t = line, t
    return 0


if __name__ == '__main__':
    sys.exit(main())
