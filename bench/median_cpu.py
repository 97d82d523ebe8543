#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The CPU median beside OpenCV's cv2.medianBlur, on the same frames and thread count.

Runs starsift-bench-median-cpu (the CPU median on a raw frame) and cv2.medianBlur in this
process on the same seeded uniform-random frames (every bit random), with the same number
of threads (the bench's --threads, cv2.setNumThreads), border replicate (OpenCV's only
border for medianBlur), so the two outputs must be identical: each case checks that.

Timing, both sides alike: one untimed call, one call to estimate the cost, then --reps
repetitions of max(1, target-ms / estimate) calls; per-call ms of each repetition. A case
runs --rounds rounds, starsift then OpenCV in each, so a change in the machine's load hits
both; the median over all repetitions is reported. Also timed, one round each: starsift's
baseline instruction set (SSE2 on x86-64) and, at 1024^2 only, the reference (the CPU
backend before the vectorised path).

Needs Debian's python3-opencv (run with /usr/bin/python3). Writes median-cpu.json and
median-cpu.md into --out. Usage, from the repository root:
  bench/median_cpu.py [--bench build/bench/starsift-bench-median-cpu] [--out DIR] [--quick]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

FORMATS = {'GRAY8': np.uint8, 'GRAY16_LE': np.uint16}
# OpenCV's medianBlur takes 16-bit frames for sizes 3 and 5 only.
CASES = [('GRAY8', 3), ('GRAY8', 5), ('GRAY8', 7), ('GRAY16_LE', 3), ('GRAY16_LE', 5)]


def time_calls(call, reps, target_ms):
    call()
    t0 = time.perf_counter()
    call()
    estimate = (time.perf_counter() - t0) * 1e3
    calls = max(1, int(target_ms / max(estimate, 1e-3)))
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        out.append((time.perf_counter() - t0) * 1e3 / calls)
    return out


def starsift(args, frame_path, w, h, fmt, size, extra=(), output=None, reps=None):
    cmd = [args.bench, '--input', frame_path, '--width', str(w), '--height', str(h),
           '--format', fmt, '--size', str(size), '--border', 'replicate',
           '--threads', str(args.threads), '--reps', str(reps or args.reps),
           '--target-ms', str(args.target_ms), *extra]
    if output:
        cmd += ['--output', output]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def median(values):
    s = sorted(values)
    return s[len(s) // 2]


def cpu_name():
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bench', default='build/bench/starsift-bench-median-cpu')
    ap.add_argument('--out', default='bench/results/median-cpu')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--reps', type=int, default=7)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--target-ms', type=float, default=200)
    ap.add_argument('--resolutions', default='1024,4096')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--machine', default='', help='free text naming the machine and its load')
    ap.add_argument('--quick', action='store_true', help='1 round of 3 repetitions of ~30 ms')
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.reps, args.target_ms = 1, 3, 30
    cv2.setNumThreads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True,
                            text=True).stdout.strip() or None
    result = {
        'benchmark': 'median-cpu', 'date_utc': datetime.datetime.utcnow().isoformat(timespec='seconds') + 'Z',
        'commit': commit, 'machine': args.machine, 'cpu': cpu_name(), 'cores': os.cpu_count(),
        'loadavg_start': os.getloadavg(), 'opencv': cv2.__version__,
        'opencv_parallel': [' '.join(l.split()) for l in cv2.getBuildInformation().splitlines()
                            if 'Parallel framework' in l],
        'method': {'threads': args.threads, 'reps': args.reps, 'rounds': args.rounds,
                   'target_ms_per_rep': args.target_ms, 'border': 'replicate',
                   'data': f'uniform random, every bit, numpy default_rng({args.seed})',
                   'statistic': 'median per-call ms over all repetitions of all rounds'},
        'cases': []}
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        for res in [int(r) for r in args.resolutions.split(',')]:
            for fmt, size in CASES:
                dtype = FORMATS[fmt]
                frame = rng.integers(0, np.iinfo(dtype).max + 1, size=(res, res), dtype=dtype)
                frame_path = os.path.join(tmp, 'frame.raw')
                out_path = os.path.join(tmp, 'out.raw')
                frame.tofile(frame_path)
                ours, theirs, isa, load = [], [], None, []
                for _ in range(args.rounds):
                    load.append(os.getloadavg()[0])
                    r = starsift(args, frame_path, res, res, fmt, size, output=out_path)
                    ours += r['ms_per_call']
                    isa = r['isa']
                    theirs += time_calls(lambda: cv2.medianBlur(frame, size), args.reps, args.target_ms)
                mine = np.fromfile(out_path, dtype=dtype).reshape(res, res)
                mismatches = int(np.count_nonzero(mine != cv2.medianBlur(frame, size)))
                base = starsift(args, frame_path, res, res, fmt, size, extra=['--isa', 'baseline'])
                ref = None
                if res <= 1024:
                    ref = starsift(args, frame_path, res, res, fmt, size,
                                   extra=['--impl', 'reference'], reps=3)['ms_median']
                case = {'width': res, 'height': res, 'format': fmt, 'size': size, 'isa': isa,
                        'starsift_ms': median(ours), 'opencv_ms': median(theirs),
                        'starsift_ms_reps': ours, 'opencv_ms_reps': theirs,
                        'starsift_baseline_ms': base['ms_median'], 'reference_ms': ref,
                        'loadavg_1min': load, 'mismatches_vs_opencv': mismatches}
                px = res * res
                case['starsift_mpix_per_s'] = px / (case['starsift_ms'] * 1e3)
                case['opencv_mpix_per_s'] = px / (case['opencv_ms'] * 1e3)
                case['time_ratio_vs_opencv'] = case['starsift_ms'] / case['opencv_ms']
                result['cases'].append(case)
                print(f"{res}² {fmt} {size}x{size}: starsift {case['starsift_ms']:.3f} ms "
                      f"({isa}; baseline {case['starsift_baseline_ms']:.3f}), OpenCV "
                      f"{case['opencv_ms']:.3f} ms, ratio {case['time_ratio_vs_opencv']:.2f}, "
                      f"mismatches {mismatches}, load {load}", file=sys.stderr)
    result['loadavg_end'] = os.getloadavg()
    with open(os.path.join(args.out, 'median-cpu.json'), 'w') as f:
        json.dump(result, f, indent=1)
        f.write('\n')
    with open(os.path.join(args.out, 'median-cpu.md'), 'w') as f:
        f.write(table(result))
    print(table(result))


def table(r):
    m = r['method']
    lines = [
        '# CPU median: starsift vs OpenCV cv2.medianBlur', '',
        f"{r['machine'] or 'machine not described'}; CPU `{r['cpu']}`, {r['cores']} cores; "
        f"OpenCV {r['opencv']} ({'; '.join(r['opencv_parallel'])}); starsift {r['commit']}; "
        f"{r['date_utc']}. Load average (1 min) at start {r['loadavg_start'][0]:.2f}, at end "
        f"{r['loadavg_end'][0]:.2f}.", '',
        f"{m['threads']} threads each; border replicate; {m['data']}; {m['statistic']} "
        f"({m['rounds']} rounds × {m['reps']} repetitions of ~{m['target_ms_per_rep']:.0f} ms, "
        "starsift and OpenCV alternating). Ratio = starsift ms ÷ OpenCV ms (below 1: starsift "
        "faster). Outputs compared pixel by pixel with OpenCV's.", '',
        '| frame | format | size | starsift ms | Mpix/s | OpenCV ms | Mpix/s | ratio | '
        'starsift baseline ISA ms | reference ms | identical |',
        '|---|---|---|---|---|---|---|---|---|---|---|']
    for c in r['cases']:
        ref = f"{c['reference_ms']:.1f}" if c['reference_ms'] is not None else '–'
        lines.append(
            f"| {c['width']}² | {c['format']} | {c['size']}×{c['size']} | {c['starsift_ms']:.3f} "
            f"({c['isa']}) | {c['starsift_mpix_per_s']:.0f} | {c['opencv_ms']:.3f} | "
            f"{c['opencv_mpix_per_s']:.0f} | {c['time_ratio_vs_opencv']:.2f} | "
            f"{c['starsift_baseline_ms']:.3f} | {ref} | "
            f"{'yes' if c['mismatches_vs_opencv'] == 0 else str(c['mismatches_vs_opencv']) + ' px differ'} |")
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    main()
