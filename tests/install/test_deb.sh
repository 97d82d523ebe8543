#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The .deb that `cpack -G DEB` makes from BUILD (cmake/StarsiftPackage.cmake), checked without
# installing it:
#  - dpkg-deb -I: name, version, architecture, dependencies computed from the libraries (GStreamer
#    among them), the conffile, the maintainer scripts;
#  - dpkg-deb -c: the files where docs/install.md says they go;
#  - the unpacked plugin found by gst-inspect-1.0;
#  - the maintainer scripts run against stand-in systemd tools: a first installation makes
#    the user and directories and starts nothing; an upgrade restarts a running service; a
#    removal stops it.
# Usage: test_deb.sh BUILD SOURCE VERSION HAVE_STARSIFTD(0|1)
set -euo pipefail

build=$(cd "$1" && pwd) source=$(cd "$2" && pwd) version=$3 have_starsiftd=$4

# A tree built with sanitizers (scripts/test_sanitizers.sh) installs nothing anyone runs.
if [[ -n ${STARSIFT_SANITIZED:-} ]]; then
  echo "SKIP: built with -fsanitize=$STARSIFT_SANITIZED; the package is built from release binaries (the main build tree)"
  exit 77
fi

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

for f in "$build/bin/starsift" "$build/plugins/libgststarsift.so"; do
  [[ -e $f ]] || { echo "SKIP: $f is not built in this tree"; exit 77; }
done
if [[ $have_starsiftd == 1 && ! -e $build/bin/starsiftd ]]; then
  echo "SKIP: $build/bin/starsiftd is not built in this tree"
  exit 77
fi
command -v dpkg-shlibdeps >/dev/null || fail "dpkg-shlibdeps (dpkg-dev) is missing: the package's dependencies cannot be computed"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
arch=$(dpkg --print-architecture)
deb=$scratch/starsift_${version}_$arch.deb
(cd "$build" && cpack -G DEB -B "$scratch" >"$scratch/cpack.log" 2>&1) ||
  { cat "$scratch/cpack.log" >&2; fail "cpack -G DEB failed"; }
[[ -f $deb ]] || fail "cpack made no $(basename "$deb"): $(ls "$scratch")"

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == starsift ]] || fail "Package is $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version is $(field Version), not $version"
[[ $(field Architecture) == "$arch" ]] || fail "Architecture is $(field Architecture)"
depends=$(field Depends)
for lib in libc6 libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 libyaml-cpp0.7 libfftw3-single3; do
  [[ $depends == *"$lib "* || $depends == *"$lib," || $depends == *"$lib" ]] ||
    fail "Depends lacks $lib (computed by dpkg-shlibdeps): $depends"
done
[[ $depends == *gstreamer1.0-plugins-base* ]] || fail "Depends lacks gstreamer1.0-plugins-base (appsink, videoconvert)"
[[ $(field Recommends) == *libaravis-0.8-0* ]] || fail "Recommends lacks libaravis-0.8-0 (aravissrc)"
[[ -n $(field Description) ]] || fail "no Description"
control=$scratch/control
dpkg-deb -e "$deb" "$control"
for script in postinst prerm postrm; do
  [[ -x $control/$script ]] || fail "no executable $script"
  sh -n "$control/$script" || fail "$script is not valid sh"
done
if [[ -f $source/config/starsiftd.yaml ]]; then
  grep -qx /etc/starsift/starsiftd.yaml "$control/conffiles" ||
    fail "/etc/starsift/starsiftd.yaml is not a conffile"
fi
echo "control: starsift $version $arch; Depends: $depends"

contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
expected=(./usr/bin/starsift ./usr/lib/systemd/system/starsiftd.service
  ./usr/lib/sysusers.d/starsift.conf ./usr/lib/tmpfiles.d/starsift.conf
  ./usr/share/doc/starsift/install.md ./usr/share/doc/starsift/LICENSE)
plugin=./$(pkg-config --variable=pluginsdir gstreamer-1.0 | sed 's|^/||')/libgststarsift.so
expected+=("$plugin")
[[ $have_starsiftd == 1 ]] && expected+=(./usr/bin/starsiftd)
[[ -f $source/config/starsiftd.yaml ]] && expected+=(./etc/starsift/starsiftd.yaml)
for path in "${expected[@]}"; do
  grep -qxF "$path" <<<"$contents" || fail "the package lacks $path"
done
echo "contents: ${#expected[@]} files where they belong"

root=$scratch/root
dpkg-deb -x "$deb" "$root"
inspect=$(GST_REGISTRY_1_0=$scratch/registry.bin GST_PLUGIN_SYSTEM_PATH_1_0= \
  GST_PLUGIN_PATH_1_0=$(dirname "$root/$plugin") gst-inspect-1.0 starsift 2>&1) ||
  fail "gst-inspect-1.0 does not find the packaged plugin: $inspect"
grep -Eq 'License +LGPL$' <<<"$inspect" || fail "the packaged plugin's licence is not LGPL"
echo "gst-inspect-1.0: the packaged plugin loads"

# The maintainer scripts, each systemd tool a stand-in that records how it was called.
tools=$scratch/tools
calls=$scratch/calls
mkdir "$tools"
for tool in systemd-sysusers systemd-tmpfiles systemctl deb-systemd-invoke deb-systemd-helper; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$tool" "$calls" >"$tools/$tool"
  chmod +x "$tools/$tool"
done
maint() { : >"$calls"; PATH=$tools:$PATH "$control/$1" "${@:2}" || fail "$1 $* failed"; }
maint postinst configure
grep -qx 'systemd-sysusers starsift.conf' "$calls" || fail "postinst configure made no user: $(cat "$calls")"
grep -qx 'systemd-tmpfiles --create starsift.conf' "$calls" || fail "postinst configure made no directories: $(cat "$calls")"
if grep -Eq 'start|enable' "$calls"; then fail "a first installation starts or enables the service: $(cat "$calls")"; fi
if [[ -d /run/systemd/system ]]; then
  maint postinst configure 0.0.1
  grep -qx 'deb-systemd-invoke try-restart starsiftd.service' "$calls" || fail "an upgrade does not restart a running service"
  maint prerm remove
  grep -qx 'deb-systemd-invoke stop starsiftd.service' "$calls" || fail "a removal does not stop the service"
  echo "maintainer scripts: user and directories, nothing started; upgrade restarts, removal stops"
else
  echo "maintainer scripts: user and directories, nothing started (no systemd running here: restart and stop not checked)"
fi
