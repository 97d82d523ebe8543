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
import os
import sys
import tempfile

import cv2
import numpy as np

from cpu_peer import (add_rates, commit, header, machine_line, median, parse, parser,
                      run_starsift, time_calls, write)

FORMATS = {'GRAY8': np.uint8, 'GRAY16_LE': np.uint16}
# OpenCV's medianBlur takes 16-bit frames for sizes 3 and 5 only.
CASES = [('GRAY8', 3), ('GRAY8', 5), ('GRAY8', 7), ('GRAY16_LE', 3), ('GRAY16_LE', 5)]


def starsift(args, frame_path, w, h, fmt, size, extra=(), output=None, reps=None):
    return run_starsift(args, frame_path, w, h, fmt,
                        ['--size', str(size), '--border', 'replicate'], extra, output, reps)


def main():
    ap = parser(__doc__, 'median-cpu', resolutions='1024,4096')
    args = parse(ap)
    result = header('median-cpu', args, commit(),
                    {'threads': args.threads, 'reps': args.reps, 'rounds': args.rounds,
                     'target_ms_per_rep': args.target_ms, 'border': 'replicate',
                     'data': f'uniform random, every bit, numpy default_rng({args.seed})',
                     'statistic': 'median per-call ms over all repetitions of all rounds'})
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
                add_rates(case, res * res)
                result['cases'].append(case)
                print(f"{res}² {fmt} {size}x{size}: starsift {case['starsift_ms']:.3f} ms "
                      f"({isa}; baseline {case['starsift_baseline_ms']:.3f}), OpenCV "
                      f"{case['opencv_ms']:.3f} ms, ratio {case['time_ratio_vs_opencv']:.2f}, "
                      f"mismatches {mismatches}, load {load}", file=sys.stderr)
    write(args, 'median-cpu', result, table)


def table(r):
    m = r['method']
    lines = [
        '# CPU median: starsift vs OpenCV cv2.medianBlur', '',
        machine_line(r), '',
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
