#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prints the system calls a systemd unit's SystemCallFilter= lets through, as numbers.

Reads the unit's SystemCallFilter= lines the way systemd does (the first line decides
allow-list or deny-list; later lines add, a leading ~ removes), expands @groups with
`systemd-analyze syscall-filter` of the systemd installed here, adds @default (always
allowed in allow-list mode) and resolves names through the kernel headers' asm/unistd_64.h.
Output: one line of comma-separated numbers, for unit_seccomp_preload.c.
"""
import re
import subprocess
import sys


def read_groups():
    text = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"], check=True,
                          capture_output=True, text=True).stdout
    groups, current = {}, None
    for line in text.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif current is not None and line.strip() and not line.strip().startswith("#"):
            current.append(line.strip())
    return groups


def expand(name, groups, seen=None):
    if not name.startswith("@"):
        return {name}
    if name not in groups:
        sys.exit(f"unit_syscalls: unknown system call group {name} (systemd-analyze syscall-filter lists them)")
    seen = seen or set()
    out = set()
    for entry in groups[name]:
        if entry not in seen:
            seen.add(entry)
            out |= expand(entry, groups, seen)
    return out


def filter_lines(unit_path):
    lines = []
    for line in open(unit_path, encoding="utf-8"):
        m = re.match(r"\s*SystemCallFilter\s*=\s*(.*)$", line)
        if m:
            lines.append(m.group(1).strip())
    return lines


def syscall_numbers(header):
    numbers = {}
    for line in open(header, encoding="utf-8"):
        m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
        if m:
            numbers[m.group(1)] = int(m.group(2))
    return numbers


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: unit_syscalls.py UNIT_FILE ASM_UNISTD_64_H")
    lines = filter_lines(sys.argv[1])
    if not lines or lines[0].startswith("~"):
        sys.exit(f"unit_syscalls: {sys.argv[1]} has no allow-list SystemCallFilter= line")
    groups = read_groups()
    allowed = expand("@default", groups)
    for value in lines:
        deny = value.startswith("~")
        names = set()
        for item in value.lstrip("~").split():
            names |= expand(item, groups)
        allowed = allowed - names if deny else allowed | names
    numbers = syscall_numbers(sys.argv[2])
    # Names of other architectures (mmap2, *_time64, ...) have no number on x86-64.
    print(",".join(str(n) for n in sorted(numbers[name] for name in allowed if name in numbers)))


if __name__ == "__main__":
    main()
