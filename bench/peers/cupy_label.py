#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CuPy's connected-component labelling on the masks starsift-bench-labels wrote.

cupyx.scipy.ndimage.label on each DIR/<mask>_<size>.npy (uint8, written by
`starsift-bench-labels --npy DIR`), 4 connectivity (SciPy's default cross) and 8 (a 3x3 block),
timed by CUDA events around each call after two warm-ups, the median of --reps calls. label()
returns the component count to the host, so each call includes that synchronisation. The count
is reported so it can be compared with starsift's.

With --stats, also label + the least a catalogue needs: each component's pixel count and
flux (ndimage.sum_labels) and centroid (ndimage.center_of_mass), on the mask as the image
(starsift-bench-labels times its whole detection, which computes these and more, on the same
masks). Skipped beyond --stats-max-components components (CuPy's per-label reductions grow
with the count).

With --bincount, also label + the statistics the way a CuPy user would write them for many
objects: the foreground's labels and coordinates, then cp.bincount with weights (pixel
count, flux, the flux-weighted first and second moments x, y, x^2, y^2, xy) and
cupyx.scatter_min / scatter_max (bounding box, peak), each a pass over the foreground
pixels, and the centroids and central moments from those sums. That is most of what
starsift's catalogue holds (docs/detect.md), not all of it (no errors, ellipse or flags).

JSON on stdout (or --json FILE), progress on stderr.
"""

import argparse
import glob
import json
import os
import statistics
import sys


def median_ms(cp, call, reps):
    """Median ms of `reps` calls after one warm-up, by CUDA events."""
    call()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    ms = []
    for _ in range(reps):
        start.record()
        call()
        stop.record()
        stop.synchronize()
        ms.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(ms)


def time_stats(cp, ndimage, mask, structure, out, reps):
    """Median ms of label + pixel counts, fluxes and centroids of every component."""
    image = mask.astype(cp.float32)

    def call():
        n = ndimage.label(mask, structure=structure, output=out)
        index = cp.arange(1, n + 1)
        ndimage.sum_labels(mask, out, index)
        ndimage.sum_labels(image, out, index)
        ndimage.center_of_mass(image, out, index)

    return median_ms(cp, call, max(3, reps // 3))


def time_stats_bincount(cp, ndimage, mask, structure, out, reps):
    """Median ms of label + per-object sums by bincount and scatter min/max."""
    import cupyx

    image = mask.astype(cp.float32)
    width = mask.shape[1]

    def call():
        n = int(ndimage.label(mask, structure=structure, output=out))
        labels = out.ravel()
        fg = cp.flatnonzero(labels)
        lab = labels[fg]
        f = image.ravel()[fg]
        yi = (fg // width).astype(cp.int32)
        xi = (fg % width).astype(cp.int32)
        x = xi.astype(cp.float32)
        y = yi.astype(cp.float32)
        m = n + 1
        count = cp.bincount(lab, minlength=m)
        flux = cp.bincount(lab, weights=f, minlength=m)
        sx = cp.bincount(lab, weights=f * x, minlength=m)
        sy = cp.bincount(lab, weights=f * y, minlength=m)
        sxx = cp.bincount(lab, weights=f * x * x, minlength=m)
        syy = cp.bincount(lab, weights=f * y * y, minlength=m)
        sxy = cp.bincount(lab, weights=f * x * y, minlength=m)
        box = [cp.full(m, width, dtype=cp.int32), cp.full(m, -1, dtype=cp.int32),
               cp.full(m, 1 << 30, dtype=cp.int32), cp.full(m, -1, dtype=cp.int32)]
        cupyx.scatter_min(box[0], lab, xi)
        cupyx.scatter_max(box[1], lab, xi)
        cupyx.scatter_min(box[2], lab, yi)
        cupyx.scatter_max(box[3], lab, yi)
        peak = cp.zeros(m, dtype=cp.float32)
        cupyx.scatter_max(peak, lab, f)
        safe = cp.maximum(flux, 1e-30)
        cx, cy = sx / safe, sy / safe
        return count, cx, cy, sxx / safe - cx * cx, syy / safe - cy * cy, sxy / safe - cx * cy

    return median_ms(cp, call, max(3, reps // 3))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="folder of <mask>_<size>.npy files")
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--json", help="write the JSON there instead of stdout")
    p.add_argument("--stats", action="store_true", help="also time label + per-object stats")
    p.add_argument("--stats-max-components", type=int, default=300000)
    p.add_argument("--bincount", action="store_true",
                   help="also time label + per-object stats by bincount and scatter min/max")
    args = p.parse_args()
    try:
        import cupy as cp
        import numpy as np
        from cupyx.scipy import ndimage
    except ImportError as e:
        out = {"peer": "cupy", "error": str(e)}
        print(json.dumps(out, indent=2))
        return 0
    structures = {4: None, 8: np.ones((3, 3), dtype=bool)}
    runs = []
    for path in sorted(glob.glob(os.path.join(args.dir, "*.npy"))):
        name, size = os.path.basename(path)[:-4].rsplit("_", 1)
        mask = cp.asarray(np.load(path) != 0)
        for conn, structure in structures.items():
            out = cp.empty(mask.shape, dtype=cp.int32)
            for _ in range(2):
                count = ndimage.label(mask, structure=structure, output=out)
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            ms = []
            for _ in range(args.reps):
                start.record()
                count = ndimage.label(mask, structure=structure, output=out)
                stop.record()
                stop.synchronize()
                ms.append(cp.cuda.get_elapsed_time(start, stop))
            run = {"peer": "cupy", "mask": name, "size": int(size), "connectivity": conn,
                   "components": int(count), "cupy_ms": statistics.median(ms)}
            if args.stats and int(count) <= args.stats_max_components:
                run["cupy_label_stats_ms"] = time_stats(cp, ndimage, mask, structure, out,
                                                        args.reps)
            if args.bincount:
                run["cupy_label_bincount_stats_ms"] = time_stats_bincount(
                    cp, ndimage, mask, structure, out, args.reps)
            print(json.dumps(run), file=sys.stderr, flush=True)
            runs.append(run)
    out = {"peer": "cupy", "cupy_version": cp.__version__, "runs": runs}
    text = json.dumps(out, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
