#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Condenses a trace of `make bench BENCH_TRACE=1` into a timeline.

usage: trace_timeline.py FILE [FROM_MS [TO_MS]]

One line per run of like events: milliseconds since the first event, how
long the run lasted, the CPU, the task, and what happened (rrxe_tx or
rrxe_rx with the BTH opcode, a work item's Rust item number `workN`, a
softirq's name, a switch `->next task`), with how many. Consecutive
packet events of one task on one CPU fold into one line, so bursts and
the gaps between them show.
"""
import re
import sys

LINE = re.compile(r'^\s*(\S+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')


def what(event, rest):
    """A short name of an event."""
    if event in ('rrxe_tx', 'rrxe_rx'):
        op = re.search(r'opcode=(\S+)', rest)
        return event + (op.group(1) if op else '?')
    if event == 'workqueue_execute_start':
        item = re.search(r'WorkItemPointerKy(\d+)_', rest)
        fn = re.search(r'function (\S+)', rest)
        return 'work' + item.group(1) if item else 'work ' + (fn.group(1)[:40] if fn else '?')
    if event == 'sched_switch':
        nxt = re.search(r'next_comm=(\S+)', rest)
        return '->' + (nxt.group(1) if nxt else '?')
    action = re.search(r'action=(\w+)', rest)
    return event + (' ' + action.group(1) if action else '')


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lo = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    hi = float(sys.argv[3]) if len(sys.argv) > 3 else float('inf')
    t0 = None
    runs = []
    with open(sys.argv[1], errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, _, cpu, t, event, rest = m.groups()
            t = float(t)
            t0 = t if t0 is None else t0
            ms = (t - t0) * 1e3
            if ms < lo or ms > hi:
                continue
            key = (int(cpu), comm, what(event, rest))
            if runs and runs[-1][2] == key and event.startswith('rrxe_'):
                runs[-1][1] = ms
                runs[-1][3] += 1
            else:
                runs.append([ms, ms, key, 1])
    for start, end, (cpu, comm, name), n in runs:
        print(f'{start:9.3f} {end - start:7.3f} cpu{cpu} {comm:16.16s} {name:24s} x{n}')


if __name__ == '__main__':
    try:
        main()
    except BrokenPipeError:
        pass
