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
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

FORMATS = {'GRAY8': np.uint8, 'GRAY16_LE': np.uint16, 'GRAY32F': np.float32}
RECURSIVE_FROM_SIGMA = 25.0  # GaussParams::kRecursiveFromSigma
RECURSION_MIN_SIGMA = 5.0    # time the recursion as the other path from here (GaussIir takes 3)


def time_calls(call, reps, target_ms):
    call()
    t0 = time.perf_counter()
    call()
    estimate = (time.perf_counter() - t0) * 1e3
    calls = max(1, int(target_ms / max(estimate, 1e-3)))
    out = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        out.append((time.perf_counter() - t0) * 1e3 / calls)
    cpu_per_wall = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    return out, cpu_per_wall


def starsift(args, frame_path, w, h, fmt, sigma, impl='stage', output=None, reps=None):
    cmd = [args.bench, '--input', frame_path, '--width', str(w), '--height', str(h),
           '--format', fmt, '--sigma', str(sigma), '--border', 'reflect-101', '--impl', impl,
           '--threads', str(args.threads), '--reps', str(reps or args.reps),
           '--target-ms', str(args.target_ms)]
    if output:
        cmd += ['--output', output]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def opencv_blur(frame, sigma):
    k = 2 * math.ceil(4 * sigma) + 1
    return cv2.GaussianBlur(frame, (k, k), sigmaX=sigma, sigmaY=sigma,
                            borderType=cv2.BORDER_REFLECT_101)


def random_frame(rng, fmt, res):
    dtype = FORMATS[fmt]
    if dtype == np.float32:
        return rng.uniform(0.0, 1000.0, size=(res, res)).astype(np.float32)
    return rng.integers(0, np.iinfo(dtype).max + 1, size=(res, res), dtype=dtype)


def median(values):
    s = sorted(values)
    return s[len(s) // 2]


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


def cpu_name():
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bench', default='build/bench/starsift-bench-gauss-cpu')
    ap.add_argument('--out', default='bench/results/gauss-cpu')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--target-ms', type=float, default=150)
    ap.add_argument('--resolutions', default='1024,2048')
    ap.add_argument('--formats', default='GRAY8,GRAY16_LE,GRAY32F')
    ap.add_argument('--sigmas', default='0.5,1,2,3,5,10,25,50')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--max-load', type=float, default=0.7,
                    help='wait for a 1-minute load average under this before starting')
    ap.add_argument('--wait-s', type=float, default=300, help='wait at most this long')
    ap.add_argument('--machine', default='', help='free text naming the machine')
    ap.add_argument('--quick', action='store_true', help='1 round of 3 repetitions of ~30 ms')
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.reps, args.target_ms = 1, 3, 30
    cv2.setNumThreads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True,
                            text=True).stdout.strip() or None
    quiet = wait_quiet(args.max_load, args.wait_s)
    print(f"start: waited {quiet['waited_s']} s, load average {quiet['loadavg']}",
          file=sys.stderr)
    result = {
        'benchmark': 'gauss-cpu',
        'date_utc': datetime.datetime.utcnow().isoformat(timespec='seconds') + 'Z',
        'commit': commit, 'machine': args.machine, 'cpu': cpu_name(), 'cores': os.cpu_count(),
        'start': quiet, 'max_load': args.max_load, 'loadavg_start': os.getloadavg(),
        'opencv': cv2.__version__,
        'opencv_parallel': [' '.join(l.split()) for l in cv2.getBuildInformation().splitlines()
                            if 'Parallel framework' in l],
        'method': {'threads': args.threads, 'reps': args.reps, 'rounds': args.rounds,
                   'target_ms_per_rep': args.target_ms, 'border': 'reflect-101',
                   'ksize': '2 ceil(4 sigma) + 1, sigmaX = sigmaY = sigma',
                   'data': f'numpy default_rng({args.seed}): integers uniform over every bit, '
                           'float32 uniform in [0, 1000)',
                   'statistic': 'median per-call ms over all repetitions of all rounds'},
        'cases': []}
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
    result['loadavg_end'] = os.getloadavg()
    with open(os.path.join(args.out, 'gauss-cpu.json'), 'w') as f:
        json.dump(result, f, indent=1)
        f.write('\n')
    with open(os.path.join(args.out, 'gauss-cpu.md'), 'w') as f:
        f.write(table(result))
    print(table(result))


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
        ms, cpu = time_calls(lambda: opencv_blur(frame, sigma), args.reps, args.target_ms)
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
    px = res * res
    case['starsift_mpix_per_s'] = px / (case['starsift_ms'] * 1e3)
    case['opencv_mpix_per_s'] = px / (case['opencv_ms'] * 1e3)
    case['time_ratio_vs_opencv'] = case['starsift_ms'] / case['opencv_ms']
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
        "starsift's other algorithm, timed once. load: 1-minute load average before each round; "
        "cpu/wall: CPU seconds per wall second while timing (2 = both cores each).", '',
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
