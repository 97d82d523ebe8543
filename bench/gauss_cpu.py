#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The CPU Gaussian blur beside OpenCV's cv2.GaussianBlur, on the same frames and thread count.

Runs starsift-bench-gauss-cpu (the CPU GaussStage's path on a raw frame: GaussCpu's direct
sums below sigma 25, GaussIir's recursion from 25) and cv2.GaussianBlur in this process on
the same seeded random frames, with the same number of threads (the bench's --threads,
cv2.setNumThreads) and the same blur: ksize = 2 ceil(4 sigma) + 1 (starsift's radius rule),
sigmaX = sigmaY = sigma, borderType BORDER_REFLECT_101. Each case compares the two outputs
sample by sample (max |difference|, in the format's units, and how many samples differ):
OpenCV blurs 8- and 16-bit frames in fixed point (8- and 16-bit fractions), so small
differences are expected there; starsift's direct sums are its float reference's, bit for bit.

Timing, both sides alike: one untimed call, one call to estimate the cost, then --reps
repetitions of max(1, target-ms / estimate) calls; per-call ms of each repetition, and the
process's CPU time over wall time while they ran (about --threads when no one else used the
cores). A case runs --rounds rounds, starsift then OpenCV in each, so a change in the
machine's load hits both; the median over all repetitions is reported. Also timed once: the
other starsift path (the recursion below sigma 25 from sigma 5, the direct sums from 25).

The machine is shared: before starting, the run waits (up to --wait-s) for the 1-minute load
average to fall under --max-load, and it records the load average at the start, before each
round and at the end, and /proc/loadavg's count of runnable threads before each round.

Needs Debian's python3-opencv (run with /usr/bin/python3). Writes gauss-cpu.json and
gauss-cpu.md into --out. Usage, from the repository root:
  bench/gauss_cpu.py [--bench build/bench/starsift-bench-gauss-cpu] [--out DIR] [--quick]
"""
import math
import os
import sys
import tempfile
import time

import cv2
import numpy as np

from cpu_peer import (add_rates, commit, header, median, parse, parser, run_starsift,
                      time_calls_cpu, write)

FORMATS = {'GRAY8': np.uint8, 'GRAY16_LE': np.uint16, 'GRAY32F': np.float32}
RECURSIVE_FROM_SIGMA = 25.0  # GaussParams::kRecursiveFromSigma
RECURSION_MIN_SIGMA = 5.0    # time the recursion as the other path from here (GaussIir takes 3)


def starsift(args, frame_path, w, h, fmt, sigma, impl='stage', output=None, reps=None):
    return run_starsift(args, frame_path, w, h, fmt,
                        ['--sigma', str(sigma), '--border', 'reflect-101', '--impl', impl],
                        output=output, reps=reps)


def opencv_blur(frame, sigma):
    k = 2 * math.ceil(4 * sigma) + 1
    return cv2.GaussianBlur(frame, (k, k), sigmaX=sigma, sigmaY=sigma,
                            borderType=cv2.BORDER_REFLECT_101)


def random_frame(rng, fmt, res):
    dtype = FORMATS[fmt]
    if dtype == np.float32:
        return rng.uniform(0.0, 1000.0, size=(res, res)).astype(np.float32)
    return rng.integers(0, np.iinfo(dtype).max + 1, size=(res, res), dtype=dtype)


def runnable():
    with open('/proc/loadavg') as f:
        return int(f.read().split()[3].split('/')[0])


def wait_quiet(max_load, wait_s):
    """Waits until the 1-minute load average is under max_load, at most wait_s seconds."""
    t0 = time.time()
    while os.getloadavg()[0] >= max_load and time.time() - t0 < wait_s:
        time.sleep(5)
    return {'waited_s': round(time.time() - t0), 'loadavg': os.getloadavg(),
            'quiet': os.getloadavg()[0] < max_load}


def main():
    ap = parser(__doc__, 'gauss-cpu', reps=5, target_ms=150)
    ap.add_argument('--formats', default='GRAY8,GRAY16_LE,GRAY32F')
    ap.add_argument('--sigmas', default='0.5,1,2,3,5,10,25,50')
    ap.add_argument('--max-load', type=float, default=0.7,
                    help='wait for a 1-minute load average under this before starting')
    ap.add_argument('--wait-s', type=float, default=300, help='wait at most this long')
    args = parse(ap, machine_help='free text naming the machine')
    commit_id = commit()
    quiet = wait_quiet(args.max_load, args.wait_s)
    print(f"start: waited {quiet['waited_s']} s, load average {quiet['loadavg']}",
          file=sys.stderr)
    result = header('gauss-cpu', args, commit_id,
                    {'threads': args.threads, 'reps': args.reps, 'rounds': args.rounds,
                     'target_ms_per_rep': args.target_ms, 'border': 'reflect-101',
                     'ksize': '2 ceil(4 sigma) + 1, sigmaX = sigmaY = sigma',
                     'data': f'numpy default_rng({args.seed}): integers uniform over every '
                             'bit, float32 uniform in [0, 1000)',
                     'statistic': 'median per-call ms over all repetitions of all rounds'},
                    start=quiet, max_load=args.max_load)
    rng = np.random.default_rng(args.seed)
    sigmas = [float(s) for s in args.sigmas.split(',')]
    with tempfile.TemporaryDirectory() as tmp:
        for res in [int(r) for r in args.resolutions.split(',')]:
            for fmt in args.formats.split(','):
                frame = random_frame(rng, fmt, res)
                frame_path = os.path.join(tmp, 'frame.raw')
                out_path = os.path.join(tmp, 'out.raw')
                frame.tofile(frame_path)
                for sigma in sigmas:
                    result['cases'].append(
                        run_case(args, frame, frame_path, out_path, res, fmt, sigma))
    write(args, 'gauss-cpu', result, table)


def run_case(args, frame, frame_path, out_path, res, fmt, sigma):
    ours, theirs, load, procs = [], [], [], []
    ours_cpu, theirs_cpu, path = [], [], None
    for _ in range(args.rounds):
        load.append(os.getloadavg()[0])
        procs.append(runnable())
        r = starsift(args, frame_path, res, res, fmt, sigma, output=out_path)
        ours += r['ms_per_call']
        ours_cpu.append(r['cpu_per_wall'])
        path = r['path']
        ms, cpu = time_calls_cpu(lambda: opencv_blur(frame, sigma), args.reps, args.target_ms)
        theirs += ms
        theirs_cpu.append(cpu)
    mine = np.fromfile(out_path, dtype=frame.dtype).reshape(frame.shape)
    diff = np.abs(mine.astype(np.float64) - opencv_blur(frame, sigma).astype(np.float64))
    other = None
    if sigma >= RECURSIVE_FROM_SIGMA:
        other = 'direct'
    elif sigma >= RECURSION_MIN_SIGMA:
        other = 'recursive'
    other_ms = None
    if other:
        other_ms = starsift(args, frame_path, res, res, fmt, sigma, impl=other,
                            reps=3)['ms_median']
    case = {'width': res, 'height': res, 'format': fmt, 'sigma': sigma,
            'ksize': 2 * math.ceil(4 * sigma) + 1, 'path': path,
            'starsift_ms': median(ours), 'opencv_ms': median(theirs),
            'starsift_ms_reps': ours, 'opencv_ms_reps': theirs,
            'starsift_cpu_per_wall': ours_cpu, 'opencv_cpu_per_wall': theirs_cpu,
            'other_path': other, 'other_path_ms': other_ms,
            'max_abs_diff_vs_opencv': float(diff.max()),
            'differing_samples_vs_opencv': int(np.count_nonzero(diff)),
            'loadavg_1min': load, 'runnable': procs}
    add_rates(case, res * res)
    print(f"{res}² {fmt} sigma {sigma:g}: starsift {case['starsift_ms']:.3f} ms ({path}), "
          f"OpenCV {case['opencv_ms']:.3f} ms, ratio {case['time_ratio_vs_opencv']:.2f}, "
          f"max|diff| {case['max_abs_diff_vs_opencv']:.3g}, load {load}, runnable {procs}, "
          f"cpu/wall {ours_cpu} / {[round(c, 2) for c in theirs_cpu]}", file=sys.stderr)
    return case


def table(r):
    m = r['method']
    start = r['start']
    lines = [
        '# CPU Gaussian blur: starsift vs OpenCV cv2.GaussianBlur', '',
        f"{r['machine'] or 'machine not described'}; CPU `{r['cpu']}`, {r['cores']} cores; "
        f"OpenCV {r['opencv']} ({'; '.join(r['opencv_parallel'])}); starsift {r['commit']}; "
        f"{r['date_utc']}. Waited {start['waited_s']} s for a load average under "
        f"{r['max_load']} ({'reached' if start['quiet'] else 'not reached'}); load average "
        f"(1 min) at start {r['loadavg_start'][0]:.2f}, at end {r['loadavg_end'][0]:.2f}.", '',
        f"{m['threads']} threads each; border reflect-101; ksize {m['ksize']}; {m['data']}; "
        f"{m['statistic']} ({m['rounds']} rounds × {m['reps']} repetitions of "
        f"~{m['target_ms_per_rep']:.0f} ms, starsift and OpenCV alternating). starsift is the "
        "CPU GaussStage's path: `direct` (GaussCpu, the reference's sums bit for bit) below "
        "sigma 25, `recursive` (GaussIir, Deriche) from 25. Ratio = starsift ms ÷ OpenCV ms "
        "(below 1: starsift faster; the target is ≤ 2). max |diff| compares the two outputs in "
        "the format's units (OpenCV blurs 8- and 16-bit frames in fixed point). The other path: "
        "starsift's other algorithm, timed once. load: 1-minute load average before each round "
        "(the benchmark's own two threads raise it towards 2; the JSON's `runnable` counts the "
        "threads ready to run, this one included); cpu/wall: CPU seconds per wall second while "
        "timing, the lowest of the rounds (2: both cores busy; about 1: that side ran on one "
        "thread, as OpenCV 4.6's float GaussianBlur did here with setNumThreads(2)).", '',
        '| frame | format | sigma | ksize | starsift ms | Mpix/s | OpenCV ms | Mpix/s | ratio | '
        'max \\|diff\\| | differing | other path ms | load | cpu/wall ours, OpenCV |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for c in r['cases']:
        other = (f"{c['other_path_ms']:.2f} ({c['other_path']})"
                 if c['other_path_ms'] is not None else '–')
        ratio = c['time_ratio_vs_opencv']
        px = c['width'] * c['height']
        lines.append(
            f"| {c['width']}² | {c['format']} | {c['sigma']:g} | {c['ksize']} | "
            f"{c['starsift_ms']:.2f} ({c['path']}) | {c['starsift_mpix_per_s']:.0f} | "
            f"{c['opencv_ms']:.2f} | {c['opencv_mpix_per_s']:.0f} | "
            f"{'**' if ratio > 2 else ''}{ratio:.2f}{'**' if ratio > 2 else ''} | "
            f"{c['max_abs_diff_vs_opencv']:.3g} | "
            f"{100.0 * c['differing_samples_vs_opencv'] / px:.1f} % | {other} | "
            f"{', '.join(f'{l:.1f}' for l in c['loadavg_1min'])} | "
            f"{min(c['starsift_cpu_per_wall']):.1f}, {min(c['opencv_cpu_per_wall']):.1f} |")
    beyond = [c for c in r['cases'] if c['time_ratio_vs_opencv'] > 2]
    lines += ['', f"Cases beyond 2× OpenCV's time: {len(beyond)} of {len(r['cases'])}"
              + (': ' + ', '.join(f"{c['width']}² {c['format']} sigma {c['sigma']:g} "
                                  f"({c['time_ratio_vs_opencv']:.2f}×)" for c in beyond)
                 if beyond else '.')]
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    main()
