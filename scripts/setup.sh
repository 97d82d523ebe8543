#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs every Debian package that starsift's build, tests and demo need.
# Idempotent: when all of them are installed already, apt is not touched.
# Runs as root, or through sudo for another user. Does not install CUDA: with nvcc
# present the CUDA backend is built, without it the build is CPU-only.
set -euo pipefail

# The packages, one job each.
PACKAGES=(
  build-essential                  # C/C++ compilers, make
  cmake                            # build system (3.25 or newer)
  pkg-config                       # finds GStreamer and libpng
  git
  libgstreamer1.0-dev              # GStreamer core, base and check (GstHarness) libraries
  libgstreamer-plugins-base1.0-dev # GstVideo
  gstreamer1.0-tools               # gst-launch-1.0, gst-inspect-1.0
  gstreamer1.0-plugins-base        # videotestsrc, videoconvert, appsrc/appsink
  gstreamer1.0-plugins-good        # common sources and sinks for real pipelines
  libyaml-cpp-dev                  # chain configs
  libspdlog-dev                    # logging
  catch2                           # unit tests (Catch2 v2, single header)
  libpng-dev                       # the demo's picture
  libfftw3-dev                     # FFTW (single precision, fftw3f): whitening's shift estimation on the CPU
  clang-format                     # code formatting (.clang-format)
  systemd                          # systemd-analyze, -sysusers, -tmpfiles: tests of starsiftd's unit (tests/install)
  file                             # CPack's DEB generator: finds the ELF files for dpkg-shlibdeps
  python3                          # tests/install: the unit's system calls, CUDA architectures of a binary
  libcfitsio-dev                   # starsiftd's FITS frames (src/daemon/outputs/fits_writer.cpp)
  python3-astropy                  # tests read those FITS frames back with a second reader
  libsystemd-dev                   # starsiftd: sd_notify (READY, WATCHDOG, ...) and the journal
  prometheus-cpp-dev               # starsiftd: the metrics' Prometheus text format
  gstreamer1.0-plugins-ugly        # starsiftd's recordings: x264enc
  gstreamer1.0-libav               # starsiftd's rtsp source: H.264/H.265 decoders for IP cameras
  gstreamer1.0-plugins-bad         # starsiftd's outputs.shm: shmsink (and the tests' shmsrc)
  libgstrtspserver-1.0-dev         # the RTSP camera starsiftd's tests read (tests/support)
  libaravis-dev                    # siftcamsrc: GigE Vision / USB3 Vision cameras (libaravis-0.8-0 ships aravissrc too)
  libusb-1.0-0-dev                 # aravis-0.8.pc requires it; libaravis-dev does not pull it in
  zlib1g-dev                       # aravis-0.8.pc requires it too
  aravis-tools-cli                 # arv-tool-0.8: lists cameras and their ids (docs/cameras.md)
  aravis-tools                     # arv-fake-gv-camera-0.8: the fake GigE Vision camera starsiftd's tests read
  libmosquitto-dev                 # starsiftd: detections published to an MQTT broker (src/daemon/publish)
  mosquitto                        # the MQTT broker starsiftd's publishing tests start on 127.0.0.1
  mosquitto-clients                # mosquitto_sub: the subscriber those tests read detections with
  chromium                         # headless browser: starsiftd's tests render its status page in it
  ffmpeg                           # ffprobe: a second reader of starsiftd's RTSP and RTP views in its tests
)

log() { printf 'setup: %s\n' "$*"; }

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  log "all ${#PACKAGES[@]} packages are installed"
else
  if ! command -v apt-get >/dev/null 2>&1; then
    log "this is not a Debian/Ubuntu system (no apt-get); install the equivalents of: ${missing[*]}" >&2
    exit 1
  fi
  if [[ $(id -u) -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    log "missing packages (${missing[*]}) and neither root nor sudo to install them" >&2
    exit 1
  fi
  log "installing: ${missing[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
fi

# CUDA: reported, never installed.
nvcc=""
if command -v nvcc >/dev/null 2>&1; then
  nvcc=$(command -v nvcc)
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc=/usr/local/cuda/bin/nvcc
fi
if [[ -n "$nvcc" ]]; then
  version=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -n 1)
  log "nvcc found: $nvcc (CUDA ${version:-unknown}); the CUDA backend will be built"
else
  log "nvcc not found (PATH, /usr/local/cuda/bin/nvcc): the build will be CPU-only"
  log "  (the CUDA backend is left out and GPU tests are skipped; install the CUDA toolkit to add it)"
fi
