#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the median benchmarks on a GPU machine, from the repository root: starsift-bench (the
# CUDA median, the copy roofline and NPP, in one process on the same frames) and the CuPy
# peer; then merges their JSON into a markdown table.
#
# usage: scripts/bench.sh [OUT_DIR] [STARSIFT_BENCH] [--quick] [--no-cupy] [--no-check]
#                         [--OPTION=VALUE ...]
#   OUT_DIR          where median-starsift.json, median-cupy.json, median.md and the logs go
#                    [bench/results]
#   STARSIFT_BENCH   the binary [build/bench/starsift-bench, else .devbundle/bin/starsift-bench]
#   --quick          a smoke run of both (few sizes, one repetition)
#   --no-cupy        skip the CuPy peer
#   --no-check       do not compare starsift's output with NPP's (on by default)
#   --OPTION=VALUE   passed to starsift-bench (e.g. --schedules=all, --sizes=3,5);
#                    --sizes, --formats, --resolutions, --reps and --target-ms go to CuPy too
# Exit status: 0 when both ran cleanly, else the first failing status (the table is still
# written from whatever JSON came out).
set -uo pipefail

out=bench/results
bin=
positional=()
common=()
bench_args=()
cupy_args=()
check=(--check)
cupy=1
for a in "$@"; do
  case "$a" in
    --quick) common+=(--quick) ;;
    --no-cupy) cupy=0 ;;
    --no-check) check=() ;;
    --sizes=* | --formats=* | --resolutions=* | --reps=* | --target-ms=*)
      bench_args+=("$a")
      if [[ "$a" == --formats=* ]]; then
        # CuPy has no 4-channel median: keep its grey formats only.
        grey=$(echo "${a#--formats=}" | tr ',' '\n' | grep -E '^GRAY' | paste -sd, -)
        [ -n "$grey" ] && cupy_args+=("--formats=$grey")
      else
        cupy_args+=("$a")
      fi
      ;;
    --*=*) bench_args+=("$a") ;;
    --*)
      echo "bench.sh: unknown option $a (options for starsift-bench take the form --option=value)" >&2
      exit 2
      ;;
    *) positional+=("$a") ;;
  esac
done
[ ${#positional[@]} -ge 1 ] && out=${positional[0]}
[ ${#positional[@]} -ge 2 ] && bin=${positional[1]}
if [ -z "$bin" ]; then
  for candidate in build/bench/starsift-bench .devbundle/bin/starsift-bench; do
    if [ -x "$candidate" ]; then
      bin=$candidate
      break
    fi
  done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "bench.sh: no starsift-bench binary (build it, or name it as the second argument)" >&2
  exit 2
fi
mkdir -p "$out"

# NPP is loaded at run time: make the toolkit's libraries findable.
for d in "${CUDA_HOME:-}/lib64" /usr/local/cuda/lib64; do
  if [ -d "$d" ] && [[ ":${LD_LIBRARY_PATH:-}:" != *":$d:"* ]]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
  fi
done

commit=$(git rev-parse --short HEAD 2>/dev/null || true)
if [ -n "$commit" ] && ! git diff --quiet HEAD -- src bench 2>/dev/null; then commit="$commit+changes"; fi
command -v nvidia-smi >/dev/null && nvidia-smi >"$out/nvidia-smi.txt" 2>&1

status=0
echo "== starsift-bench ($bin)" >&2
rm -f "$out/median-starsift.json" "$out/median.md"
"$bin" "${common[@]}" "${check[@]}" ${commit:+--commit "$commit"} "${bench_args[@]}" \
  --json "$out/median-starsift.json" 2> >(tee "$out/median-starsift.log" >&2)
rc=$?
[ $rc -ne 0 ] && echo "bench.sh: starsift-bench exited with $rc" >&2 && status=$rc

if [ $cupy -eq 1 ]; then
  echo "== CuPy peer" >&2
  rm -f "$out/median-cupy.json"
  python3 bench/peers/cupy_median.py "${common[@]}" "${cupy_args[@]}" \
    --json "$out/median-cupy.json" 2> >(tee "$out/median-cupy.log" >&2)
  rc=$?
  [ $rc -ne 0 ] && echo "bench.sh: cupy_median.py exited with $rc" >&2 && [ $status -eq 0 ] && status=$rc
fi

inputs=()
for f in "$out/median-starsift.json" "$out/median-cupy.json"; do [ -s "$f" ] && inputs+=("$f"); done
if [ ${#inputs[@]} -gt 0 ]; then
  python3 scripts/bench_table.py "${inputs[@]}" -o "$out/median.md" && cat "$out/median.md"
fi
wait  # the tee processes
exit $status
