#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Measures detections publishing to one local mosquitto (docs/publishing.md, "Measured"):
#   latency.jsonl     push() to subscriber, one publisher at the demo's 25 fps
#   throughput.jsonl  N publishers (N pipelines or hosts) at rising rates, until lines are
#                     dropped or the subscriber falls behind
#   daemon.jsonl      starsiftd's frame (its line's "utc") to a subscriber, a sky at 25 fps
# Usage: bench/mqtt_sweep.sh BUILD_DIR OUT_DIR   (BUILD_DIR built with
#        -DSTARSIFT_BUILD_BENCH=ON: starsift-bench-mqtt, starsiftd and the plugin)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/local_services.sh"
build=${1:?build directory}
out=${2:?output directory}
bench="$build/bench/mqtt/starsift-bench-mqtt"
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill "${broker_pid:-}" "${daemon_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

port=$(free_port)
write_mosquitto_conf "$work" "$port"
start_mosquitto "$work"
sleep 0.5

{
  echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "mosquitto: $(/usr/sbin/mosquitto -h | head -1)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$out/machine.txt"

# One publisher at 25 lines a second of 1 kB: the publisher's own latency.
"$bench" publish --port "$port" --publishers 1 --rate 25 --seconds 30 --bytes 1000 \
  > "$out/latency.jsonl"

# N publishers, each at rising rates, 1 kB lines, QoS 1, the default queue.
: > "$out/throughput.jsonl"
for n in 1 2 4 8 12; do
  for rate in 100 250 500 1000 2000 4000 8000 16000; do
    line=$("$bench" publish --port "$port" --publishers "$n" --rate "$rate" --seconds 5 \
           --bytes 1000 --queue 10000)
    echo "$line" >> "$out/throughput.jsonl"
    echo "$line"
    # Stop at the first rate that loses lines or leaves the subscriber short.
    if python3 - "$line" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
ok = r["dropped"] == 0 and r["failed"] == 0 and r["received"] >= r["offered"]
sys.exit(0 if ok else 1)
PY
    then :; else break; fi
  done
done

# starsiftd end to end: a 256x256 sky at 25 fps through whitening and detection.
state="$work/state"
cat > "$work/starsiftd.yaml" <<CONF
state-directory: $state
metrics: {port: 0}
mqtt: {host: 127.0.0.1, port: $port, host-name: bench}
pipelines:
  - name: sky
    source: {sky: {width: 256, height: 256, fps: 25, movers: 8, seed: 1}}
    chain: [{whiten: }, {detect: }]
    depth: 2
    outputs: {preview: {every-s: 0}}
CONF
GST_PLUGIN_PATH="$build/plugins" "$build/bin/starsiftd" --config "$work/starsiftd.yaml" \
  --duration 70 --summary > "$work/starsiftd.log" 2>&1 &
daemon_pid=$!
sleep 5
"$bench" listen --port "$port" --topic starsift/bench/sky/detections --seconds 60 \
  > "$out/daemon.jsonl"
wait "$daemon_pid" || true
grep -E "^  (frames|drops|MQTT) " "$work/starsiftd.log" > "$out/daemon-summary.txt" || true
echo "results in $out"
