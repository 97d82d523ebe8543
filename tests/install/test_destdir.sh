#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `cmake --install BUILD --prefix /usr` into a scratch DESTDIR: every file where
# docs/install.md says it goes, the unit and snippets as in systemd/, programs that need
# nothing from the build tree (no RUNPATH into it, every library found), the plugin found by
# gst-inspect-1.0 from there with its LGPL licence and its elements, and, in a CUDA build, the
# kernels for exactly the configured CUDA architectures.
# Usage: test_destdir.sh BUILD SOURCE PLUGINDIR UNITDIR SYSUSERSDIR TMPFILESDIR DOCDIR
#                        HAVE_STARSIFTD(0|1) CUDA_ARCHITECTURES(empty without CUDA)
set -euo pipefail

build=$(cd "$1" && pwd) source=$(cd "$2" && pwd)
plugindir=$3 unitdir=$4 sysusersdir=$5 tmpfilesdir=$6 docdir=$7 have_starsiftd=$8 cuda_archs=${9:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# A tree built with sanitizers (scripts/test_sanitizers.sh) installs nothing anyone runs.
if [[ -n ${STARSIFT_SANITIZED:-} ]]; then
  echo "SKIP: built with -fsanitize=$STARSIFT_SANITIZED; the installed tree is checked on release binaries (the main build tree)"
  exit 77
fi

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# `cmake --install` installs what was built; a tree built for other targets only (the
# sanitizer tree) has nothing to install.
for f in "$build/bin/starsift" "$build/plugins/libgststarsift.so"; do
  [[ -e $f ]] || { echo "SKIP: $f is not built in this tree"; exit 77; }
done
if [[ $have_starsiftd == 1 && ! -e $build/bin/starsiftd ]]; then
  echo "SKIP: $build/bin/starsiftd is not built in this tree"
  exit 77
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
dest=$scratch/dest
DESTDIR=$dest cmake --install "$build" --prefix /usr >"$scratch/install.log" 2>&1 ||
  { cat "$scratch/install.log" >&2; fail "cmake --install failed"; }

expect_file() { [[ -f $dest$1 ]] || fail "$1 is not installed"; }
expect_same() { cmp -s "$dest$1" "$2" || fail "$1 differs from $2"; }

plugin=/usr/$plugindir/libgststarsift.so
programs=(/usr/bin/starsift)
[[ $have_starsiftd == 1 ]] && programs+=(/usr/bin/starsiftd)
for f in "$plugin" "${programs[@]}"; do expect_file "$f"; done
for f in "${programs[@]}"; do [[ -x $dest$f ]] || fail "$f is not executable"; done
expect_same "/usr/$unitdir/starsiftd.service" "$source/systemd/starsiftd.service"
expect_same "/usr/$sysusersdir/starsift.conf" "$source/systemd/starsift.sysusers"
expect_same "/usr/$tmpfilesdir/starsift.conf" "$source/systemd/starsift.tmpfiles"
if [[ -f $source/config/starsiftd.yaml ]]; then
  expect_same /etc/starsift/starsiftd.yaml "$source/config/starsiftd.yaml"
fi
for doc in README.md LICENSE install.md config/README.md systemd/README.md; do
  expect_file "/usr/$docdir/$doc"
done
echo "layout: plugin in /usr/$plugindir, ${programs[*]}, unit in /usr/$unitdir, docs in /usr/$docdir"

# Nothing from the build tree: no RUNPATH or RPATH into it, every library resolved.
for f in "$plugin" "${programs[@]}"; do
  paths=$(readelf -d "$dest$f" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p')
  [[ $paths != *"$build"* && $paths != *"$source"* ]] || fail "$f keeps a library path into the build: $paths"
  missing=$(ldd "$dest$f" | grep 'not found' || true)
  [[ -z $missing ]] || fail "$f needs libraries that are not found: $missing"
done
echo "libraries: no path into the build tree, all found"

# The installed plugin, and only it, through GStreamer.
inspect=$(GST_REGISTRY_1_0=$scratch/registry.bin GST_PLUGIN_SYSTEM_PATH_1_0= \
  GST_PLUGIN_PATH_1_0=$dest/usr/$plugindir gst-inspect-1.0 starsift 2>&1) ||
  fail "gst-inspect-1.0 does not find the installed plugin: $inspect"
grep -Eq "Filename +$dest$plugin\$" <<<"$inspect" || fail "gst-inspect-1.0 loaded another file: $inspect"
grep -Eq 'License +LGPL$' <<<"$inspect" || fail "the plugin's licence is not LGPL: $inspect"
for element in siftchain siftdetect siftmedian siftskysrc siftwhiten; do
  grep -q "^  $element:" <<<"$inspect" || fail "the installed plugin lacks $element"
done
"$dest/usr/bin/starsift" version | grep -q '^starsift ' || fail "the installed starsift does not run"
echo "gst-inspect-1.0: the installed plugin, licence LGPL, its five elements"

# CUDA kernels: exactly what CMAKE_CUDA_ARCHITECTURES asked for, in the plugin and the tool.
if [[ -n $cuda_archs ]]; then
  for f in "$plugin" /usr/bin/starsift; do
    python3 "$here/fatbin_archs.py" "$dest$f" --expect "$cuda_archs" >/dev/null ||
      fail "$f does not hold the kernels of CUDA architectures $cuda_archs"
  done
  echo "CUDA kernels: $(python3 "$here/fatbin_archs.py" "$dest$plugin") (CUDA_ARCHITECTURES $cuda_archs)"
fi
