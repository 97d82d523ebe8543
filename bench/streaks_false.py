#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the line channel adds on a sky without movers: detections per Mpix-frame.

siftskysrc (the default star field and jitter, movers=0) ! siftwhiten ! siftdetect
(streaks.run_chain(), siftdetect on the CPU backend), with the streak merge off so each detection counts once, for each --detect setting in
turn (the first, empty, is the point channel alone). Nothing moves, so every detection after
--warmup frames is false or a star's residual; what a setting adds over the first is what its
line channel finds in noise and star residuals. JSON on stdout (or --json FILE).
"""

import argparse
import sys
import tempfile

import streaks


def detections(args, detect, seed):
    """Detections and frames scored of one run: streaks.run_chain() with no movers."""
    run = argparse.Namespace(frames=args.frames, seed=seed, movers=0, snr_min=1, snr_max=1,
                             size=args.size, detect=f"backend=cpu {detect} merge-streaks=false")
    with tempfile.TemporaryDirectory() as d:
        rows, _ = streaks.run_chain(run, d, 1, 1)
    scored = [r for r in rows if r["frame"] >= args.warmup]
    return sum(len(r["objects"]) for r in scored), len(scored)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=25)
    ap.add_argument("--seeds", default="3,4")
    ap.add_argument("--detect", action="append",
                    help="siftdetect properties of one setting (repeatable) [off, line-length=15, "
                    "line-length=15 line-threshold=5, line-length=31]")
    ap.add_argument("--json")
    args = ap.parse_args()
    settings = args.detect or ["", "line-length=15", "line-length=15 line-threshold=5",
                               "line-length=31"]
    result = {"settings": vars(args), "runs": []}
    for detect in settings:
        objects = frames = 0
        for seed in (int(s) for s in args.seeds.split(",")):
            n, f = detections(args, detect, seed)
            objects += n
            frames += f
        mpix_frames = frames * args.size * args.size / 1e6
        run = {"detect": detect, "objects": objects, "frames": frames,
               "per_mpix_frame": objects / mpix_frames}
        result["runs"].append(run)
        print(f"{detect or '(point channel alone)'}: {objects} detections in {frames} frames, "
              f"{run['per_mpix_frame']:.3f} per Mpix-frame", file=sys.stderr, flush=True)
    streaks.write_report(result, args.json)


if __name__ == "__main__":
    main()
