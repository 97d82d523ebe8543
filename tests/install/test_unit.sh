#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# starsiftd.service, its sysusers.d and tmpfiles.d snippets, checked by systemd's own tools:
#  - the unit keeps what the daemon relies on (Type=notify, the watchdog, reload, restart);
#  - `systemd-analyze verify` has nothing to say about it (ExecStart= pointed at a stand-in
#    program when starsiftd is not given: verify wants an executable there);
#  - `systemd-analyze security --offline=yes` rates its exposure at most MAX_EXPOSURE;
#  - systemd-sysusers and systemd-tmpfiles, run into a scratch root, make the user starsift and
#    its directories with the owners and modes the unit expects (as root only: chown).
# Usage: test_unit.sh SYSTEMD_DIR [STARSIFTD]. Exit 77 (skipped) without systemd-analyze.
set -euo pipefail

readonly MAX_EXPOSURE=2.0
systemd_dir=$(cd "$1" && pwd)  # absolute: with --root, systemd-sysusers reads a relative path inside the root
starsiftd=${2:-}
unit=$systemd_dir/starsiftd.service

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIP: systemd-analyze is not installed (Debian package systemd; scripts/setup.sh installs it)"
  exit 77
fi

# What the daemon relies on, each line exactly.
for line in Type=notify NotifyAccess=main WatchdogSec=30 Restart=on-failure \
  'ExecStart=/usr/bin/starsiftd --config /etc/starsift/starsiftd.yaml' \
  'ExecReload=/bin/kill -HUP $MAINPID' User=starsift StateDirectory=starsift \
  ConfigurationDirectory=starsift MemoryDenyWriteExecute=yes DevicePolicy=closed; do
  grep -qxF "$line" "$unit" || fail "$unit lacks the line '$line'"
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# verify: on a copy whose ExecStart= names an executable that exists here.
if [[ -z $starsiftd ]]; then
  starsiftd=$scratch/starsiftd
  printf '#!/bin/sh\nexit 0\n' >"$starsiftd"
  chmod +x "$starsiftd"
fi
mkdir "$scratch/unit"
sed "s|^ExecStart=/usr/bin/starsiftd |ExecStart=$starsiftd |" "$unit" >"$scratch/unit/starsiftd.service"
grep -q "^ExecStart=$starsiftd " "$scratch/unit/starsiftd.service" || fail "could not point ExecStart= at $starsiftd"
verify_output=$(systemd-analyze verify "$scratch/unit/starsiftd.service" 2>&1) || fail "systemd-analyze verify failed: $verify_output"
[[ -z $verify_output ]] || fail "systemd-analyze verify reports: $verify_output"
echo "systemd-analyze verify: clean"

# security: the overall exposure, 0.0 (best) to 10.0.
security_output=$(systemd-analyze security --offline=yes --no-pager "$unit" 2>&1) || true
exposure=$(sed -n 's/.*Overall exposure level for starsiftd.service: \([0-9.]*\).*/\1/p' <<<"$security_output")
[[ -n $exposure ]] || fail "systemd-analyze security printed no exposure level: $security_output"
awk -v e="$exposure" -v max="$MAX_EXPOSURE" 'BEGIN { exit !(e <= max) }' ||
  fail "exposure $exposure is above $MAX_EXPOSURE; what counts: $(grep '✗' <<<"$security_output")"
echo "systemd-analyze security: exposure $exposure (at most $MAX_EXPOSURE)"

# sysusers.d and tmpfiles.d into a scratch root.
if [[ $(id -u) -ne 0 ]]; then
  echo "sysusers/tmpfiles: not checked (needs root to chown in a scratch root)"
  exit 0
fi
root=$scratch/root
mkdir -p "$root/etc/starsift"
echo "global: {}" >"$root/etc/starsift/starsiftd.yaml"
chmod 0644 "$root/etc/starsift/starsiftd.yaml"
systemd-sysusers --root="$root" "$systemd_dir/starsift.sysusers" >/dev/null 2>&1 ||
  fail "systemd-sysusers refused $systemd_dir/starsift.sysusers"
passwd_line=$(grep '^starsift:' "$root/etc/passwd") || fail "systemd-sysusers made no user starsift"
IFS=: read -r _ _ uid gid _ home shell <<<"$passwd_line"
[[ $home == /var/lib/starsift ]] || fail "user starsift's home is $home, not /var/lib/starsift"
[[ $shell == */nologin ]] || fail "user starsift has the login shell $shell"
grep -q "^starsift:x:$gid:" "$root/etc/group" || fail "no group starsift with gid $gid"
systemd-tmpfiles --root="$root" --create "$systemd_dir/starsift.tmpfiles" ||
  fail "systemd-tmpfiles --create refused $systemd_dir/starsift.tmpfiles"
expect() { # path mode uid gid
  local got
  got=$(stat -c '%a %u %g' "$root$1" 2>/dev/null) || fail "systemd-tmpfiles did not create $1"
  [[ $got == "$2 $3 $4" ]] || fail "$1: mode, uid, gid are $got, want $2 $3 $4"
}
expect /var/lib/starsift 750 "$uid" "$gid"
expect /var/cache/starsift 750 "$uid" "$gid"
expect /etc/starsift/starsiftd.yaml 640 0 "$gid"
echo "sysusers/tmpfiles: user starsift ($uid:$gid), /var/lib/starsift, /var/cache/starsift, the config 0640 root:starsift"
