#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds a release tree and the .deb: build-release/ (or $STARSIFT_RELEASE_BUILD_DIR) for the
# prefix /usr, without tests or benchmarks, with the CUDA backend when nvcc is there (kernels
# for CMAKE_CUDA_ARCHITECTURES' default: the GPUs camera hosts have), then
# `cpack -G DEB` into <build>/packages/starsift_<version>_<arch>.deb.
# Extra arguments go to the cmake configure step, e.g.
#   scripts/package.sh -DSTARSIFT_CUDA=OFF                     # a CPU-only package
#   scripts/package.sh -DCMAKE_CUDA_ARCHITECTURES="86-real;89" # other GPUs
# On 2 cores the CUDA kernels for five architectures take most of the time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${STARSIFT_RELEASE_BUILD_DIR:-build-release}
scripts/setup.sh

# The same configure and build as scripts/build.sh, into the release tree, for /usr.
STARSIFT_BUILD_DIR=$build_dir scripts/build.sh -DCMAKE_INSTALL_PREFIX=/usr \
  -DSTARSIFT_BUILD_TESTS=OFF -DSTARSIFT_BUILD_BENCH=OFF "$@"

packages=$PWD/$build_dir/packages
echo "package: cpack -G DEB -B $packages"
(cd "$build_dir" && cpack -G DEB -B "$packages")

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")
deb=$packages/starsift_${version}_$(dpkg --print-architecture).deb
[[ -f $deb ]] || { echo "package: cpack made no $deb" >&2; exit 1; }

# What the kernels were built for, read back from the packaged plugin ("no CUDA kernels" in a
# CPU-only package).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
dpkg-deb -x "$deb" "$scratch"
plugin=$(find "$scratch" -name libgststarsift.so)
echo "package: CUDA kernels in the plugin: $(python3 tests/install/fatbin_archs.py "$plugin")"
dpkg-deb -f "$deb" Package Version Architecture Depends
echo "package: $deb"
