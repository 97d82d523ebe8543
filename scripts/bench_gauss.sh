#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the Gaussian blur benchmarks on a GPU machine, from the repository root:
# starsift-bench-gauss (the CUDA blur, the copy roofline and NPP's Gaussians, in one process on
# the same frames) and the CuPy peer; then merges their JSON into a markdown table.
#
# usage: scripts/bench_gauss.sh [OUT_DIR] [STARSIFT_BENCH_GAUSS] [--quick] [--no-cupy]
#                               [--no-check] [--OPTION=VALUE ...]
#   OUT_DIR               where gauss-starsift.json, gauss-cupy.json, gauss.md,
#                         gauss-nvidia-smi.txt and the logs go [bench/results/gauss/<gpu>, or
#                         $OUT/<gpu> when $OUT is set; <gpu>: the GPU's name in lower case,
#                         words joined by '-', without "nvidia-": h200]
#   STARSIFT_BENCH_GAUSS  the binary [build/bench/starsift-bench-gauss, else
#                         .devbundle/bin/starsift-bench-gauss]
#   --quick               a smoke run of both (sigmas 1, 3, 25; one repetition)
#   --no-cupy             skip the CuPy peer
#   --no-check            do not compare the paths' outputs (on by default)
#   --OPTION=VALUE        passed to starsift-bench-gauss (e.g. --paths=all);
#                         --sigmas, --sizes, --formats, --reps and --target-ms go to CuPy too
# Exit status: 0 when both ran cleanly, else the first failing status (the table is still
# written from whatever JSON came out).
set -uo pipefail

out=
bin=
positional=()
common=()
bench_args=(--paths=all)
cupy_args=()
check=(--check)
cupy=1
for a in "$@"; do
  case "$a" in
    --quick) common+=(--quick) ;;
    --no-cupy) cupy=0 ;;
    --no-check) check=() ;;
    --sigmas=* | --sizes=* | --formats=* | --reps=* | --target-ms=*)
      bench_args+=("$a")
      cupy_args+=("$a")
      ;;
    --*=*) bench_args+=("$a") ;;
    --*)
      echo "bench_gauss.sh: unknown option $a (options for starsift-bench-gauss take the form --option=value)" >&2
      exit 2
      ;;
    *) positional+=("$a") ;;
  esac
done
[ ${#positional[@]} -ge 1 ] && out=${positional[0]}
[ ${#positional[@]} -ge 2 ] && bin=${positional[1]}
if [ -z "$bin" ]; then
  for candidate in build/bench/starsift-bench-gauss .devbundle/bin/starsift-bench-gauss; do
    if [ -x "$candidate" ]; then
      bin=$candidate
      break
    fi
  done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "bench_gauss.sh: no starsift-bench-gauss binary (build it, or name it as the second argument)" >&2
  exit 2
fi
if [ -z "$out" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  gpu=$(echo "${gpu:-unknown-gpu}" | tr '[:upper:]' '[:lower:]' |
    sed -E 's/[^a-z0-9]+/-/g; s/^-|-$//g; s/^nvidia-//')
  if [ -n "${OUT:-}" ]; then out=$OUT/$gpu; else out=bench/results/gauss/$gpu; fi
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
command -v nvidia-smi >/dev/null && nvidia-smi >"$out/gauss-nvidia-smi.txt" 2>&1

status=0
echo "== starsift-bench-gauss ($bin) -> $out" >&2
rm -f "$out/gauss-starsift.json" "$out/gauss.md"
"$bin" "${common[@]}" "${check[@]}" ${commit:+--commit "$commit"} "${bench_args[@]}" \
  --json "$out/gauss-starsift.json" 2> >(tee "$out/gauss-starsift.log" >&2)
rc=$?
[ $rc -ne 0 ] && echo "bench_gauss.sh: starsift-bench-gauss exited with $rc" >&2 && status=$rc

if [ $cupy -eq 1 ]; then
  echo "== CuPy peer" >&2
  rm -f "$out/gauss-cupy.json"
  python3 bench/peers/cupy_gauss.py "${common[@]}" "${cupy_args[@]}" \
    --json "$out/gauss-cupy.json" 2> >(tee "$out/gauss-cupy.log" >&2)
  rc=$?
  [ $rc -ne 0 ] && echo "bench_gauss.sh: cupy_gauss.py exited with $rc" >&2 && [ $status -eq 0 ] && status=$rc
fi

inputs=()
for f in "$out/gauss-starsift.json" "$out/gauss-cupy.json"; do [ -s "$f" ] && inputs+=("$f"); done
if [ ${#inputs[@]} -gt 0 ]; then
  python3 scripts/bench_gauss_table.py "${inputs[@]}" -o "$out/gauss.md" && cat "$out/gauss.md"
fi
wait  # the tee processes
exit $status
