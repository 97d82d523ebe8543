#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The CPU one live view's encoder costs (docs/live-video.md, "Measured"): x264 with the
# settings starsiftd gives it (zerolatency, ultrafast, a key frame every 2 s), on GRAY8 frames
# of noise (a whitened sky is mostly noise: the hardest picture for the encoder), N frames at
# 25 fps. Each size runs twice, without and with the encoder; the difference of their CPU
# time (user + system) over the video's duration is the encoder's share, in cores.
# Usage: bench/encoder_cost.sh [SIZES...] [-- BITRATE_KBPS]   (default 512 1024 2048, 2000)
set -euo pipefail
sizes=()
bitrate=2000
while (($#)); do
  if [[ $1 == -- ]]; then bitrate=$2; break; fi
  sizes+=("$1"); shift
done
((${#sizes[@]})) || sizes=(512 1024 2048)
frames=250
fps=25
cpu_seconds() {  # the CPU time of a gst-launch-1.0 run
  /usr/bin/time -f "%U %S" gst-launch-1.0 -q "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
}
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "x264enc tune=zerolatency speed-preset=ultrafast bitrate=$bitrate, $frames frames of noise at $fps fps"
for size in "${sizes[@]}"; do
  source=(videotestsrc num-buffers=$frames pattern=snow !
    "video/x-raw,format=GRAY8,width=$size,height=$size,framerate=$fps/1" ! videoconvert !
    video/x-raw,format=I420)
  base=$(cpu_seconds "${source[@]}" ! fakesink sync=false)
  with=$(cpu_seconds "${source[@]}" ! x264enc tune=zerolatency speed-preset=ultrafast \
    bitrate="$bitrate" key-int-max=$((2 * fps)) ! fakesink sync=false)
  python3 -c "print(f'{$size}x{$size}: encoder {($with - $base) / ($frames / $fps):.3f} cores per stream at $fps fps ({($with - $base) / $frames * 1000:.1f} ms CPU a frame)')"
done
