#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prints the system calls a systemd unit's SystemCallFilter= lets through, as numbers.

Reads the unit's SystemCallFilter= lines the way systemd does (the first line decides
allow-list or deny-list; later lines add, a leading ~ removes), expands @groups with
`systemd-analyze syscall-filter` of the systemd installed here, adds @default (always
allowed in allow-list mode), takes out what the unit's Protect*= settings refuse in filters
of their own (ProtectClock=yes: @clock, whatever SystemCallFilter= says) and resolves names
through the kernel headers' asm/unistd_64.h.
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


# Settings that systemd 252 turns into seccomp filters of their own, each refusing these calls
# (execute.c: apply_protect_clock() and its neighbours).
PROTECT_FILTERS = {
    "ProtectClock": "@clock",
    "ProtectKernelModules": "@module",
    "ProtectKernelLogs": "syslog",
    "ProtectHostname": "sethostname setdomainname",
    "PrivateDevices": "@raw-io",
}


def settings(unit_path):
    """(SystemCallFilter= values in order, {setting: last value}) of the unit."""
    filters, values = [], {}
    for line in open(unit_path, encoding="utf-8"):
        m = re.match(r"\s*(\w+)\s*=\s*(.*)$", line)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if key == "SystemCallFilter":
            filters.append(value)
        else:
            values[key] = value
    return filters, values


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
    lines, values = settings(sys.argv[1])
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
    for setting, refused in PROTECT_FILTERS.items():
        if values.get(setting, "no") in ("yes", "true", "on", "1"):
            for item in refused.split():
                allowed -= expand(item, groups)
    numbers = syscall_numbers(sys.argv[2])
    # Names of other architectures (mmap2, *_time64, ...) have no number on x86-64.
    print(",".join(str(n) for n in sorted(numbers[name] for name in allowed if name in numbers)))


if __name__ == "__main__":
    main()
