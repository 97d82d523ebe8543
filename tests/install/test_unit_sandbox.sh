#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# starsift's programs run under starsiftd.service's system call rules: its SystemCallFilter=,
# MemoryDenyWriteExecute=yes and RestrictAddressFamilies=, applied by unit_seccomp_preload.c
# the way systemd applies them, with each refused call logged. The CPU paths run here; on a GPU
# machine the same runs take the CUDA backend (systemd/README.md has that run).
#  - the plugin: siftskysrc -> siftwhiten -> siftdetect in gst-launch-1.0, the plugin scanner
#    included;
#  - starsift demo;
#  - starsiftd on config/demo.yaml for a few seconds, its files in a scratch directory (when
#    it was built).
# A refused call fails the test unless it is one of EXPECTED below, which the callers handle.
# Usage: test_unit_sandbox.sh PRELOAD UNIT PLUGIN_DIR STARSIFT [STARSIFTD CONFIG]
set -euo pipefail

preload=$1 unit=$2 plugin_dir=$3 starsift=$4 starsiftd=${5:-} demo_config=${6:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
unistd=/usr/include/x86_64-linux-gnu/asm/unistd_64.h  # the kernel's system call numbers (linux-libc-dev)

# Refused and handled: GLib asks sched_setattr() whether it may copy scheduler settings to
# new threads and does without (g_debug); libnuma's constructor probes set_mempolicy().
readonly EXPECTED="sched_setattr set_mempolicy"

# A tree built with sanitizers (scripts/test_sanitizers.sh) installs nothing anyone runs.
if [[ -n ${STARSIFT_SANITIZED:-} ]]; then
  echo "SKIP: built with -fsanitize=$STARSIFT_SANITIZED; the unit's sandbox is checked on release binaries (the main build tree)"
  exit 77
fi

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze (systemd) is not installed: it names the unit's system calls"; exit 77; }
[[ $(uname -m) == x86_64 ]] || { echo "SKIP: the sandbox knows x86-64 system calls only"; exit 77; }
for f in "$preload" "$starsift" "$plugin_dir/libgststarsift.so" "$unistd"; do
  [[ -e $f ]] || { echo "SKIP: $f is not built in this tree"; exit 77; }
done

allow=$(python3 "$here/unit_syscalls.py" "$unit" "$unistd")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
declare -A names
while read -r _ name number; do names[$number]=${name#__NR_}; done < <(grep '^#define __NR_' "$unistd")

# run NAME COMMAND...: COMMAND under the sandbox; fails on a refused call not in EXPECTED.
run() {
  local name=$1 log=$scratch/$1.denied status=0
  shift
  env LD_PRELOAD="$preload" STARSIFT_SANDBOX_ALLOW="$allow" STARSIFT_SANDBOX_LOG="$log" \
    GST_REGISTRY_1_0="$scratch/registry.bin" GST_PLUGIN_SYSTEM_PATH_1_0=/usr/lib/x86_64-linux-gnu/gstreamer-1.0 \
    GST_PLUGIN_PATH_1_0="$plugin_dir" "$@" >"$scratch/$name.out" 2>&1 || status=$?
  local refused=() nr
  if [[ -f $log ]]; then
    while read -r _ _ nr _; do
      local call=${names[$nr]:-syscall-$nr}
      [[ " $EXPECTED " == *" $call "* ]] || refused+=("$call")
    done < <(grep '^denied' "$log")
  fi
  if ((status != 0)); then
    cat "$scratch/$name.out" >&2
    fail "$name exited with status $status under the unit's system call rules"
  fi
  ((${#refused[@]} == 0)) || fail "$name made calls starsiftd.service refuses: $(printf '%s\n' "${refused[@]}" | sort | uniq -c | tr '\n' ' ')"
  local count=0
  [[ -f $log ]] && count=$(grep -c '^denied' "$log" || true)
  echo "$name: ran; $count refused calls, each one handled ($EXPECTED)"
}

run plugin gst-launch-1.0 -q siftskysrc num-buffers=20 movers=3 \
  ! video/x-raw,format=GRAY16_LE,width=256,height=256 ! siftwhiten history=8 ! siftdetect ! fakesink
run demo "$starsift" demo --frames 2 --width 256 --height 256 --out "$scratch/demo"
[[ -s $scratch/demo/median_before_after.png ]] || fail "starsift demo wrote no picture under the sandbox"

if [[ -n $starsiftd && -x $starsiftd && -f $demo_config ]]; then
  # The demo's config, its files in the scratch directory and its metrics on a port of its own.
  port=$((20000 + RANDOM % 20000))
  sed -e 's|^state-directory:.*|state-directory: state|' -e "s|^\( *port:\).*|\1 $port|" \
    "$demo_config" >"$scratch/demo.yaml"
  run starsiftd "$starsiftd" --config "$scratch/demo.yaml" --duration 3
else
  echo "starsiftd: not built in this tree, not run"
fi
