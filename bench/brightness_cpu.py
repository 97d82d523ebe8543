#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The brightness correction's CPU path beside OpenCV doing the same work.

Runs starsift-bench-brightness-cpu (BrightnessCpu on a raw frame) and, in this process, the
same formula composed from OpenCV and numpy on the same frames with the same number of
threads (the bench's --threads, cv2.setNumThreads):

  Y   = the frame / max (colour: cv2.transform with the BT.709 weights / 255)
  B   = "same work": cv2.resize INTER_AREA by starsift's factor f (boxes of f x f, where
        starsift averages under tents on a grid of res / f + 1 samples: the same work),
        cv2.GaussianBlur at starsift's small sigma (reflect-101), cv2.resize INTER_LINEAR back
        (what starsift does from sigma 8); "full": cv2.GaussianBlur of Y at sigma itself (the
        exact blur, 8 sigma + 1 taps), timed too, for scale
  C   = cv2.exp(cv2.exp((2 B - 1) strength ln 2) * cv2.log(Y))
  out = C * max rounded (colour: every channel times C / Y, rounded; alpha kept)

The outputs are compared with starsift's (the worst difference in counts is reported: the
same formula, two float implementations). Frames: a seeded dark gradient with noise (GRAY8,
GRAY16_LE at bit depth 12) and random colours (RGBA); default parameters (sigma 40, strength
1, alpha 1, no stretch), and sigma 4 (both sides blur the full frame).

Timing, both sides alike: one untimed call, one call to estimate the cost, then --reps
repetitions of max(1, target-ms / estimate) calls; per-call ms of each repetition. A case
runs --rounds rounds, starsift then OpenCV in each, so a change in the machine's load hits
both; the median over all repetitions is reported.

Needs Debian's python3-opencv (run with /usr/bin/python3). Writes brightness-cpu.json and
brightness-cpu.md into --out. Usage, from the repository root:
  bench/brightness_cpu.py [--bench build/bench/starsift-bench-brightness-cpu] [--out DIR]
      [--machine TEXT] [--quick]
"""
import math
import os
import sys
import tempfile

import cv2
import numpy as np

from cpu_peer import (commit, header, machine_line, median, parse, parser, run_starsift,
                      time_calls, write)

LN2 = math.log(2.0)
LUMA = (0.2126, 0.7152, 0.0722)
# (format, bit depth, max, numpy type, channels)
FORMATS = {'GRAY8': (8, 255, np.uint8, 1), 'GRAY16_LE': (12, 4095, np.uint16, 1),
           'RGBA': (8, 255, np.uint8, 4)}


def make_frame(fmt, res, rng):
    bits, top, dtype, channels = FORMATS[fmt]
    if channels == 4:
        frame = rng.integers(0, 256, size=(res, res, 4), dtype=np.uint8)
        return frame
    # A dark sky: a gradient from 2 % to 40 % of the range, noise of 1 %.
    x = np.linspace(0.02, 0.40, res, dtype=np.float64)[None, :]
    y = np.linspace(0.0, 0.10, res, dtype=np.float64)[:, None]
    values = (x + y) * top + rng.normal(0.0, 0.01 * top, size=(res, res))
    return np.clip(np.rint(values), 0, top).astype(dtype)


class OpenCvBrightness:
    """The same formula in OpenCV calls; `same_work` picks the downsampled blur. Every
    intermediate has a buffer of its own, allocated once (dst=), as starsift keeps its own:
    a fresh 4-16 MB array per call would cost OpenCV its page faults, not its arithmetic."""

    def __init__(self, fmt, res, sigma, strength, probe, same_work):
        self.bits, self.top, self.dtype, self.channels = FORMATS[fmt]
        self.res, self.sigma, self.strength = res, sigma, strength
        self.factor, self.same_work = probe['downsample_factor'], same_work
        # res / f samples, so cv2.resize INTER_AREA takes its fast path for whole factors (for
        # starsift's res / f + 1 it takes the general one, ten times slower).
        self.small = (res // self.factor, res // self.factor)
        self.small_sigma = (probe['small_sigma_x'], probe['small_sigma_y'])
        self.luma = np.array([[LUMA[0] / 255, LUMA[1] / 255, LUMA[2] / 255, 0.0]], np.float32)
        plane = lambda: np.empty((res, res), np.float32)
        self.y, self.b, self.e, self.l = plane(), plane(), plane(), plane()
        self.small_in = np.empty(self.small[::-1], np.float32)
        self.small_out = np.empty(self.small[::-1], np.float32)
        if self.channels == 4:
            self.rgba = np.empty((res, res, 4), np.float32)
            self.ratio4 = np.empty((res, res, 4), np.float32)
            self.ones = np.ones((res, res), np.float32)
            self.out = np.empty((res, res, 4), np.uint8)
        else:
            self.out = np.empty((res, res), self.dtype)

    def __call__(self, frame):
        if self.channels == 4:
            np.copyto(self.rgba, frame, casting='unsafe')
            cv2.transform(self.rgba, self.luma, dst=self.y)
        else:
            cv2.multiply(frame, 1.0 / self.top, dst=self.y, dtype=cv2.CV_32F)
        if not self.same_work or self.factor == 1:
            cv2.GaussianBlur(self.y, (0, 0), self.sigma, dst=self.b,
                             borderType=cv2.BORDER_REFLECT_101)
        else:
            cv2.resize(self.y, self.small, dst=self.small_in, interpolation=cv2.INTER_AREA)
            cv2.GaussianBlur(self.small_in, (0, 0), self.small_sigma[0], dst=self.small_out,
                             sigmaY=self.small_sigma[1], borderType=cv2.BORDER_REFLECT_101)
            cv2.resize(self.small_out, (self.res, self.res), dst=self.b,
                       interpolation=cv2.INTER_LINEAR)
        s = self.strength
        cv2.addWeighted(self.b, 2.0 * s * LN2, self.b, 0.0, -s * LN2, dst=self.e)
        cv2.exp(self.e, dst=self.e)
        cv2.max(self.y, 1e-30, dst=self.l)
        cv2.log(self.l, dst=self.l)
        cv2.multiply(self.e, self.l, dst=self.l)
        cv2.exp(self.l, dst=self.l)  # C
        if self.channels == 4:
            cv2.divide(self.l, self.y, dst=self.e)  # C / Y, 0 where Y is 0
            cv2.merge([self.e, self.e, self.e, self.ones], dst=self.ratio4)
            cv2.multiply(self.rgba, self.ratio4, dst=self.rgba)
            return cv2.convertScaleAbs(self.rgba, dst=self.out)
        if self.dtype == np.uint8:
            return cv2.convertScaleAbs(self.l, dst=self.out, alpha=255.0)
        cv2.multiply(self.l, float(self.top), dst=self.l)
        cv2.add(self.l, 0.5, dst=self.l)
        np.copyto(self.out, self.l, casting='unsafe')
        return self.out


def starsift(args, frame_path, res, fmt, sigma, output=None):
    bits = FORMATS[fmt][0]
    return run_starsift(args, frame_path, res, res, fmt,
                        ['--bit-depth', str(bits), '--sigma', str(sigma)], output=output)


def main():
    ap = parser(__doc__, 'brightness-cpu')
    ap.add_argument('--sigmas', default='40,4')
    args = parse(ap)
    result = header('brightness-cpu', args, commit(),
                    {'threads': args.threads, 'reps': args.reps, 'rounds': args.rounds,
                     'target_ms_per_rep': args.target_ms, 'strength': 1.0, 'alpha': 1.0,
                     'stretch': 'none',
                     'data': f'dark gradient with 1 % noise (grey), random colours (RGBA), '
                             f'numpy default_rng({args.seed})',
                     'statistic': 'median per-call ms over all repetitions of all rounds'})
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        for res in [int(r) for r in args.resolutions.split(',')]:
            for fmt in FORMATS:
                frame = make_frame(fmt, res, rng)
                frame_path = os.path.join(tmp, 'frame.raw')
                out_path = os.path.join(tmp, 'out.raw')
                frame.tofile(frame_path)
                for sigma in [float(s) for s in args.sigmas.split(',')]:
                    probe = starsift(args, frame_path, res, fmt, sigma)
                    factor = probe['downsample_factor']
                    same = OpenCvBrightness(fmt, res, sigma, 1.0, probe, True)
                    full = OpenCvBrightness(fmt, res, sigma, 1.0, probe, False)
                    ours, theirs, load = [], [], []
                    for _ in range(args.rounds):
                        load.append(os.getloadavg()[0])
                        r = starsift(args, frame_path, res, fmt, sigma, output=out_path)
                        ours += r['ms_per_call']
                        theirs += time_calls(lambda: same(frame), args.reps, args.target_ms)
                    full_ms = median(time_calls(lambda: full(frame), 3, args.target_ms))
                    mine = np.fromfile(out_path, dtype=frame.dtype).reshape(frame.shape)
                    peer = same(frame)
                    worst = int(np.max(np.abs(mine.astype(np.int32) - peer.astype(np.int32))))
                    case = {'width': res, 'height': res, 'format': fmt,
                            'bit_depth': FORMATS[fmt][0], 'sigma': sigma,
                            'downsample_factor': factor,
                            'small_plane': [probe['small_width'], probe['small_height']],
                            'small_sigma': probe['small_sigma_x'],
                            'starsift_ms': median(ours), 'opencv_ms': median(theirs),
                            'opencv_full_blur_ms': full_ms,
                            'starsift_ms_reps': ours, 'opencv_ms_reps': theirs,
                            'loadavg_1min': load, 'worst_difference_vs_opencv': worst}
                    case['time_ratio_vs_opencv'] = case['starsift_ms'] / case['opencv_ms']
                    result['cases'].append(case)
                    print(f"{res}² {fmt} sigma {sigma:g} (f {factor}): starsift "
                          f"{case['starsift_ms']:.2f} ms, OpenCV same work "
                          f"{case['opencv_ms']:.2f} ms (full blur {full_ms:.1f}), ratio "
                          f"{case['time_ratio_vs_opencv']:.2f}, worst difference {worst}, "
                          f"load {load}", file=sys.stderr)
    write(args, 'brightness-cpu', result, table)


def table(r):
    m = r['method']
    lines = [
        '# CPU brightness correction: starsift vs OpenCV doing the same work', '',
        machine_line(r), '',
        f"{m['threads']} threads each; mode local, strength {m['strength']:g}, alpha "
        f"{m['alpha']:g}, stretch {m['stretch']}; {m['data']}; {m['statistic']} "
        f"({m['rounds']} rounds × {m['reps']} repetitions of ~{m['target_ms_per_rep']:.0f} ms, "
        "starsift and OpenCV alternating). OpenCV same work: the formula in cv2 calls with "
        "a downsampled blur as starsift's (cv2.resize INTER_AREA by f, cv2.GaussianBlur at "
        "starsift's small sigma, cv2.resize INTER_LINEAR back; at f 1 the full-frame "
        "cv2.GaussianBlur). Ratio = "
        "starsift ms ÷ OpenCV same-work ms (below 1: starsift faster). OpenCV full blur: "
        "cv2.GaussianBlur at sigma on the full frame instead, for scale. Worst difference: "
        "starsift's output against OpenCV same work's, in counts.", '',
        '| frame | format | sigma (f) | starsift ms | OpenCV same work ms | ratio | '
        'OpenCV full blur ms | worst difference |',
        '|---|---|---|---|---|---|---|---|']
    for c in r['cases']:
        fmt = c['format'] + (f" ({c['bit_depth']}-bit)" if c['format'] == 'GRAY16_LE' else '')
        lines.append(
            f"| {c['width']}² | {fmt} | {c['sigma']:g} ({c['downsample_factor']}) | "
            f"{c['starsift_ms']:.2f} | {c['opencv_ms']:.2f} | {c['time_ratio_vs_opencv']:.2f} | "
            f"{c['opencv_full_blur_ms']:.1f} | {c['worst_difference_vs_opencv']} |")
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    main()
