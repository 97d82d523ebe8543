# SPDX-License-Identifier: LGPL-2.1-or-later
"""How the CuPy peers (cupy_median.py, cupy_gauss.py) time a filter, the way the starsift
benchmarks time starsift's: input+output pairs rotated beyond twice the L2 (at least 3), CUDA
events around each repetition, the median of the repetitions per call; and the result's
header (device, method) and where it is written.
"""

import datetime
import json
import math
import statistics
import sys


def add_run_args(p, unit, quick_help):
    """The options both peers take after their own; `unit` names what --skip-s skips (the
    sigma, the size) and `quick_help` what --quick runs."""
    p.add_argument("--reps", type=int, help="repetitions, the median reported [5]")
    p.add_argument("--target-ms", type=float, help="GPU time per repetition [100]")
    p.add_argument("--slow-ms", type=float, default=100.0,
                   help="a call slower than this gets at most 3 repetitions of 1 call")
    p.add_argument("--skip-s", type=float, default=5.0,
                   help=f"a single call slower than this skips the {unit} and larger ones")
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="write the JSON there instead of stdout")


def finish_args(p, args, formats):
    """--reps and --target-ms by --quick where not given; --formats as a list, each one of
    `formats`."""
    if args.reps is None:
        args.reps = 1 if args.quick else 5
    if args.target_ms is None:
        args.target_ms = 20.0 if args.quick else 100.0
    args.formats = [f for f in args.formats.split(",") if f]
    for f in args.formats:
        if f not in formats:
            p.error(f"unknown format {f!r}; allowed: {', '.join(formats)}")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def make_frames(cp, width, height, dtype, l2_bytes, seed, channels=1):
    """Input/output pairs whose total exceeds twice the L2 (at least 3), random inputs."""
    import numpy as np

    shape = (height, width) if channels == 1 else (height, width, channels)
    pair_bytes = 2 * width * height * channels * np.dtype(dtype).itemsize
    count = max(3, 2 * l2_bytes // pair_bytes + 1)
    rs = cp.random.RandomState(seed)
    inputs, outputs = [], []
    for _ in range(count):
        if dtype == "float32":
            a = rs.uniform(-1000.0, 1000.0, size=shape, dtype=np.float32)
        else:
            a = rs.randint(0, int(np.iinfo(dtype).max) + 1, size=shape).astype(dtype)
        inputs.append(a)
        outputs.append(cp.empty_like(a))
    cp.cuda.runtime.deviceSynchronize()
    return inputs, outputs


def time_calls(cp, call, frames, calls, start_index):
    """GPU milliseconds per call of `calls` calls, rotating from `start_index`."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for k in range(calls):
        call((start_index + k) % frames)
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / calls


def measure(cp, call, frames, args):
    """Cold call (kernel compilation), one timed call, then repetitions; None when too slow."""
    call(0)
    cp.cuda.runtime.deviceSynchronize()
    estimate = time_calls(cp, call, frames, 1, 1 % frames)
    if estimate > args.skip_s * 1000.0:
        return None, estimate
    reps = max(args.reps, 1)
    if estimate >= args.slow_ms:
        calls = 1
        reps = min(reps, 3)
    else:
        if estimate * frames <= 2.0 * args.target_ms:  # warm every frame, refine the estimate
            estimate = time_calls(cp, call, frames, frames, 0)
        calls = max(1, round(args.target_ms / max(estimate, 1e-4)))
        if calls >= frames:
            calls = frames * math.ceil(calls / frames)
    samples = []
    index = 0
    for _ in range(reps):
        samples.append(time_calls(cp, call, frames, calls, index))
        index = (index + calls) % frames
    return {"ms_median": statistics.median(samples), "ms_min": min(samples), "ms_reps": samples,
            "calls_per_rep": calls, "launch": "stream"}, estimate


def header(cp, args, benchmark, **method):
    """The result before its cases, and the device's L2 in bytes; `method` goes into the
    method after its mode."""
    cp.cuda.Device(args.device).use()
    props = cp.cuda.runtime.getDeviceProperties(args.device)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    l2_bytes = int(props["l2CacheSize"])

    def cuda_version(v):
        return f"{v // 1000}.{v % 1000 // 10}"

    out = {
        "benchmark": benchmark,
        "peer": "cupy",
        "cupy_version": cp.__version__,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": {
            "name": name,
            "index": args.device,
            "compute_capability": f"{props['major']}.{props['minor']}",
            "l2_bytes": l2_bytes,
            "driver_cuda_version": cuda_version(cp.cuda.runtime.driverGetVersion()),
            "runtime_version": cuda_version(cp.cuda.runtime.runtimeGetVersion()),
        },
        "method": {
            "cache": "rotating",
            "frames_rule": "input+output pairs > 2 x L2, at least 3",
            "timing": "cuda events around each repetition, after warm-up",
            "statistic": "median of repetitions, per call",
            "reps": args.reps,
            "target_ms_per_rep": args.target_ms,
            "mode": "mirror (reflect-101)",
            **method,
            "data": "uniform random samples (GRAY32F: [-1000, 1000))",
            "seed": args.seed,
            "caps": {"slow_ms": args.slow_ms, "skip_s": args.skip_s},
        },
        "cases": [],
    }
    return out, l2_bytes


def write(out, path):
    """The JSON to `path`, or to stdout without one."""
    text = json.dumps(out, indent=2) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
        log(f"wrote {path}")
    else:
        sys.stdout.write(text)
