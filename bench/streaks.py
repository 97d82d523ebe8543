#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fast movers through the default science chain: does each streak come out as one object, with
its length and angle?

siftskysrc (movers at --speeds px/frame, peak SNR --snr-min..--snr-max, the default star field
and jitter) ! siftwhiten ! siftdetect, every property else at its default, the catalogue and the
sky's truth written as JSON lines. Frames before --warmup (whitening's history filling) are not
scored, nor movers whose streak comes within --border px of an edge.

Per mover and scored frame, the objects whose centroid lies within --radius px of the streak
(the segment of length |v| through the truth's mid-exposure centre, along v) are counted:
found = at least one; one object = exactly one. For the one-object cases the catalogue's
`length` (its extent along the major axis) against |v| plus the PSF's extent, and its `theta`
against the direction of v (modulo pi). JSON on stdout (or --json FILE).

--detect passes siftdetect properties (e.g. "merge-streaks=false" for the catalogue as detected,
pieces unmerged). Merged records (flag 16) are counted per scored frame, and apart those whose
centroid lies within --radius px of no mover's streak: false merges.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


def run_chain(args, out_dir, speed_min, speed_max):
    det = os.path.join(out_dir, "det.jsonl")
    truth = os.path.join(out_dir, "truth.jsonl")
    pipeline = (
        f"siftskysrc num-buffers={args.frames} seed={args.seed} movers={args.movers} mover-speed-min={speed_min} "
        f"mover-speed-max={speed_max} mover-snr-min={args.snr_min} mover-snr-max={args.snr_max} "
        f"truth-file={truth} ! video/x-raw,format=GRAY16_LE,width={args.size},"
        f"height={args.size} ! siftwhiten ! siftdetect {args.detect} json-file={det} ! fakesink")
    subprocess.run(["gst-launch-1.0", "-q"] + pipeline.split(), check=True, timeout=600,
                   stdout=subprocess.DEVNULL)
    with open(det) as f:
        detections = [json.loads(line) for line in f]
    with open(truth) as f:
        truths = [json.loads(line) for line in f]
    return detections, truths


def write_report(report, path):
    """The report as indented JSON into `path`, or on stdout when there is none."""
    text = json.dumps(report, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


def distance_to_segment(px, py, x0, y0, x1, y1):
    dx, dy = x1 - x0, y1 - y0
    n2 = dx * dx + dy * dy
    t = 0.0 if n2 == 0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / n2))
    return math.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


def angle_diff(a, b):
    """|a - b| modulo pi, in [0, pi/2]."""
    d = (a - b) % math.pi
    return min(d, math.pi - d)


def percentile(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1))))]


def score(args, detections, truths):
    by_frame = {d["frame"]: d["objects"] for d in detections}
    trials = found = one = 0
    frames = merged = merged_away = 0
    length_err, angle_err = [], []
    for t in truths:
        if t["frame"] < args.warmup or t["frame"] not in by_frame:
            continue
        objects = by_frame[t["frame"]]
        frames += 1
        segments = [(m["x"] - 0.5 * m["vx"], m["y"] - 0.5 * m["vy"], m["x"] + 0.5 * m["vx"],
                     m["y"] + 0.5 * m["vy"]) for m in t["movers"]]
        for o in objects:
            if o["flags"] & 16:
                merged += 1
                if all(distance_to_segment(o["x"], o["y"], *seg) > args.radius for seg in segments):
                    merged_away += 1
        for m in t["movers"]:
            x0, y0 = m["x"] - 0.5 * m["vx"], m["y"] - 0.5 * m["vy"]
            x1, y1 = m["x"] + 0.5 * m["vx"], m["y"] + 0.5 * m["vy"]
            b = args.border
            if min(x0, x1) < b or min(y0, y1) < b or max(x0, x1) > args.size - 1 - b or \
                    max(y0, y1) > args.size - 1 - b:
                continue
            trials += 1
            near = [o for o in objects
                    if distance_to_segment(o["x"], o["y"], x0, y0, x1, y1) <= args.radius]
            if near:
                found += 1
            if len(near) == 1:
                one += 1
                o = near[0]
                speed = math.hypot(m["vx"], m["vy"])
                length_err.append((o["length"] - speed) / speed)
                angle_err.append(angle_diff(o["theta"], math.atan2(m["vy"], m["vx"])))
    return {
        "trials": trials,
        "found": found / max(trials, 1),
        "one_object": one / max(trials, 1),
        "length_minus_speed_over_speed": {"median": percentile(length_err, 50),
                                          "p10": percentile(length_err, 10),
                                          "p90": percentile(length_err, 90)},
        "angle_error_rad": {"median": percentile(angle_err, 50), "p90": percentile(angle_err, 90)},
        "merged_per_frame": merged / max(frames, 1),
        "merged_away_from_movers_per_frame": merged_away / max(frames, 1),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=25)
    ap.add_argument("--movers", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--speeds", default="10-15,15-20,20-30", help="ranges, px/frame")
    ap.add_argument("--snr-min", type=float, default=8.0)
    ap.add_argument("--snr-max", type=float, default=12.0)
    ap.add_argument("--radius", type=float, default=3.0)
    ap.add_argument("--border", type=float, default=16.0)
    ap.add_argument("--detect", default="", help="siftdetect properties, e.g. merge-streaks=false")
    ap.add_argument("--json")
    args = ap.parse_args()

    report = {"settings": vars(args), "bands": []}
    with tempfile.TemporaryDirectory() as tmp:
        for band in args.speeds.split(","):
            lo, hi = (float(v) for v in band.split("-"))
            detections, truths = run_chain(args, tmp, lo, hi)
            r = score(args, detections, truths)
            r["speed_px_per_frame"] = [lo, hi]
            report["bands"].append(r)
            print(f"{lo:g}-{hi:g} px/frame: {r['trials']} trials, found {100 * r['found']:.1f} %, "
                  f"one object {100 * r['one_object']:.1f} %, length {r['length_minus_speed_over_speed']}, "
                  f"angle {r['angle_error_rad']}, merged/frame {r['merged_per_frame']:.3f} "
                  f"(away from movers {r['merged_away_from_movers_per_frame']:.3f})", file=sys.stderr)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
