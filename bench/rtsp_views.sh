#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Measures starsiftd's live views (docs/publishing.md, "Live video"): a synthetic sky served
# over RTSP with each picture stamped with its frame's capture time (STARSIFT_VIEW_STAMP=1),
# watched by starsift-bench-rtsp viewers on the same host:
#   idle         the daemon's CPU with nobody watching (no view rendered or encoded)
#   one-view     one viewer of the detections view: latency frame -> decoded picture
#   three-views  one viewer each of raw, whitened and detections: three encoders
#   shared       three viewers of the same view: one encoder (the media is shared)
# The CPU of each phase is the daemon's (user + system, in cores) over the phase; the
# encoder's cost per stream is (three-views - idle) / 3.
# Usage: bench/rtsp_views.sh BUILD_DIR OUT_DIR [WIDTH HEIGHT FPS BACKEND SECONDS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/local_services.sh"
build=${1:?build directory}
out=${2:?output directory}
width=${3:-512}
height=${4:-512}
fps=${5:-25}
backend=${6:-auto}
seconds=${7:-20}
bench="$build/bench/rtsp/starsift-bench-rtsp"
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill "${daemon_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
metrics_port=$(free_port)
rtsp_port=$(free_port)
cat > "$work/starsiftd.yaml" <<CONF
state-directory: $work/state
metrics: {port: $metrics_port}
rtsp: {port: $rtsp_port}
pipelines:
  - name: sky
    source: {sky: {width: $width, height: $height, fps: $fps, movers: 8}}
    chain: [{whiten: {}}, {detect: {}}]
    backend: $backend
    outputs: {preview: {every-s: 0}}
CONF
export GST_PLUGIN_PATH="$build/plugins"
STARSIFT_VIEW_STAMP=1 "$build/bin/starsiftd" --config "$work/starsiftd.yaml" > "$work/starsiftd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$metrics_port/healthz" > /dev/null 2>&1 && break
  sleep 0.3
done
sleep 3  # whitening's history fills

ticks() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }
hz=$(getconf CLK_TCK)
url() { echo "rtsp://127.0.0.1:$rtsp_port/sky/$1"; }
# phase NAME VIEW...: viewers of the views for $seconds; one JSON line per viewer and one
# for the phase.
phase() {
  local name=$1
  shift
  local before after pids=()
  before=$(ticks)
  local i=0
  for view in "$@"; do
    "$bench" "$(url "$view")" "$seconds" > "$work/$name.$i.json" &
    pids+=($!)
    i=$((i + 1))
  done
  if (($# == 0)); then sleep "$seconds"; fi
  for p in "${pids[@]}"; do wait "$p" || true; done
  after=$(ticks)
  local cores
  cores=$(python3 -c "print(round(($after - $before) / $hz / $seconds, 3))")
  for f in "$work/$name".*.json; do
    [[ -e $f ]] && sed "s/^{/{\"phase\": \"$name\", /" "$f" >> "$out/viewers.jsonl"
  done
  echo "{\"phase\": \"$name\", \"views\": \"$*\", \"seconds\": $seconds, \"daemon_cores\": $cores}" >> "$out/phases.jsonl"
  echo "$name: daemon $cores cores"
}

: > "$out/viewers.jsonl"
: > "$out/phases.jsonl"
{
  echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
  echo "sky ${width}x${height} at $fps fps, backend $backend; $seconds s per phase"
  echo "daemon: $(grep -m1 'live views on' "$work/starsiftd.log" | sed 's/.*rtsp: //')"
} > "$out/setup.txt"
phase idle
phase one-view detections
phase three-views raw whitened detections
phase shared detections detections detections
curl -s "http://127.0.0.1:$metrics_port/metrics" | grep -E '^starsift_(view|rtsp|frames|fps)' > "$out/metrics.txt" || true
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
cat "$out/setup.txt" "$out/phases.jsonl" "$out/viewers.jsonl"
