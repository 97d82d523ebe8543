#!/usr/bin/env bash
# The main job on a fresh machine: installs dependencies, builds, filters a synthetic noisy
# star field (no camera needed) and writes out/median_before_after.png; then runs the
# siftwhiten and siftdetect GStreamer elements in a gst-launch-1.0 pipeline on frames of the
# siftskysrc synthetic sky (with known movers; their truth goes to OUT/truth.jsonl). Arguments go to
# `starsift demo` (see `build/bin/starsift demo --help`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${STARSIFT_BUILD_DIR:-build}
# Where the picture goes: out/, unless the arguments say otherwise (--out DIR).
out_dir=out
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --out) out_dir=${args[i + 1]:-$out_dir} ;;
    --out=*) out_dir=${args[i]#--out=} ;;
  esac
done

scripts/setup.sh
scripts/build.sh

echo
echo "demo: $build_dir/bin/starsift demo --out $out_dir $*"
"$build_dir/bin/starsift" demo --out "$out_dir" "$@"

plugin_dir="$(cd "$build_dir" && pwd)/plugins"
if [[ -f "$plugin_dir/libgststarsift.so" ]]; then
  echo
  echo "demo: siftskysrc ! siftwhiten ! siftdetect in a GStreamer pipeline (GST_PLUGIN_PATH=$plugin_dir)"
  rm -f "$out_dir/detections.jsonl"
  GST_PLUGIN_PATH="$plugin_dir" gst-launch-1.0 \
    siftskysrc num-buffers=40 movers=8 truth-file="$out_dir/truth.jsonl" \
    ! video/x-raw,format=GRAY16_LE,width=1024,height=1024 \
    ! siftwhiten history=20 \
    ! siftdetect json-file="$out_dir/detections.jsonl" \
    ! fakesink
  echo "demo: where the synthetic sky's movers were, frame by frame: $(realpath "$out_dir/truth.jsonl")"
  last_tracks=$(tail -n 1 "$out_dir/detections.jsonl" | grep -o '"state":"[a-z]*"' | wc -l)
  echo "demo: what was found, frame by frame ($(wc -l < "$out_dir/detections.jsonl") lines; $last_tracks tracks confirmed in the last frame, for 8 movers; siftdetect min-speed drops tracks that do not move): $(realpath "$out_dir/detections.jsonl")"
else
  echo
  echo "demo: $plugin_dir/libgststarsift.so was not built; skipping the GStreamer pipeline"
fi

echo
echo "demo: picture written to $(realpath "$out_dir/median_before_after.png")"
