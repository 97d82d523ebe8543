#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SPDX licence lines: every source file under src/, tests/, bench/, scripts/ and cmake/ starts
# with "SPDX-License-Identifier: LGPL-2.1-or-later" in its comment syntax (// for C, C++ and
# CUDA; # for CMake, shell, Python and YAML), on its first line or right after a shebang.
#
#   scripts/spdx.sh --check [FILE...]   lists the files lacking it; exit status 1 when any does
#   scripts/spdx.sh [FILE...]           adds it to the files lacking it
# FILE: relative to the repository root, or absolute.
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

# Sets `leader` to the comment leader of a source file, or to nothing for any other file.
# (A variable, not output: one process per file would make the check slow.)
leader_of() {
  local path=$1
  leader=""
  case "$path" in
    bench/results/*) ;;
    *.cpp | *.hpp | *.h | *.c | *.cu | *.cuh | *.inc) leader="//" ;;
    */CMakeLists.txt | CMakeLists.txt | *.cmake | *.sh | *.py | *.yaml | *.yml) leader="#" ;;
    */*.* | *.*) ;;
    *) # No extension: a script when it starts with a shebang.
      local start
      read -r -n 2 start <"$path" || true
      [[ $start == "#!" ]] && leader="#" ;;
  esac
}

add_identifier() {
  local path=$1 line="$2 $IDENTIFIER" tmp
  tmp=$(mktemp "$path.spdx.XXXXXX")
  if [[ $(head -c 2 "$path") == "#!" ]]; then
    { printf '%s\n%s\n' "$(head -n 1 "$path")" "$line"; tail -n +2 "$path"; } >"$tmp"
  else
    { echo "$line"; cat "$path"; } >"$tmp"
  fi
  chmod --reference="$path" "$tmp"
  mv "$tmp" "$path"
}

if (($# > 0)); then
  candidates=("$@")
else
  mapfile -t candidates < <(git ls-files --cached --others --exclude-standard -- src tests bench scripts cmake)
fi

sources=()
declare -A leaders
for path in "${candidates[@]}"; do
  [[ -f $path ]] || continue
  leader_of "$path"
  [[ -n $leader ]] || continue
  sources+=("$path")
  leaders[$path]=$leader
done
((${#sources[@]} > 0)) || { echo "spdx: no source files"; exit 0; }

# The files lacking the identifier on their first line, or on their second after a shebang:
# one awk over all of them (POSIX awk: Debian's mawk has no ENDFILE). An empty file lacks it.
lacking=()
for path in "${sources[@]}"; do [[ -s $path ]] || lacking+=("$path"); done
mapfile -t -O "${#lacking[@]}" lacking < <(awk -v id="$IDENTIFIER" '
  FNR == 1 {
    if (pending != "") print pending
    pending = ""
    if (index($0, id)) next
    if (substr($0, 1, 2) == "#!") pending = FILENAME
    else print FILENAME
  }
  FNR == 2 {
    if (pending != "" && !index($0, id)) print pending
    pending = ""
  }
  END { if (pending != "") print pending }
' "${sources[@]}")

if ((check)); then
  printf '%s\n' "${lacking[@]}" | grep -v '^$' || true
  if ((${#lacking[@]} > 0)); then
    echo "spdx: ${#lacking[@]} of ${#sources[@]} source files lack \"$IDENTIFIER\" (scripts/spdx.sh adds it)" >&2
    exit 1
  fi
  echo "spdx: all ${#sources[@]} source files carry \"$IDENTIFIER\""
  exit 0
fi
for path in "${lacking[@]}"; do
  add_identifier "$path" "${leaders[$path]}"
  echo "spdx: added to $path"
done
