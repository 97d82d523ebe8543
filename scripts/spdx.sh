#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SPDX licence lines: every source file under src/, tests/, bench/, scripts/ and cmake/ starts
# with "SPDX-License-Identifier: LGPL-2.1-or-later" in its comment syntax (// for C, C++ and
# CUDA; # for CMake, shell, Python and YAML), on its first line or right after a shebang.
#
#   scripts/spdx.sh --check [FILE...]   lists the files lacking it; exit status 1 when any does
#   scripts/spdx.sh [FILE...]           adds it to the files lacking it
#
# Without FILE, every source file git knows there (tracked, or untracked and not ignored);
# bench/results/ holds measurements, not sources, and is left out.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly IDENTIFIER="SPDX-License-Identifier: LGPL-2.1-or-later"

check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
if [[ ${1:-} == -* ]]; then
  echo "spdx: unknown option $1 (allowed: --check)" >&2
  exit 2
fi

# The comment leader for a file, or nothing when it is not a source file.
comment_for() {
  local path=$1
  case "$path" in
    bench/results/*) return ;;
    *.cpp | *.hpp | *.h | *.c | *.cu | *.cuh | *.inc) echo "//" ;;
    */CMakeLists.txt | CMakeLists.txt | *.cmake | *.sh | *.py | *.yaml | *.yml) echo "#" ;;
    *.*) ;;
    *) # No extension: a script when it starts with a shebang.
      if [[ $(head -c 2 "$path") == "#!" ]]; then echo "#"; fi ;;
  esac
}

# True when the identifier is on the first line, or on the second after a shebang.
has_identifier() {
  local path=$1 first second
  first=$(sed -n 1p "$path")
  second=$(sed -n 2p "$path")
  [[ $first == *"$IDENTIFIER"* ]] || { [[ $first == "#!"* ]] && [[ $second == *"$IDENTIFIER"* ]]; }
}

add_identifier() {
  local path=$1 leader=$2 line tmp
  line="$leader $IDENTIFIER"
  tmp=$(mktemp "$path.spdx.XXXXXX")
  if [[ $(head -c 2 "$path") == "#!" ]]; then
    { sed -n 1p "$path"; echo "$line"; sed 1d "$path"; } >"$tmp"
  else
    { echo "$line"; cat "$path"; } >"$tmp"
  fi
  chmod --reference="$path" "$tmp"
  mv "$tmp" "$path"
}

if (($# > 0)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- src tests bench scripts cmake)
fi

lacking=0
checked=0
for path in "${files[@]}"; do
  [[ -f $path ]] || continue
  leader=$(comment_for "$path")
  [[ -n $leader ]] || continue
  checked=$((checked + 1))
  has_identifier "$path" && continue
  lacking=$((lacking + 1))
  if ((check)); then
    echo "$path"
  else
    add_identifier "$path" "$leader"
    echo "spdx: added to $path"
  fi
done

if ((check)); then
  if ((lacking > 0)); then
    echo "spdx: $lacking of $checked source files lack \"$IDENTIFIER\" (scripts/spdx.sh adds it)" >&2
    exit 1
  fi
  echo "spdx: all $checked source files carry \"$IDENTIFIER\""
fi
