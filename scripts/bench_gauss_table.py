#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Merges Gaussian blur benchmark JSON (starsift-bench-gauss, bench/peers/cupy_gauss.py) into a
markdown table, and says how the run stands against the blur's targets.

One row per size x sigma x format: starsift's Gpix/s (Auto, the path it chose) and fraction of
the memory roofline; NPP's fixed mask of the same width where NPP has one, NPP's separable
filter with the same weights, and CuPy, measured on the same GPU; the speed-ups; with --check,
the largest difference between the paths. Then every path (with --paths all), NPP's fixed masks,
and the targets. Standard library only; the header and number formats are bench_table.py's.

usage: scripts/bench_gauss_table.py FILE_OR_DIR... [-o OUT.md]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_table import (DASH, copy_section, gpix, header, load, percent, ratio,  # noqa: E402
                         write_markdown)

PATHS = ["fused", "separable", "decimated", "recursive"]
# The targets (bench/README.md).
FUSED_MAX_SIGMA = 3.0
FUSED_MIN_FRACTION = 0.5
U8_MIN_GPIX = 300.0
MAX_SIGMA = 50.0


def sig(v):
    return round(float(v), 6)


def sigma_cell(s):
    return f"{s:g}"


def ms(v):
    if v is None:
        return DASH
    return f"{v:.3f}" if v >= 0.1 else f"{v:.4f}"


def diff(v):
    return DASH if v is None else f"{v:g}"


def method(starsift, cupy):
    lines = []
    for doc in starsift[:1]:
        m = doc.get("method", {})
        lines.append(
            f"- starsift-bench-gauss: frames {m.get('cache', '?')} ({m.get('frames_rule', '?')}), "
            f"{m.get('timing', '?')}, {m.get('statistic', '?')} "
            f"({m.get('reps', '?')} × ~{m.get('target_ms_per_rep', '?')} ms), "
            f"border {m.get('border', '?')}, radius {m.get('radius', '?')}, {m.get('data', '?')}; "
            f"separable timed up to sigma {m.get('separable_max_sigma', '?')}"
            + (" — quick run" if m.get("quick") else ""))
        lines.append(
            "- NPP on the whole frame with border replicate (the only one its Gauss filters "
            "take): `nppiFilterGaussBorder` with the fixed mask of width 2 r + 1 where NPP has "
            "one (3×3 … 15×15: sigma ≤ 1.75; of the default sigmas 0.5 → 5×5 and 1 → 9×9), and "
            "`nppiFilterGaussAdvancedBorder` with starsift's own 2 r + 1 weights at every sigma.")
    for doc in cupy[:1]:
        m = doc.get("method", {})
        lines.append(
            f"- CuPy: `gaussian_filter`, mode {m.get('mode', '?')}, radius {m.get('radius', '?')}, "
            f"{m.get('statistic', '?')} ({m.get('reps', '?')} × ~{m.get('target_ms_per_rep', '?')}"
            " ms), calls issued one by one from Python")
    return lines


def index(starsift, cupy):
    cases, checks, masks, cupy_cases = {}, {}, {}, {}
    for doc in starsift:
        for c in doc.get("cases", []):
            cases[(c["width"], c["height"], sig(c["sigma"]), c["format"], c["path"])] = c
        for c in doc.get("checks", []):
            checks[(c["width"], c["height"], sig(c["sigma"]), c["format"])] = c
        for c in doc.get("npp_masks", []):
            masks[(c["width"], c["height"], c["mask_width"], c["format"])] = c
    for doc in cupy:
        for c in doc.get("cases", []):
            cupy_cases[(c["width"], c["height"], sig(c["sigma"]), c["format"])] = c
    return cases, checks, masks, cupy_cases


def check_cells(check):
    """(largest difference between the paths, Auto's against NPP's same weights)."""
    if not check:
        return DASH, DASH
    paths, npp = None, None
    for p in check.get("pairs", []):
        v = p.get("max_abs_diff")
        if v is None:
            continue
        if p.get("b") == "npp-advanced":
            npp = v
        else:
            paths = v if paths is None else max(paths, v)
    return diff(paths), diff(npp)


def tables(starsift, cupy):
    cases, checks, masks, cupy_cases = index(starsift, cupy)
    keys = list(cases) + list(cupy_cases)
    sizes = sorted({k[:2] for k in keys}, key=lambda r: r[0] * r[1], reverse=True)
    formats = []
    for k in keys:
        if k[3] not in formats:
            formats.append(k[3])
    with_check = bool(checks)
    all_paths = any(k[4] != "auto" for k in cases)

    out = []
    for w, h in sizes:
        out += ["", f"### {w}×{h}: Auto beside the roofline, NPP and CuPy", ""]
        cols = ["sigma", "r (taps)", "format", "path", "ms", "Gpix/s", "% roofline",
                "roofline Gpix/s", "NPP mask", "NPP Gpix/s", "× NPP", "NPP same weights Gpix/s",
                "× NPP weights", "CuPy Gpix/s", "× CuPy"]
        if with_check:
            cols += ["max \\|Δ\\| paths", "max \\|Δ\\| vs NPP"]
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" for _ in cols) + "|")
        sigmas = sorted({k[2] for k in keys if k[:2] == (w, h)})
        for s in sigmas:
            for f in formats:
                c = cases.get((w, h, s, f, "auto"))
                p = cupy_cases.get((w, h, s, f))
                if not c and not p:
                    continue
                c = c or {}
                p = p or {}
                ours = c.get("gpix_per_s")
                theirs = p.get("gpix_per_s")
                cupy_cell = gpix(theirs) if theirs is not None else (
                    "skipped" if "skipped" in p else "error" if "error" in p else DASH)
                ours_cell = gpix(ours) if ours is not None else ("error" if "error" in c else DASH)
                r = c.get("radius", p.get("radius"))
                taps = f"{r} ({2 * r + 1})" if r is not None else DASH
                row = [sigma_cell(s), taps, f, c.get("auto_path", DASH), ms(c.get("ms_median")),
                       ours_cell, percent(c.get("fraction_of_roofline")),
                       gpix(c.get("roofline_gpix_per_s")), c.get("npp_mask") or DASH,
                       gpix(c.get("npp_gpix_per_s")), ratio(ours, c.get("npp_gpix_per_s")),
                       gpix(c.get("npp_advanced_gpix_per_s")),
                       ratio(ours, c.get("npp_advanced_gpix_per_s")), cupy_cell,
                       ratio(ours, theirs)]
                if with_check:
                    row += list(check_cells(checks.get((w, h, s, f))))
                out.append("| " + " | ".join(row) + " |")

        if all_paths:
            out += ["", f"### {w}×{h}: every path (Gpix/s, % roofline; — where a path does not "
                    "take the case or was not timed)", ""]
            cols = ["sigma", "format", "auto picks"] + PATHS
            out.append("| " + " | ".join(cols) + " |")
            out.append("|" + "|".join("---" for _ in cols) + "|")
            for s in sorted({k[2] for k in cases if k[:2] == (w, h)}):
                for f in formats:
                    a = cases.get((w, h, s, f, "auto"), {})
                    cells = []
                    for path in PATHS:
                        c = cases.get((w, h, s, f, path), {})
                        v = c.get("gpix_per_s")
                        cells.append(DASH if v is None else
                                     f"{gpix(v)} ({percent(c.get('fraction_of_roofline'))})")
                    if all(x == DASH for x in cells) and not a:
                        continue
                    out.append("| " + " | ".join([sigma_cell(s), f, a.get("auto_path", DASH)] +
                                                 cells) + " |")

        size_masks = sorted({k[2] for k in masks if k[:2] == (w, h)})
        if size_masks:
            out += ["", f"### {w}×{h}: NPP's fixed masks (`nppiFilterGaussBorder`, border "
                    "replicate; Gpix/s, % roofline)", ""]
            cols = ["format"] + [f"{m}×{m}" for m in size_masks]
            out.append("| " + " | ".join(cols) + " |")
            out.append("|" + "|".join("---" for _ in cols) + "|")
            for f in formats:
                row = [f]
                for m in size_masks:
                    c = masks.get((w, h, m, f), {})
                    v = c.get("gpix_per_s")
                    row.append(DASH if v is None else
                               f"{gpix(v)} ({percent(c.get('fraction_of_roofline'))})")
                if any(x != DASH for x in row[1:]):
                    out.append("| " + " | ".join(row) + " |")
    return out


def targets(starsift):
    """How the run stands against the targets of bench/README.md."""
    cases, _, _, _ = index(starsift, [])
    auto = {k: c for k, c in cases.items() if k[4] == "auto" and c.get("gpix_per_s") is not None}
    if not auto:
        return []
    out = ["", "## Targets", ""]
    for w, h in sorted({k[:2] for k in auto}, key=lambda r: r[0] * r[1], reverse=True):
        here = {k: c for k, c in auto.items() if k[:2] == (w, h)}
        formats = []
        for k in here:
            if k[3] not in formats:
                formats.append(k[3])
        out.append(f"{w}×{h}:")
        out.append("")
        # 1. sigma <= 3 in one fused pass at >= 50 % of the roofline.
        small = sorted(k for k in here if k[2] <= FUSED_MAX_SIGMA)
        if small:
            misses = [k for k in small if here[k].get("auto_path") != "fused" or
                      (here[k].get("fraction_of_roofline") or 0) < FUSED_MIN_FRACTION]
            worst = min(small, key=lambda k: here[k].get("fraction_of_roofline") or 0)
            verdict = "**met**" if not misses else "**not met** (" + ", ".join(
                f"{k[3]} sigma {k[2]:g}: {here[k].get('auto_path')} "
                f"{percent(here[k].get('fraction_of_roofline'))}" for k in misses) + ")"
            out.append(f"- sigma ≤ {FUSED_MAX_SIGMA:g} in one fused pass at ≥ "
                       f"{FUSED_MIN_FRACTION:.0%} of the roofline: {verdict}; lowest "
                       f"{percent(here[worst].get('fraction_of_roofline'))} "
                       f"({worst[3]}, sigma {worst[2]:g})")
        # 2. every sigma up to 50 at >= 300 Gpix/s on 8-bit frames, time flat in sigma.
        u8 = sorted(k for k in here if k[3] == "GRAY8" and k[2] <= MAX_SIGMA)
        if u8:
            slowest = min(u8, key=lambda k: here[k]["gpix_per_s"])
            fastest = max(u8, key=lambda k: here[k]["gpix_per_s"])
            ok = here[slowest]["gpix_per_s"] >= U8_MIN_GPIX
            out.append(f"- GRAY8, every sigma ≤ {MAX_SIGMA:g} at ≥ {U8_MIN_GPIX:g} Gpix/s: "
                       f"{'**met**' if ok else '**not met**'}; slowest "
                       f"{gpix(here[slowest]['gpix_per_s'])} Gpix/s at sigma {slowest[2]:g} "
                       f"({here[slowest].get('auto_path')}), fastest "
                       f"{gpix(here[fastest]['gpix_per_s'])} at sigma {fastest[2]:g}; time "
                       f"slowest / fastest = "
                       f"{here[fastest]['gpix_per_s'] / here[slowest]['gpix_per_s']:.2f}× over "
                       f"sigma {u8[0][2]:g}…{u8[-1][2]:g}")
        # 3. never slower than NPP's mask of the same width (fixed or same weights).
        slower = []
        compared = 0
        for k in sorted(here):
            c = here[k]
            for field, what in (("npp_gpix_per_s", c.get("npp_mask") or "mask"),
                                ("npp_advanced_gpix_per_s", "same weights")):
                v = c.get(field)
                if v is None:
                    continue
                compared += 1
                if c["gpix_per_s"] < v:
                    slower.append(f"{k[3]} sigma {k[2]:g} vs NPP {what}: "
                                  f"{ratio(c['gpix_per_s'], v)}")
        if compared:
            out.append("- never slower than NPP at the same width: " +
                       ("**met**" if not slower else "**not met** (" + "; ".join(slower) + ")") +
                       f" ({compared} comparisons)")
        out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="JSON files or folders holding them")
    ap.add_argument("-o", "--out", help="write the markdown there instead of stdout")
    args = ap.parse_args()
    starsift, cupy = load(args.inputs, "gauss", "starsift-bench-gauss", "bench_gauss_table")
    if not starsift and not cupy:
        print("bench_gauss_table: no Gaussian benchmark JSON found", file=sys.stderr)
        return 1
    md = ["# Gaussian blur: starsift vs the memory roofline, NPP and CuPy", ""]
    md += header(starsift, cupy)
    md += ["", "How it was measured:", ""] + method(starsift, cupy)
    md += copy_section(starsift)
    md += targets(starsift)
    md += tables(starsift, cupy)
    md += ["", "Reading it: Gpix/s are output pixels per second (median per call). % roofline is "
           "the bytes a blur must move (read + write at the format's width) per second over the "
           "copy bandwidth above; roofline Gpix/s is that bandwidth over 2 × bytes per pixel. "
           "× NPP, × NPP weights and × CuPy divide starsift's Gpix/s by the peer's. max |Δ| is "
           "the largest difference, in the format's units, between the outputs of the paths "
           "that take the case (fused, separable, decimated, recursive) on frame 0, and between Auto's and "
           "NPP's same weights on the interior (r pixels from the edges).", ""]
    write_markdown(md, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
