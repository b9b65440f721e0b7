"""CPU time of processes and process trees, read from /proc (Linux).

The intake benchmarks share two cores between the load generator, the web
processes and PostgreSQL, so wall-clock throughput alone cannot say whose work
a gap is. CPU seconds per delivery, per process group, can.
"""
from __future__ import annotations

import os

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of one process (fields 14 and 15 of /proc/<pid>/stat), all its threads."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


def _parents() -> dict[int, int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(_stat_fields(int(entry))[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue   # exited while we looked
    return parents


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of a process and every live descendant, plus the exited children it reaped.

    A process that exits between two readings without being reaped by a member
    of the tree drops out of the sum: compare readings of long-lived servers.
    """
    parents = _parents()
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        tree.update(children)
        frontier.extend(children)
    total = 0.0
    for pid in tree:
        try:
            fields = _stat_fields(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND
        if pid == root:   # cutime + cstime: children the root waited for
            total += (int(fields[13]) + int(fields[14])) / TICKS_PER_SECOND
    return total


def parent_pid(pid: int) -> int:
    return int(_stat_fields(pid)[1])
