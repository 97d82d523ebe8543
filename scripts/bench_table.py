#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Merges median benchmark JSON (starsift-bench, bench/peers/cupy_median.py) into a markdown table.

One row per resolution x window size x format: starsift's Gpix/s and fraction of the memory
roofline, NPP's and CuPy's Gpix/s measured in the same run, and the speed-ups. The header
names the GPU, driver, CUDA version and date. Standard library only.

usage: scripts/bench_table.py FILE_OR_DIR... [-o OUT.md]
"""

import argparse
import json
import os
import sys

DASH = "—"


def load(paths, benchmark="median", tool="starsift-bench", name="bench_table"):
    """(starsift documents, cupy documents) of `benchmark` from the JSON files given or found
    in folders; starsift's are those `tool` wrote, and `name` signs the skipped files."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))
        else:
            files.append(p)
    starsift, cupy = [], []
    for f in files:
        try:
            with open(f) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            print(f"{name}: skipping {f}: {e}", file=sys.stderr)
            continue
        if not isinstance(doc, dict) or doc.get("benchmark") != benchmark:
            continue
        doc["_file"] = os.path.basename(f)
        if doc.get("tool") == tool:
            starsift.append(doc)
        elif doc.get("peer") == "cupy":
            cupy.append(doc)
    return starsift, cupy


def gpix(v):
    if v is None:
        return DASH
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return DASH
    r = a / b
    return f"{r:.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 1 else f"{r:.2f}×"


def percent(v):
    return DASH if v is None else f"{100 * v:.0f} %" if v >= 0.1 else f"{100 * v:.1f} %"


def check_cell(case):
    c = case.get("check")
    if not c:
        return None
    if "skipped" in c:
        return DASH
    if "error" in c:
        return "error"
    n = c.get("mismatches")
    return "ok" if n == 0 else f"**{n} px differ**"


def header(starsift, cupy):
    lines = []
    docs = starsift + cupy
    for doc in docs:
        d = doc.get("device", {})
        parts = [f"**{d.get('name', '?')}**"]
        if d.get("compute_capability"):
            parts.append(f"sm {d['compute_capability']}")
        if d.get("l2_bytes"):
            parts.append(f"L2 {d['l2_bytes'] / 2**20:.0f} MiB")
        driver = d.get("driver_release")
        cuda = d.get("driver_cuda_version")
        if driver or cuda:
            parts.append("driver " + " ".join(x for x in
                                              [driver, f"(CUDA {cuda})" if cuda else None] if x))
        if d.get("runtime_version"):
            parts.append(f"runtime {d['runtime_version']}")
        if doc.get("tool", "").startswith("starsift-bench"):
            who = f"{doc['tool']} {doc.get('starsift_version', '')}".strip()
            if doc.get("commit"):
                who += f" @ {doc['commit']}"
            npp = doc.get("npp")
            parts.append(f"NPP {npp.get('version') or '?'}" if npp else
                         f"NPP unavailable ({doc.get('npp_reason', '?')})")
        else:
            who = f"CuPy {doc.get('cupy_version', '?')}"
        lines.append(f"- {who}, {doc.get('date_utc', '?')} (`{doc['_file']}`): " +
                     ", ".join(parts))
        if doc.get("aborted"):
            lines.append(f"  - **stopped early**: {doc['aborted']}")
        if doc.get("error"):
            lines.append(f"  - **error**: {doc['error']}")
    return lines


def method(starsift, cupy):
    lines = []
    for doc in starsift[:1] + cupy[:1]:
        m = doc.get("method", {})
        who = "starsift-bench" if doc.get("tool") else "CuPy"
        lines.append(
            f"- {who}: frames {m.get('cache', '?')} ({m.get('frames_rule', '?')}), "
            f"{m.get('timing', '?')}, {m.get('statistic', '?')} "
            f"({m.get('reps', '?')} × ~{m.get('target_ms_per_rep', '?')} ms), "
            f"border {m.get('border') or m.get('mode', '?')}, {m.get('data', '?')}"
            + (" — quick run" if m.get("quick") else ""))
    if starsift:
        lines.append("- NPP runs on the interior (ROI offset by the radius, size minus 2 × radius: "
                     "NPP reads outside its ROI); its Gpix/s counts the pixels it produced.")
    return lines


def copy_lines(starsift):
    lines = []
    for doc in starsift:
        by_res = {}
        for c in doc.get("copy_bandwidth", []):
            by_res.setdefault(f"{c['width']}x{c['height']}", []).append(
                f"{c['format']} {c['gbps']:.0f} GB/s")
        for res, items in by_res.items():
            lines.append(f"- {res}: " + ", ".join(items))
    return lines


def tables(starsift, cupy):
    cases = {}
    for doc in starsift:
        for c in doc.get("cases", []):
            cases[(c["width"], c["height"], c["size"], c["format"], c.get("schedule"))] = c
    cupy_cases = {}
    for doc in cupy:
        for c in doc.get("cases", []):
            cupy_cases[(c["width"], c["height"], c["size"], c["format"])] = c
    resolutions = sorted({k[:2] for k in cases} | {k[:2] for k in cupy_cases},
                         key=lambda r: r[0] * r[1], reverse=True)
    formats = []
    for k in list(cases) + list(cupy_cases):
        if k[3] not in formats:
            formats.append(k[3])
    schedules = []
    for k in cases:
        if k[4] not in schedules:
            schedules.append(k[4])
    main = "auto" if "auto" in schedules else (schedules[0] if schedules else None)
    with_check = any("check" in c for c in cases.values())

    out = []
    for w, h in resolutions:
        out += ["", f"### {w}×{h}", ""]
        cols = ["size", "format", f"starsift Gpix/s ({main})", "% roofline", "roofline Gpix/s",
                "NPP Gpix/s", "CuPy Gpix/s", "× NPP", "× CuPy"]
        if with_check:
            cols.append("check vs NPP")
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" for _ in cols) + "|")
        sizes = sorted({k[2] for k in cases if k[:2] == (w, h)} |
                       {k[2] for k in cupy_cases if k[:2] == (w, h)})
        for s in sizes:
            for f in formats:
                c = cases.get((w, h, s, f, main))
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
                row = [f"{s}×{s}", f, ours_cell, percent(c.get("fraction_of_roofline")),
                       gpix(c.get("roofline_gpix_per_s")), gpix(c.get("npp_gpix_per_s")),
                       cupy_cell, ratio(ours, c.get("npp_gpix_per_s")), ratio(ours, theirs)]
                if with_check:
                    row.append(check_cell(c) or DASH)
                out.append("| " + " | ".join(row) + " |")

    if len(schedules) > 1:
        out += ["", "### Schedules (starsift Gpix/s; — where a schedule does not cover the case)", ""]
        cols = ["resolution", "size", "format"] + [str(s) for s in schedules]
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" for _ in cols) + "|")
        for w, h in resolutions:
            sizes = sorted({k[2] for k in cases if k[:2] == (w, h)})
            for s in sizes:
                for f in formats:
                    row = [f"{w}×{h}", f"{s}×{s}", f]
                    cells = [cases.get((w, h, s, f, sch), {}) for sch in schedules]
                    if not any(cells):
                        continue
                    row += [gpix(c.get("gpix_per_s")) if c else DASH for c in cells]
                    out.append("| " + " | ".join(row) + " |")
    return out


def copy_section(starsift):
    """The measured copy bandwidth under its heading; nothing when none was measured."""
    copies = copy_lines(starsift)
    if not copies:
        return []
    return ["", "Measured device copy bandwidth (read + write, same frames; the roofline):",
            ""] + copies


def write_markdown(md, out):
    """The lines `md` to the file `out`, or to stdout without one."""
    text = "\n".join(md)
    if out:
        with open(out, "w") as f:
            f.write(text)
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="JSON files or folders holding them")
    ap.add_argument("-o", "--out", help="write the markdown there instead of stdout")
    args = ap.parse_args()
    starsift, cupy = load(args.inputs)
    if not starsift and not cupy:
        print("bench_table: no median benchmark JSON found", file=sys.stderr)
        return 1
    md = ["# Median filter: starsift vs the memory roofline, NPP and CuPy", ""]
    md += header(starsift, cupy)
    md += ["", "How it was measured:", ""] + method(starsift, cupy)
    md += copy_section(starsift)
    md += tables(starsift, cupy)
    md += ["", "Reading it: Gpix/s are output pixels per second (median per call). % roofline is the "
           "bytes a median must move (read + write at the format's width) per second over the "
           "copy bandwidth above; roofline Gpix/s is that bandwidth over 2 × bytes per pixel. "
           "× NPP and × CuPy divide starsift's Gpix/s by the peer's.", ""]
    write_markdown(md, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
