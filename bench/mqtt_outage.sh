#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# starsiftd with the broker away for OUTAGE_S seconds (default 30): a 160x120 sky at 25 fps,
# a local mosquitto stopped 8 s in and started again on the same port (persistence off),
# mosquitto_sub subscribed throughout. Prints the daemon's MQTT log and summary, and compares
# what the subscriber received with detections.jsonl (docs/publishing.md, "Measured").
# Usage: bench/mqtt_outage.sh BUILD_DIR [OUTAGE_S]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/local_services.sh"
build=${1:?build directory}
outage=${2:-30}
work=$(mktemp -d)
trap 'kill "${broker_pid:-}" "${sub_pid:-}" "${daemon_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(free_port)
write_mosquitto_conf "$work" "$port"
cat > "$work/starsiftd.yaml" <<CONF
state-directory: $work/state
metrics: {port: 0}
mqtt: {host: 127.0.0.1, port: $port, host-name: outage}
pipelines:
  - name: sky
    source: {sky: {width: 160, height: 120, fps: 25, movers: 4}}
    chain: [{whiten: {history: 8}}, {detect: }]
    outputs: {preview: {every-s: 0}}
CONF
start_mosquitto "$work"
sleep 0.5
mosquitto_sub -p "$port" -q 1 -v -t 'starsift/#' > "$work/sub.out" 2>&1 &
sub_pid=$!
sleep 0.3
GST_PLUGIN_PATH="$build/plugins" "$build/bin/starsiftd" --config "$work/starsiftd.yaml" \
  --duration $((outage + 30)) --summary > "$work/starsiftd.log" 2>&1 &
daemon_pid=$!
sleep 8
kill "$broker_pid"; wait "$broker_pid" 2>/dev/null || true
echo "broker stopped at $(date -u +%T) for $outage s"
sleep "$outage"
start_mosquitto "$work"
echo "broker started at $(date -u +%T)"
wait "$daemon_pid" || true
sleep 2
grep -E "MQTT" "$work/starsiftd.log" | grep -v "^  " | cut -c1-200
grep -E "^  (frames|MQTT) " "$work/starsiftd.log"
python3 - "$work" <<'PY'
import glob, sys
work = sys.argv[1]
lines = [l.rstrip("\n") for l in open(glob.glob(work + "/state/sky/*/detections.jsonl")[0])]
got, seen, repeats = [], set(), 0
for l in open(work + "/sub.out"):
    topic, _, payload = l.rstrip("\n").partition(" ")
    if topic != "starsift/outage/sky/detections":
        continue
    if payload in seen:
        repeats += 1
        continue
    seen.add(payload)
    got.append(payload)
print(f"detections.jsonl: {len(lines)} lines; received: {len(got)} (and {repeats} repeats); "
      f"the same lines in the same order: {got == lines}")
PY
