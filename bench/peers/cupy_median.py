#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CuPy's median filter, timed the way starsift-bench times starsift's.

cupyx.scipy.ndimage.median_filter with mode='mirror' (SciPy's name for reflect-101:
dcb|abcd|cba) on GRAY8 / GRAY16_LE / GRAY32F frames, rotated through input+output pairs
larger than twice the L2 (at least 3), CUDA events around each repetition, the median of
the repetitions reported per call. Slow cases are capped: fewer calls when one call takes
more than --slow-ms, and a size whose single call exceeds --skip-s seconds is skipped
(with the larger sizes of the same format and resolution), saying so in the JSON.

JSON on stdout (or --json FILE), progress on stderr. Cases carry "peer": "cupy" and the
fields starsift-bench uses for the same case.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cupy_timing import (add_run_args, finish_args, header, log, make_frames,  # noqa: E402
                         measure, write)

FORMATS = {"GRAY8": "uint8", "GRAY16_LE": "uint16", "GRAY32F": "float32"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", help="odd window sides [3,5,7,9,11,13,15]")
    p.add_argument("--formats", default="GRAY8,GRAY16_LE,GRAY32F", help=",".join(FORMATS))
    p.add_argument("--resolutions", default="1920x1080,4096x4096", help="WxH,...")
    add_run_args(p, "size", "sizes 3,7,15 (unless --sizes), 1 repetition of ~20 ms")
    args = p.parse_args()
    if args.sizes is None:
        args.sizes = "3,7,15" if args.quick else "3,5,7,9,11,13,15"
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    finish_args(p, args, FORMATS)
    args.resolutions = [tuple(int(v) for v in r.split("x")) for r in args.resolutions.split(",") if r]
    return args


def main():
    args = parse_args()
    try:
        import cupy as cp
        from cupyx.scipy import ndimage
    except ImportError as e:
        write({"benchmark": "median", "peer": "cupy", "cases": [],
               "error": f"CuPy not importable: {e}"}, args.json)
        log(f"cupy_median: CuPy not importable: {e}")
        return 1

    out, l2_bytes = header(cp, args, "median")
    began = time.time()
    for width, height in args.resolutions:
        for fmt in args.formats:
            dtype = FORMATS[fmt]
            log(f"cupy frames {width}x{height} {fmt}: allocating and filling")
            inputs, outputs = make_frames(cp, width, height, dtype, l2_bytes, args.seed)
            frames = len(inputs)
            skip_reason = None
            for size in args.sizes:
                case = {"filter": "median", "peer": "cupy", "size": size, "format": fmt,
                        "width": width, "height": height, "schedule": None, "mode": "mirror",
                        "frames": frames, "cache": "rotating"}
                if skip_reason:
                    case["skipped"] = skip_reason
                    out["cases"].append(case)
                    log(f"cupy {width}x{height} {fmt} {size}x{size}: skipped ({skip_reason})")
                    continue

                def call(i, size=size):
                    ndimage.median_filter(inputs[i], size=size, mode="mirror", output=outputs[i])

                try:
                    timing, estimate = measure(cp, call, frames, args)
                except Exception as e:  # a CuPy failure is a result too, not the end of the run
                    case["error"] = f"{type(e).__name__}: {e}"
                    out["cases"].append(case)
                    log(f"cupy {width}x{height} {fmt} {size}x{size}: FAILED: {case['error']}")
                    continue
                if timing is None:
                    skip_reason = (f"one call of {size}x{size} took {estimate / 1000.0:.1f} s "
                                   f"(> {args.skip_s:g} s)")
                    case["skipped"] = skip_reason
                    out["cases"].append(case)
                    log(f"cupy {width}x{height} {fmt} {size}x{size}: skipped ({skip_reason})")
                    continue
                gpix = width * height / (timing["ms_median"] * 1e-3) * 1e-9
                case.update({"ms_median": timing["ms_median"], "gpix_per_s": gpix,
                             "timing": timing})
                out["cases"].append(case)
                log(f"cupy {width}x{height} {fmt} {size}x{size}: {timing['ms_median']:.4f} ms, "
                    f"{gpix:.2f} Gpix/s ({timing['calls_per_rep']} calls x "
                    f"{len(timing['ms_reps'])} reps)")
            del inputs, outputs
            cp.get_default_memory_pool().free_all_blocks()
    out["seconds"] = round(time.time() - began, 1)
    write(out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
