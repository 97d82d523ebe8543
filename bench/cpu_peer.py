# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the CPU peer benchmarks (bench/*_cpu.py) share: their options, the run of a
starsift-bench-*-cpu binary, the timing of the OpenCV side, the result's header and files.

Timing, both sides alike: one untimed call, one call to estimate the cost, then reps
repetitions of max(1, target-ms / estimate) calls; per-call ms of each repetition.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import time

import cv2


def time_calls_cpu(call, reps, target_ms):
    """Per-call ms of each repetition, and the process's CPU time over wall time while they
    ran (about the thread count when no one else used the cores)."""
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


def time_calls(call, reps, target_ms):
    """Per-call ms of each repetition."""
    return time_calls_cpu(call, reps, target_ms)[0]


def median(values):
    s = sorted(values)
    return s[len(s) // 2]


def cpu_name():
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    return platform.processor()


def parser(doc, name, reps=7, target_ms=200, resolutions='1024,2048'):
    """The options every CPU peer benchmark takes first; `name` names the binary
    (starsift-bench-NAME) and the results folder (bench/results/NAME)."""
    ap = argparse.ArgumentParser(description=doc.split('\n')[0])
    ap.add_argument('--bench', default=f'build/bench/starsift-bench-{name}')
    ap.add_argument('--out', default=f'bench/results/{name}')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--reps', type=int, default=reps)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--target-ms', type=float, default=target_ms)
    ap.add_argument('--resolutions', default=resolutions)
    return ap


def parse(ap, machine_help='free text naming the machine and its load'):
    """Adds --seed, --machine and --quick, parses, applies --quick, and sets OpenCV's thread
    count to --threads and makes --out."""
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--machine', default='', help=machine_help)
    ap.add_argument('--quick', action='store_true', help='1 round of 3 repetitions of ~30 ms')
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.reps, args.target_ms = 1, 3, 30
    cv2.setNumThreads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    return args


def commit():
    return subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True,
                          text=True).stdout.strip() or None


def header(name, args, commit_id, method, **before_load):
    """The result's fields before its cases: what ran, where, and the load at the start;
    `before_load` goes just before loadavg_start."""
    return {
        'benchmark': name,
        'date_utc': datetime.datetime.utcnow().isoformat(timespec='seconds') + 'Z',
        'commit': commit_id, 'machine': args.machine, 'cpu': cpu_name(), 'cores': os.cpu_count(),
        **before_load, 'loadavg_start': os.getloadavg(), 'opencv': cv2.__version__,
        'opencv_parallel': [' '.join(l.split()) for l in cv2.getBuildInformation().splitlines()
                            if 'Parallel framework' in l],
        'method': method,
        'cases': []}


def run_starsift(args, frame_path, w, h, fmt, options, extra=(), output=None, reps=None):
    """Runs the bench binary on a raw frame; `options` come after --format, `extra` last."""
    cmd = [args.bench, '--input', frame_path, '--width', str(w), '--height', str(h),
           '--format', fmt, *options, '--threads', str(args.threads),
           '--reps', str(reps or args.reps), '--target-ms', str(args.target_ms), *extra]
    if output:
        cmd += ['--output', output]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def add_rates(case, px):
    """Mpix/s of both sides and starsift's time over OpenCV's."""
    case['starsift_mpix_per_s'] = px / (case['starsift_ms'] * 1e3)
    case['opencv_mpix_per_s'] = px / (case['opencv_ms'] * 1e3)
    case['time_ratio_vs_opencv'] = case['starsift_ms'] / case['opencv_ms']


def write(args, name, result, table):
    """Ends the result (the load at the end), writes NAME.json and NAME.md into --out and
    prints the table."""
    result['loadavg_end'] = os.getloadavg()
    with open(os.path.join(args.out, f'{name}.json'), 'w') as f:
        json.dump(result, f, indent=1)
        f.write('\n')
    with open(os.path.join(args.out, f'{name}.md'), 'w') as f:
        f.write(table(result))
    print(table(result))


def machine_line(r):
    """The table's line naming the machine, the versions and the load."""
    return (f"{r['machine'] or 'machine not described'}; CPU `{r['cpu']}`, {r['cores']} cores; "
            f"OpenCV {r['opencv']} ({'; '.join(r['opencv_parallel'])}); starsift {r['commit']}; "
            f"{r['date_utc']}. Load average (1 min) at start {r['loadavg_start'][0]:.2f}, at end "
            f"{r['loadavg_end'][0]:.2f}.")
