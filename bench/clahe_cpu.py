#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CPU CLAHE beside OpenCV's cv2.createCLAHE, on the same frames and thread count.

Runs starsift-bench-clahe-cpu (ClaheCpu on a raw frame) and cv2.createCLAHE(...).apply in
this process on the same seeded frames, with the same number of threads (the bench's
--threads, cv2.setNumThreads), the same grid and clip limit. starsift runs at bit depth 8
(GRAY8) and 16 (GRAY16_LE), where its definition is OpenCV's (docs/clahe.md), so the outputs
are compared pixel by pixel: the count of identical pixels and the largest difference.

Two kinds of frame, both seeded:
  uniform: every bit random: every histogram flat, every map entry read at random (the worst
           case for the caches: at 16 bits a tile's map is 128 KiB).
  sky:     a smooth background with a gradient, Gaussian noise and a few hundred stars:
           values crowd into a narrow band, as on a camera.

Timing, both sides alike: one untimed call, one call to estimate the cost, then --reps
repetitions of max(1, target-ms / estimate) calls; per-call ms of each repetition. A case
runs --rounds rounds, starsift then OpenCV in each, so a change in the machine's load hits
both; the median over all repetitions is reported. The reference (clahe_reference) is also
timed, one round, at 1024^2.

Needs Debian's python3-opencv (run with /usr/bin/python3). Writes clahe-cpu.json and
clahe-cpu.md into --out. Usage, from the repository root:
  bench/clahe_cpu.py [--bench build/bench/starsift-bench-clahe-cpu] [--out DIR] [--quick]
"""
import os
import sys
import tempfile

import cv2
import numpy as np

from cpu_peer import (add_rates, commit, header, machine_line, median, parse, parser,
                      run_starsift, time_calls, write)

FORMATS = {'GRAY8': np.uint8, 'GRAY16_LE': np.uint16}


def sky_frame(rng, res, dtype):
    top = np.iinfo(dtype).max
    y, x = np.mgrid[0:res, 0:res].astype(np.float32) / res
    background = 0.08 + 0.05 * x + 0.03 * (y - 0.5) ** 2
    frame = background + rng.normal(0, 0.004, (res, res)).astype(np.float32)
    for _ in range(300):  # stars: Gaussian spots, a few saturated
        cx, cy = rng.uniform(0, res, 2)
        amp, sigma = rng.uniform(0.02, 1.2), rng.uniform(0.8, 2.5)
        x0, x1 = int(max(cx - 4 * sigma, 0)), int(min(cx + 4 * sigma + 1, res))
        y0, y1 = int(max(cy - 4 * sigma, 0)), int(min(cy + 4 * sigma + 1, res))
        yy, xx = np.mgrid[y0:y1, x0:x1]
        frame[y0:y1, x0:x1] += amp * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma ** 2))
    return np.clip(np.rint(frame * top), 0, top).astype(dtype)


def uniform_frame(rng, res, dtype):
    return rng.integers(0, np.iinfo(dtype).max + 1, size=(res, res), dtype=dtype)


def starsift(args, frame_path, w, h, fmt, extra=(), output=None, reps=None):
    return run_starsift(args, frame_path, w, h, fmt,
                        ['--tiles-x', str(args.tiles), '--tiles-y', str(args.tiles),
                         '--clip', str(args.clip)], extra, output, reps)


def main():
    ap = parser(__doc__, 'clahe-cpu')
    ap.add_argument('--data', default='uniform,sky')
    ap.add_argument('--tiles', type=int, default=8)
    ap.add_argument('--clip', type=float, default=2.0)
    args = parse(ap)
    result = header('clahe-cpu', args, commit(),
                    {'threads': args.threads, 'reps': args.reps, 'rounds': args.rounds,
                     'target_ms_per_rep': args.target_ms, 'tiles': args.tiles, 'clip': args.clip,
                     'seed': args.seed,
                     'statistic': 'median per-call ms over all repetitions of all rounds'})
    rng = np.random.default_rng(args.seed)
    clahe = cv2.createCLAHE(clipLimit=args.clip, tileGridSize=(args.tiles, args.tiles))
    with tempfile.TemporaryDirectory() as tmp:
        for res in [int(r) for r in args.resolutions.split(',')]:
            for data in args.data.split(','):
                for fmt, dtype in FORMATS.items():
                    make = uniform_frame if data == 'uniform' else sky_frame
                    frame = make(rng, res, dtype)
                    frame_path = os.path.join(tmp, 'frame.raw')
                    out_path = os.path.join(tmp, 'out.raw')
                    frame.tofile(frame_path)
                    ours, theirs, load = [], [], []
                    for _ in range(args.rounds):
                        load.append(os.getloadavg()[0])
                        ours += starsift(args, frame_path, res, res, fmt, output=out_path)['ms_per_call']
                        theirs += time_calls(lambda: clahe.apply(frame), args.reps, args.target_ms)
                    mine = np.fromfile(out_path, dtype=dtype).reshape(res, res).astype(np.int64)
                    diff = np.abs(mine - clahe.apply(frame).astype(np.int64))
                    ref = None
                    if res <= 1024:
                        ref = starsift(args, frame_path, res, res, fmt,
                                       extra=['--impl', 'reference'], reps=3)['ms_median']
                    case = {'width': res, 'height': res, 'format': fmt, 'data': data,
                            'bit_depth': 8 * np.dtype(dtype).itemsize,
                            'starsift_ms': median(ours), 'opencv_ms': median(theirs),
                            'starsift_ms_reps': ours, 'opencv_ms_reps': theirs,
                            'reference_ms': ref, 'loadavg_1min': load,
                            'identical_pixels': int(np.count_nonzero(diff == 0)),
                            'pixels': res * res, 'max_difference': int(diff.max())}
                    px = res * res
                    add_rates(case, px)
                    result['cases'].append(case)
                    print(f"{res}² {data} {fmt}: starsift {case['starsift_ms']:.3f} ms, OpenCV "
                          f"{case['opencv_ms']:.3f} ms, ratio {case['time_ratio_vs_opencv']:.2f}, "
                          f"identical {case['identical_pixels']}/{px}, max diff "
                          f"{case['max_difference']}, load {load}", file=sys.stderr)
    write(args, 'clahe-cpu', result, table)


def table(r):
    m = r['method']
    lines = [
        '# CPU CLAHE: starsift vs OpenCV cv2.createCLAHE', '',
        machine_line(r), '',
        f"{m['threads']} threads each; tiles {m['tiles']}×{m['tiles']}, clip limit {m['clip']}; "
        f"seed {m['seed']}; {m['statistic']} ({m['rounds']} rounds × {m['reps']} repetitions of "
        f"~{m['target_ms_per_rep']:.0f} ms, starsift and OpenCV alternating). Ratio = starsift "
        "ms ÷ OpenCV ms (below 1: starsift faster). Outputs compared pixel by pixel with "
        "OpenCV's (starsift at bit depth 8 and 16, where its definition is OpenCV's).", '',
        '| frame | data | format | starsift ms | Mpix/s | OpenCV ms | Mpix/s | ratio | '
        'reference ms | identical pixels | max difference |',
        '|---|---|---|---|---|---|---|---|---|---|---|']
    for c in r['cases']:
        ref = f"{c['reference_ms']:.1f}" if c['reference_ms'] is not None else '–'
        same = ('all' if c['identical_pixels'] == c['pixels']
                else f"{c['identical_pixels']} of {c['pixels']}")
        lines.append(
            f"| {c['width']}² | {c['data']} | {c['format']} | {c['starsift_ms']:.3f} | "
            f"{c['starsift_mpix_per_s']:.0f} | {c['opencv_ms']:.3f} | "
            f"{c['opencv_mpix_per_s']:.0f} | {c['time_ratio_vs_opencv']:.2f} | {ref} | {same} | "
            f"{c['max_difference']} |")
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    main()
