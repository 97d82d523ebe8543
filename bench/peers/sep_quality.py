#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""SEP (Source Extractor as a library) on the aligned frame difference, scored as `starsift quality` scores the shipped chain.

Reads what `starsift quality --methods difference-aligned --export-difference DIR` wrote
(src/app/quality/difference_export.hpp): for every scored frame of every cell and scene, the
aligned difference F_t - F_{t-1}(moved onto frame t), float32 ADU, the same residual the
harness's `difference-aligned` baseline scores; a map of where a false detection at each pixel
would lie; and the truth (every mover's mid-exposure position and velocity, which of them are
trials).

On each difference SEP runs with detection's defaults (src/pipeline/detect/params.hpp):
Background(bw=bh=64, fw=fh=1: sigma-clipped tiles without a median filter of the mesh, as
siftdetect's mesh), extract() on the difference less that background with Source Extractor's
default 3 x 3 kernel {1 2 1, 2 4 2, 1 2 1}, filter_type='matched' with the mesh's per-pixel rms
(so the threshold is in sigmas of the filtered noise, as siftdetect's), minarea 3, 8-connected,
no deblending (deblend_cont 1), no cleaning; once per threshold of --thresholds.

Each object is scored by the rules of the shipped chain (chain_scoring.cpp, docs/quality.md,
"The shipped chain"): an object whose centroid lies outside the interior is not scored;
otherwise its distance to a mover is the smaller of its centroid's and its peak pixel's
distance to the mover's streak in the exposure; the nearest mover within the hit radius (2 px)
takes it; an object near no mover is a false detection, placed (saturated star, star, hot
pixel, mover, clear) by the exported map at its centroid's nearest pixel. A trial (a mover
inside the interior in a scored frame) is a hit when an object is its.

Thresholds are chosen as the chain's (chain_summary.cpp), per scene: the lowest threshold with
at most --rate false detections per Mpix-frame over every cell (the highest run when none is),
the same counting only the false detections away from stars, and held out: each cell scored at
the threshold so chosen on the other cells.

Writes JSON (--json) and a markdown table (--markdown). With --quality-json (the same run's
quality.json) the shipped chains and the harness's difference-aligned score on the same frames
are put beside it.

Needs python3-sep and python3-numpy (Debian: apt-get install python3-sep python3-numpy).
"""

import argparse
import glob
import json
import os
import sys
import time
from multiprocessing import Pool

try:
    import numpy as np
    import sep
except ImportError as e:  # a benchmark script: say what is missing, do not fail obscurely
    sys.exit(f"sep_quality.py needs python3-sep and python3-numpy ({e}); "
             "on Debian: apt-get install python3-sep python3-numpy")

SEX_KERNEL = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=np.float32)
PLACES = ["saturated-star", "star", "hot-pixel", "mover", "clear"]
OFF_STARS = ("hot-pixel", "mover", "clear")
DEFAULT_THRESHOLDS = [3.5 + 0.25 * i for i in range(15)] + [7.5, 8, 9, 10, 12, 15, 20, 30]


def load_cells(root):
    cells = []
    for path in sorted(glob.glob(os.path.join(root, "*", "*", "cell.json"))):
        d = os.path.dirname(path)
        with open(path) as f:
            cell = json.load(f)
        with open(os.path.join(d, "truth.jsonl")) as f:
            frames = [json.loads(line) for line in f if line.strip()]
        cell["dir"] = d
        cell["frames"] = frames
        cells.append(cell)
    if not cells:
        sys.exit(f"no exported cells under {root} (SCENE/snrS-speedV/cell.json): run "
                 "starsift quality --methods difference-aligned --export-difference DIR")
    return cells


def streak_distances(streaks, px, py):
    """Distances (n_objects, n_streaks) from points to segments (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = (streaks[:, i][None, :] for i in range(4))
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    px, py = px[:, None], py[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(length2 > 0, ((px - x0) * dx + (py - y0) * dy) / length2, 0.0)
    t = np.clip(t, 0.0, 1.0)
    return np.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


def score_frame(job):
    """One frame at every threshold: per threshold, the trials hit (indices into the frame's
    trial list), the false detections by place, and the objects scored."""
    cell, record, thresholds, mesh = job
    data = np.ascontiguousarray(np.load(os.path.join(cell["dir"], record["difference"])),
                                dtype=np.float32)
    places = np.load(os.path.join(cell["dir"], record["place"]))
    bkg = sep.Background(data, bw=mesh, bh=mesh, fw=1, fh=1)
    sub = data - bkg.back()
    rms = bkg.rms()
    movers = record["truth"]["movers"]
    streaks = np.array([[m["x"] - 0.5 * m["vx"], m["y"] - 0.5 * m["vy"],
                         m["x"] + 0.5 * m["vx"], m["y"] + 0.5 * m["vy"]] for m in movers],
                       dtype=np.float64).reshape(-1, 4)
    trial_of = {m: i for i, m in enumerate(record["trials"])}
    x0, y0, x1, y1 = cell["interior"]
    radius = cell["hit_radius"]
    out = []
    for t in thresholds:
        objs = sep.extract(sub, t, err=rms, minarea=3, filter_kernel=SEX_KERNEL,
                           filter_type="matched", deblend_cont=1.0, clean=False)
        x, y = objs["x"].astype(np.float64), objs["y"].astype(np.float64)
        inside = (x >= x0 - 0.5) & (x < x1 - 0.5) & (y >= y0 - 0.5) & (y < y1 - 0.5)
        x, y = x[inside], y[inside]
        xp = objs["xpeak"][inside].astype(np.float64)
        yp = objs["ypeak"][inside].astype(np.float64)
        hit = set()
        false_places = dict.fromkeys(PLACES, 0)
        if len(x):
            if len(streaks):
                d = np.minimum(streak_distances(streaks, x, y), streak_distances(streaks, xp, yp))
            else:
                d = np.full((len(x), 0), np.inf)
            for j in range(len(x)):
                near = np.flatnonzero(d[j] <= radius)
                if len(near):
                    # The nearest; on a tie the later mover, as label_object()'s `<=` keeps it.
                    best = near[d[j][near] == d[j][near].min()][-1]
                    if int(best) in trial_of:
                        hit.add(trial_of[int(best)])
                    continue
                px = int(np.floor(x[j] + 0.5))
                py = int(np.floor(y[j] + 0.5))
                false_places[PLACES[int(places[py, px])]] += 1
        out.append({"hit": sorted(hit), "false_places": false_places, "objects": int(len(x))})
    return out


def lowest_within_rate(false_counts, area, rate):
    """As chain_summary.cpp: the index of the lowest threshold within rate x area, or -1."""
    if not area > 0:
        return -1
    allowed = rate * area + 1e-9
    for i, n in enumerate(false_counts):
        if n <= allowed:
            return i
    return -1


def held_out_choices(false_per_cell, area_per_cell, rate):
    total = np.sum(np.array(false_per_cell), axis=0)
    area = sum(area_per_cell)
    return [lowest_within_rate(list(total - np.array(row)), area - a, rate)
            for row, a in zip(false_per_cell, area_per_cell)]


def summarise_scene(name, cells, results, thresholds, rate):
    """The chain's rules (chain_summary.cpp) on SEP's counts of one scene."""
    nt = len(thresholds)
    per_cell = []
    for cell, frames in zip(cells, results):
        trials = sum(len(r["trials"]) for r in cell["frames"])
        hits = [sum(len(f[t]["hit"]) for f in frames) for t in range(nt)]
        places = [{p: sum(f[t]["false_places"][p] for f in frames) for p in PLACES}
                  for t in range(nt)]
        per_cell.append({
            "peak_snr": cell["snr"], "speed": cell["speed"], "cell": cell["cell"],
            "trials": trials, "area_mpix_frames": cell["interior_mpix"] * len(cell["frames"]),
            "hits_per_threshold": hits,
            "false_detections_per_threshold": [sum(p.values()) for p in places],
            "false_off_stars_per_threshold": [sum(p[k] for k in OFF_STARS) for p in places],
            "false_places_per_threshold": places,
            "objects_per_threshold": [sum(f[t]["objects"] for f in frames) for t in range(nt)],
        })
    area_per_cell = [c["area_mpix_frames"] for c in per_cell]
    area = sum(area_per_cell)
    false_all = [[c["false_detections_per_threshold"][t] for t in range(nt)] for c in per_cell]
    false_off = [[c["false_off_stars_per_threshold"][t] for t in range(nt)] for c in per_cell]
    total_all = list(np.sum(false_all, axis=0))
    total_off = list(np.sum(false_off, axis=0))

    pooled = lowest_within_rate(total_all, area, rate)
    chosen = pooled if pooled >= 0 else nt - 1
    chosen_off = lowest_within_rate(total_off, area, rate)
    held = held_out_choices(false_all, area_per_cell, rate)
    held_off = held_out_choices(false_off, area_per_cell, rate)
    held_out_false = held_out_off = none_within = 0
    for c, h, ho in zip(per_cell, held, held_off):
        if h < 0:
            none_within += 1
            h = chosen
        if ho < 0:
            ho = chosen_off if chosen_off >= 0 else nt - 1
        c["held_out_threshold"] = thresholds[h]
        c["held_out_hits"] = c["hits_per_threshold"][h]
        c["held_out_false_detections"] = c["false_detections_per_threshold"][h]
        c["held_out_off_stars_threshold"] = thresholds[ho]
        c["held_out_off_stars_hits"] = c["hits_per_threshold"][ho]
        c["held_out_off_stars_false_detections"] = c["false_off_stars_per_threshold"][ho]
        held_out_false += c["held_out_false_detections"]
        held_out_off += c["held_out_off_stars_false_detections"]

    scan = []
    for t in range(nt):
        places = {p: sum(c["false_places_per_threshold"][t][p] for c in per_cell) for p in PLACES}
        scan.append({"threshold": thresholds[t], "false_detections": int(total_all[t]),
                     "false_rate": total_all[t] / area, "false_off_stars": int(total_off[t]),
                     "false_off_stars_rate": total_off[t] / area, "false_places": places})
    return {
        "name": name, "thresholds": thresholds, "area_mpix_frames": area,
        "frames": sum(len(c["frames"]) for c in cells),
        "threshold": thresholds[chosen], "threshold_within_rate": pooled >= 0,
        "threshold_off_stars": thresholds[chosen_off] if chosen_off >= 0 else None,
        "held_out_false_detections": held_out_false, "held_out_rate": held_out_false / area,
        "held_out_cells_none_within": none_within,
        "held_out_off_stars_false_detections": held_out_off,
        "held_out_off_stars_rate": held_out_off / area,
        "held_out_off_stars_thresholds": [min(c["held_out_off_stars_threshold"] for c in per_cell),
                                          max(c["held_out_off_stars_threshold"] for c in per_cell)],
        "cells": per_cell, "scan": scan,
    }


def completeness_grid(cells, hits_of, trials_of=lambda c: c["trials"]):
    """{snr: {speed: fraction}} from per-cell records."""
    grid = {}
    for c in cells:
        n = trials_of(c)
        grid.setdefault(c["peak_snr"], {})[c["speed"]] = hits_of(c) / n if n else float("nan")
    return grid


def harness_rows(quality, scene_name):
    """The same run's shipped chains (defaults, residual-mesh) and difference-aligned (the
    harness's matched filter), as rows for the comparison: (label, rule, threshold, rates (all,
    off stars), grid, none within)."""
    rows = []
    if quality is None:
        return rows
    scene = next((s for s in quality["scenes"] if s["name"] == scene_name), None)
    if scene is None:
        return rows
    for ch in scene.get("chains", []):
        th = ch["thresholds"]
        scan = {r["threshold"]: r for r in ch["scan"]}
        for rule, t in (("all", ch["threshold"]), ("off stars", ch["threshold_off_stars"])):
            if t is None:
                rows.append((f"shipped chain ({ch['name']})", rule + " (none within)", "–",
                             float("nan"), float("nan"), {}, False))
                continue
            i = th.index(t)
            r = scan[t]
            grid = completeness_grid(ch["cells"], lambda c, i=i: c["hits_per_threshold"][i])
            rows.append((f"shipped chain ({ch['name']})", rule, f"{t:g} σ",
                         r["false_rate"], r["false_off_stars"] / ch["area_mpix_frames"], grid,
                         rule == "all" and not ch["threshold_within_rate"]))
    for m in scene.get("methods", []):
        if m["name"] != "difference-aligned":
            continue
        grid = completeness_grid(m["cells"], lambda c: c["hits"])
        places = m.get("false_alarm_places", {})
        off = sum(places.get(k, 0) for k in OFF_STARS) if isinstance(places, dict) else None
        area = scene["area_mpix_frames"]
        rows.append(("difference-aligned, harness's matched filter", "all",
                     f"S > {m['threshold_snr']:.3g}", m["false_alarm_rate"],
                     off / area if off is not None else float("nan"), grid, False))
    return rows


def fmt_pct(v):
    return "–" if v != v else f"{100 * v:.1f}"


def fmt_rate(v):
    return "–" if v != v else f"{v:.3g}"


def markdown(report, quality):
    out = []
    cfg = report["config"]
    out.append(f"SEP {report['sep_version']} on the aligned difference "
               f"(`difference-aligned`'s residual), {report['frames']} frames, rate "
               f"{cfg['rate']} false detections per Mpix-frame. Completeness in % per speed.\n")
    for s in report["scenes"]:
        speeds = sorted({c["speed"] for c in s["cells"]})
        snrs = sorted({c["peak_snr"] for c in s["cells"]})
        out.append(f"### {s['name']}\n")
        head = "| detector | rule | threshold | false / Mpix-frame: all / off stars | " + \
            " | ".join(f"peak SNR {q:g}" for q in snrs) + " |"
        out.append(head)
        out.append("|" + "---|" * (4 + len(snrs)))
        th = s["thresholds"]

        def sep_row(rule, t, note=""):
            i = th.index(t)
            row = s["scan"][i]
            grid = completeness_grid(s["cells"], lambda c: c["hits_per_threshold"][i])
            cols = [" / ".join(fmt_pct(grid[q].get(v, float("nan"))) for v in speeds)
                    for q in snrs]
            return (f"| SEP on the aligned difference | {rule}{note} | {t:g} σ | "
                    f"{row['false_rate']:.3g} / {row['false_off_stars_rate']:.3g} | " +
                    " | ".join(cols) + " |")

        note = "" if s["threshold_within_rate"] else " (none within: highest run)"
        out.append(sep_row("all", s["threshold"], note))
        if s["threshold_off_stars"] is not None:
            out.append(sep_row("off stars", s["threshold_off_stars"]))
        for label, rule, t, rate_all, rate_off, grid, none in harness_rows(quality, s["name"]):
            cols = [" / ".join(fmt_pct(grid.get(q, {}).get(v, float("nan"))) for v in speeds)
                    for q in snrs]
            note = " (none within: highest run)" if none else ""
            out.append(f"| {label} | {rule}{note} | {t} | {fmt_rate(rate_all)} / "
                       f"{fmt_rate(rate_off)} | " +
                       " | ".join(cols) + " |")
        out.append("")
        out.append(f"Held out (each cell at the threshold chosen on the others): all "
                   f"{s['held_out_rate']:.3g} per Mpix-frame"
                   f"{' (' + str(s['held_out_cells_none_within']) + ' cells with none within)' if s['held_out_cells_none_within'] else ''}"
                   f", off stars {s['held_out_off_stars_rate']:.3g} at "
                   f"{s['held_out_off_stars_thresholds'][0]:g}–"
                   f"{s['held_out_off_stars_thresholds'][1]:g} σ.\n")
        out.append("Every threshold (SEP): false detections per Mpix-frame, all / off stars; "
                   "where they lie; completeness pooled over speeds per peak SNR:\n")
        out.append("| threshold | false / Mpix-frame | " + " / ".join(PLACES) + " | " +
                   " | ".join(f"SNR {q:g}" for q in snrs) + " |")
        out.append("|" + "---|" * (3 + len(snrs)))
        for i, r in enumerate(s["scan"]):
            pooled = []
            for q in snrs:
                cs = [c for c in s["cells"] if c["peak_snr"] == q]
                n = sum(c["trials"] for c in cs)
                pooled.append(fmt_pct(sum(c["hits_per_threshold"][i] for c in cs) / n if n else
                                      float("nan")))
            out.append(f"| {r['threshold']:g} | {r['false_rate']:.3g} / "
                       f"{r['false_off_stars_rate']:.3g} | " +
                       " / ".join(str(r["false_places"][p]) for p in PLACES) + " | " +
                       " | ".join(pooled) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="what --export-difference wrote")
    ap.add_argument("--thresholds", default=",".join(f"{t:g}" for t in DEFAULT_THRESHOLDS),
                    help="SEP thresholds (sigma of the filtered noise), ascending "
                         "[3.5..7 by 0.25, 7.5, 8, 9, 10, 12, 15, 20, 30]")
    ap.add_argument("--rate", type=float, default=0.1,
                    help="allowed false detections per Mpix-frame [0.1]")
    ap.add_argument("--mesh", type=int, default=64, help="background mesh, px [64]")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes [all]")
    ap.add_argument("--quality-json", help="the same run's quality.json, for the comparison")
    ap.add_argument("--json", help="write the report here [stdout]")
    ap.add_argument("--markdown", help="write the tables here")
    args = ap.parse_args()
    thresholds = [float(t) for t in args.thresholds.split(",")]
    if thresholds != sorted(set(thresholds)):
        sys.exit("--thresholds must ascend, each once")

    start = time.time()
    cells = load_cells(args.dir)
    # Room for every pixel of a frame in one object list (SEP's default is 300 000; it allocates
    # the stack on every call, so no more than needed).
    pixels = max(c["width"] * c["height"] for c in cells)
    if pixels > 300_000:
        sep.set_extract_pixstack(pixels)
    jobs = [(c, r, thresholds, args.mesh) for c in cells for r in c["frames"]]
    with Pool(args.jobs) as pool:
        flat = pool.map(score_frame, jobs, chunksize=4)
    results, k = [], 0
    for c in cells:
        results.append(flat[k:k + len(c["frames"])])
        k += len(c["frames"])

    quality = None
    if args.quality_json:
        with open(args.quality_json) as f:
            quality = json.load(f)
    scenes = []
    for name in sorted({c["scene"] for c in cells}, key=lambda n: (n != "jitter-on", n)):
        idx = [i for i, c in enumerate(cells) if c["scene"] == name]
        idx.sort(key=lambda i: (cells[i]["snr"], cells[i]["speed"]))
        scenes.append(summarise_scene(name, [cells[i] for i in idx], [results[i] for i in idx],
                                      thresholds, args.rate))
    report = {
        "sep_version": sep.__version__, "numpy_version": np.__version__,
        "source": os.path.abspath(args.dir), "frames": len(jobs),
        "seconds": round(time.time() - start, 1),
        "config": {
            "rate": args.rate, "thresholds": thresholds, "background_mesh": args.mesh,
            "background_filter": 1, "filter_kernel": SEX_KERNEL.tolist(),
            "filter_type": "matched", "minarea": 3, "deblend_cont": 1.0, "clean": False,
            "hit_radius": cells[0]["hit_radius"], "border": cells[0]["border"],
            "size": [cells[0]["width"], cells[0]["height"]],
        },
        "definitions": {
            "hit": "an object centred in the interior whose centroid or peak pixel lies within "
                   "the hit radius of the trial's streak, nearest mover first",
            "false_detection": "an object centred in the interior and near no mover",
            "off_stars": "false detections at hot pixels, near movers or on clear sky",
            "threshold": "the lowest threshold with at most rate x area false detections over "
                         "the scene's cells (the highest run when none is); held out: each cell "
                         "at the threshold so chosen on the other cells",
        },
        "scenes": scenes,
    }
    text = json.dumps(report, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(report, quality))
    print(f"sep_quality: {len(jobs)} frames, {len(thresholds)} thresholds in "
          f"{report['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
