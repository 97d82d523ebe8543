#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CuPy's Gaussian filter, timed the way starsift-bench-gauss times starsift's.

cupyx.scipy.ndimage.gaussian_filter with mode='mirror' (SciPy's name for reflect-101:
dcb|abcd|cba) and the truncation that gives starsift's radius, ceil(4 sigma) (truncate=4.0
for every sigma whose 4 sigma is a whole number; CuPy's radius is int(truncate * sigma + 0.5)),
on GRAY8 / GRAY16_LE / GRAY32F frames and RGBA (an H x W x 4 array, sigma 0 along the
channels), rotated through input+output pairs larger than twice the L2 (at least 3), CUDA
events around each repetition, the median of the repetitions reported per call. A call slower
than --slow-ms gets at most 3 repetitions of one call; a sigma whose single call exceeds
--skip-s seconds is skipped with the larger sigmas of that format and size, saying so.

JSON on stdout (or --json FILE), progress on stderr. Cases carry "peer": "cupy" and the
fields starsift-bench-gauss uses for the same case.
"""

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cupy_timing import (add_run_args, finish_args, header, log, make_frames,  # noqa: E402
                         measure, write)

FORMATS = {"GRAY8": ("uint8", 1), "GRAY16_LE": ("uint16", 1), "GRAY32F": ("float32", 1),
           "RGBA": ("uint8", 4)}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sigmas", help="sigmas in px [0.5,1,2,3,5,10,25,50]")
    p.add_argument("--sizes", "--resolutions", dest="sizes", default="4096x4096",
                   help="frame sizes WxH,... [4096x4096]")
    p.add_argument("--formats", default="GRAY8,GRAY16_LE,GRAY32F,RGBA", help=",".join(FORMATS))
    add_run_args(p, "sigma", "sigmas 1,3,25 (unless --sigmas), 1 repetition of ~20 ms")
    args = p.parse_args()
    if args.sigmas is None:
        args.sigmas = "1,3,25" if args.quick else "0.5,1,2,3,5,10,25,50"
    args.sigmas = [float(s) for s in args.sigmas.split(",") if s]
    for s in args.sigmas:
        if not s > 0:
            p.error(f"sigma {s} is not allowed; allowed: > 0")
    finish_args(p, args, FORMATS)
    args.sizes = [tuple(int(v) for v in r.split("x")) for r in args.sizes.split(",") if r]
    return args


def radius_of(sigma):
    """starsift's radius: ceil(4 sigma), at least 1."""
    return max(1, math.ceil(4.0 * sigma))


def truncate_for(sigma):
    """The truncate that makes CuPy's int(truncate * sigma + 0.5) equal starsift's radius."""
    r = radius_of(sigma)
    t = r / sigma
    assert int(t * sigma + 0.5) == r
    return t


def main():
    args = parse_args()
    try:
        import cupy as cp
        from cupyx.scipy import ndimage
    except ImportError as e:
        write({"benchmark": "gauss", "peer": "cupy", "cases": [],
               "error": f"CuPy not importable: {e}"}, args.json)
        log(f"cupy_gauss: CuPy not importable: {e}")
        return 1

    out, l2_bytes = header(cp, args, "gauss",
                           radius="ceil(4 sigma), through truncate = radius / sigma")
    began = time.time()
    for width, height in args.sizes:
        for fmt in args.formats:
            dtype, channels = FORMATS[fmt]
            log(f"cupy frames {width}x{height} {fmt}: allocating and filling")
            inputs, outputs = make_frames(cp, width, height, dtype, l2_bytes, args.seed, channels)
            frames = len(inputs)
            skip_reason = None
            for sigma in sorted(args.sigmas):
                truncate = truncate_for(sigma)
                radius = radius_of(sigma)
                case = {"filter": "gauss", "peer": "cupy", "sigma": sigma, "radius": radius,
                        "truncate": truncate, "format": fmt, "width": width, "height": height,
                        "path": None, "mode": "mirror", "frames": frames, "cache": "rotating"}
                label = f"cupy {width}x{height} {fmt} sigma {sigma:g} (r {radius})"
                if skip_reason:
                    case["skipped"] = skip_reason
                    out["cases"].append(case)
                    log(f"{label}: skipped ({skip_reason})")
                    continue
                sigmas = (sigma, sigma) if channels == 1 else (sigma, sigma, 0.0)

                def call(i, sigmas=sigmas, truncate=truncate):
                    ndimage.gaussian_filter(inputs[i], sigmas, mode="mirror", truncate=truncate,
                                            output=outputs[i])

                try:
                    timing, estimate = measure(cp, call, frames, args)
                except Exception as e:  # a CuPy failure is a result too, not the end of the run
                    case["error"] = f"{type(e).__name__}: {e}"
                    out["cases"].append(case)
                    log(f"{label}: FAILED: {case['error']}")
                    continue
                if timing is None:
                    skip_reason = (f"one call of sigma {sigma:g} took {estimate / 1000.0:.1f} s "
                                   f"(> {args.skip_s:g} s)")
                    case["skipped"] = skip_reason
                    out["cases"].append(case)
                    log(f"{label}: skipped ({skip_reason})")
                    continue
                gpix = width * height / (timing["ms_median"] * 1e-3) * 1e-9
                case.update({"ms_median": timing["ms_median"], "gpix_per_s": gpix,
                             "timing": timing})
                out["cases"].append(case)
                log(f"{label}: {timing['ms_median']:.4f} ms, {gpix:.2f} Gpix/s "
                    f"({timing['calls_per_rep']} calls x {len(timing['ms_reps'])} reps)")
            del inputs, outputs
            cp.get_default_memory_pool().free_all_blocks()
    out["seconds"] = round(time.time() - began, 1)
    write(out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
