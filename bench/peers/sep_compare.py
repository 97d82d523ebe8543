#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""siftdetect's catalogue against SEP (Source Extractor as a library) on the same static frames.

For each seed: `starsift sky` renders one 16-bit PNG star field (no movers); siftdetect runs on
it through GStreamer (filesrc ! pngdec ! videoconvert ! siftdetect, its defaults: mesh 64,
3 x 3 filter, 8-connected, min-area 3; but threshold 5 sigma of the filtered noise, SEP's)
and writes JSON lines;
SEP runs on the same pixels with the same choices: Background(bw=bh=64, fw=fh=1: no median
filter of the mesh, as siftdetect), extract() on the frame less the background with the same
3 x 3 kernel, filter_type='matched' with the per-pixel rms (so the threshold is in sigmas of
the filtered noise, as siftdetect's), thresh 5, minarea 3, no deblending (deblend_cont 1),
no cleaning.

Objects are matched one to one, nearest first, within --radius px. Reported: how many each
found, the matched fraction of each, and over the matches the centroid difference (median and
90 %) and the flux ratio (median, and the 10..90 % range). JSON on stdout (or --json FILE).

Needs python3-sep, python3-numpy, python3-pil, GStreamer with the starsift plugin on
GST_PLUGIN_PATH, and `starsift` (--starsift).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import sep
from PIL import Image

SEX_KERNEL = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=np.float32)


def render(starsift, out_dir, size, seed):
    subprocess.run([starsift, "sky", "--out", out_dir, "--frames", "1", "--movers", "0",
                    "--width", str(size), "--height", str(size), "--seed", str(seed),
                    "--format", "png"], check=True, stdout=subprocess.DEVNULL, timeout=120)
    return os.path.join(out_dir, "frame_000000.png")


def siftdetect(png, json_path):
    pipeline = (f"filesrc location={png} ! pngdec ! videoconvert ! "
                f"video/x-raw,format=GRAY16_LE ! siftdetect threshold=5 "
                f"json-file={json_path} ! fakesink")
    subprocess.run(["gst-launch-1.0", "-q"] + pipeline.split(), check=True, timeout=120,
                    stdout=subprocess.DEVNULL)
    with open(json_path) as f:
        record = json.loads(f.readline())
    objects = record["objects"]
    return (np.array([[o["x"], o["y"]] for o in objects]), np.array([o["flux"] for o in objects]))


def sep_extract(png):
    data = np.asarray(Image.open(png)).astype(np.float32)
    data = np.ascontiguousarray(data)
    bkg = sep.Background(data, bw=64, bh=64, fw=1, fh=1)
    objects = sep.extract(data - bkg.back(), 5.0, err=bkg.rms(), minarea=3,
                          filter_kernel=SEX_KERNEL, filter_type="matched",
                          deblend_cont=1.0, clean=False)
    return np.column_stack([objects["x"], objects["y"]]), objects["flux"]


def match(a, b, radius):
    """One-to-one matches (i, j), nearest pairs first, within radius."""
    if len(a) == 0 or len(b) == 0:
        return []
    d = np.hypot(a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1])
    pairs = np.argwhere(d <= radius)
    pairs = pairs[np.argsort(d[pairs[:, 0], pairs[:, 1]])]
    used_a, used_b, out = set(), set(), []
    for i, j in pairs:
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        out.append((i, j))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starsift", default="starsift")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--radius", type=float, default=1.0, help="match radius, px [1]")
    ap.add_argument("--json", help="write the report here instead of stdout")
    args = ap.parse_args()

    per_seed, dxy, ratio = [], [], []
    n_sift = n_sep = n_match = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in [int(s) for s in args.seeds.split(",")]:
            out_dir = os.path.join(tmp, f"sky{seed}")
            png = render(args.starsift, out_dir, args.size, seed)
            xy_sift, flux_sift = siftdetect(png, os.path.join(tmp, f"det{seed}.jsonl"))
            xy_sep, flux_sep = sep_extract(png)
            m = match(xy_sift, xy_sep, args.radius)
            for i, j in m:
                dxy.append(float(np.hypot(*(xy_sift[i] - xy_sep[j]))))
                if flux_sep[j] > 0:
                    ratio.append(float(flux_sift[i] / flux_sep[j]))
            per_seed.append({"seed": seed, "siftdetect": len(xy_sift), "sep": len(xy_sep),
                             "matched": len(m)})
            n_sift += len(xy_sift)
            n_sep += len(xy_sep)
            n_match += len(m)
            print(f"seed {seed}: siftdetect {len(xy_sift)}, SEP {len(xy_sep)}, matched {len(m)}",
                  file=sys.stderr)

    report = {
        "size": args.size, "radius_px": args.radius, "sep_version": sep.__version__,
        "per_seed": per_seed, "siftdetect": n_sift, "sep": n_sep, "matched": n_match,
        "matched_fraction_of_siftdetect": n_match / max(n_sift, 1),
        "matched_fraction_of_sep": n_match / max(n_sep, 1),
        "centroid_diff_px": {"median": float(np.median(dxy)), "p90": float(np.percentile(dxy, 90))},
        "flux_ratio_sift_over_sep": {"median": float(np.median(ratio)),
                                     "p10": float(np.percentile(ratio, 10)),
                                     "p90": float(np.percentile(ratio, 90))},
    }
    text = json.dumps(report, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
