#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""starsiftd soak: runs the daemon on a config for a long time and samples what would grow.

Every --interval-s it reads the daemon's resident memory, threads and open files from /proc
and its counters from /metrics; at the end it writes samples.csv and summary.json into --out
and prints the summary. A leak shows as a resident-memory slope after the warm-up (the first
--warmup-s: caches, pools and the allocator settling), not as its level.

  bench/soak.py --starsiftd build/src/daemon/starsiftd --config config/demo.yaml \\
      --duration-s 3600 --out bench/results/daemon/soak-cpu

--sky-size N makes the sky source N x N (a CPU keeps real time only on small frames). The
state directory and metrics port are replaced so the soak touches nothing of the config's.
"""
import argparse
import csv
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def soak_config(text, state_dir, port, sky_size):
    """The config with its state directory, metrics port and (optionally) sky size replaced."""
    text = re.sub(r"(?m)^state-directory:.*$", f"state-directory: {state_dir}", text)
    text = re.sub(r"(?m)^(\s+port:\s*)\d+", rf"\g<1>{port}", text)
    if sky_size:
        text = re.sub(r"(?m)^(\s+width:\s*)\d+", rf"\g<1>{sky_size}", text)
        text = re.sub(r"(?m)^(\s+height:\s*)\d+", rf"\g<1>{sky_size}", text)
    return text


def proc_sample(pid):
    status = open(f"/proc/{pid}/status").read()
    rss_kb = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss_kb / 1024.0, threads, fds


def metrics(port):
    """Sums of the per-pipeline counters the soak reports."""
    wanted = {
        "starsift_frames_in_total": "frames_in",
        "starsift_frames_out_total": "frames_out",
        "starsift_frames_dropped_total": "dropped",
        "starsift_frames_overrun_total": "overrun",
        "starsift_restarts_total": "restarts",
        "starsift_detections_total": "detections",
    }
    out = {v: 0.0 for v in wanted.values()}
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except OSError:
        return None
    for line in body.splitlines():
        m = re.match(r"^(\w+)\{[^}]*\}\s+(\S+)$", line)
        if m and m.group(1) in wanted:
            out[wanted[m.group(1)]] += float(m.group(2))
    return out


def slope_per_hour(points):
    """Least-squares slope of (seconds, value) points, per hour."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return sum((t - mt) * (v - mv) for t, v in points) / var * 3600.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--starsiftd", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--duration-s", type=float, default=3600)
    ap.add_argument("--interval-s", type=float, default=10)
    ap.add_argument("--warmup-s", type=float, default=120)
    ap.add_argument("--sky-size", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="starsift-soak-")
    port = free_port()
    config = os.path.join(work, "soak.yaml")
    with open(args.config) as f:
        text = soak_config(f.read(), os.path.join(work, "state"), port, args.sky_size)
    with open(config, "w") as f:
        f.write(text)
    log = open(os.path.join(args.out, "starsiftd.log"), "w")
    daemon = subprocess.Popen(
        [args.starsiftd, "--config", config, "--duration", str(args.duration_s)],
        stdout=log, stderr=subprocess.STDOUT)

    samples = []
    start = time.monotonic()
    while daemon.poll() is None:
        t = time.monotonic() - start
        try:
            rss, threads, fds = proc_sample(daemon.pid)
        except (OSError, AttributeError):
            break
        m = metrics(port)
        if m is not None:
            samples.append({"t_s": round(t, 1), "rss_mb": round(rss, 2), "threads": threads,
                            "fds": fds, **m})
        time.sleep(args.interval_s)
    try:
        status = daemon.wait(timeout=max(60, args.duration_s * 0.1))
    except subprocess.TimeoutExpired:
        daemon.send_signal(signal.SIGKILL)
        status = "killed: did not exit"

    with open(os.path.join(args.out, "samples.csv"), "w", newline="") as f:
        if samples:
            w = csv.DictWriter(f, fieldnames=list(samples[0].keys()))
            w.writeheader()
            w.writerows(samples)
    # After the warm-up, and before --duration ends the run (the stop frees what it held).
    settled = [s for s in samples if args.warmup_s <= s["t_s"] < args.duration_s - 1]
    summary = {"config": args.config, "sky_size": args.sky_size or "as configured",
               "duration_s": args.duration_s, "exit_status": status, "samples": len(samples)}
    if settled:
        first, last = settled[0], settled[-1]
        frames = last["frames_out"] - first["frames_out"]
        summary.update({
            "warmup_s": args.warmup_s,
            "rss_mb_after_warmup": first["rss_mb"], "rss_mb_at_end": last["rss_mb"],
            "rss_mb_min": min(s["rss_mb"] for s in settled),
            "rss_mb_max": max(s["rss_mb"] for s in settled),
            "rss_slope_mb_per_hour": round(slope_per_hour([(s["t_s"], s["rss_mb"]) for s in settled]), 3),
            "threads_min": min(s["threads"] for s in settled),
            "threads_max": max(s["threads"] for s in settled),
            "fds_min": min(s["fds"] for s in settled), "fds_max": max(s["fds"] for s in settled),
            "frames_out": samples[-1]["frames_out"], "frames_in": samples[-1]["frames_in"],
            "dropped": samples[-1]["dropped"], "overrun": samples[-1]["overrun"],
            "restarts": samples[-1]["restarts"],
            "detections": samples[-1]["detections"],
            "fps_after_warmup": round(frames / max(1e-9, last["t_s"] - first["t_s"]), 2),
        })
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
