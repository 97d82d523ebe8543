# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads a FITS frame starsiftd wrote with astropy and checks it against what the test expects.

Usage: read_fits_astropy.py FRAME.fits EXPECTED.raw EXPECTED.json
EXPECTED.raw holds the samples row after row, little-endian, in EXPECTED.json's "dtype";
EXPECTED.json also gives "width", "height", "header" (key: value; null for a key without a
value) and "chain" (the YAML the HISTORY cards must give back). Prints "ok" or each mismatch.
"""
import json
import sys

import numpy as np
from astropy.io import fits


def chain_from_history(cards):
    """The chain's YAML from the HISTORY cards (docs/outputs.md, "FITS frames")."""
    cards = [str(c) for c in cards]
    start = next(i for i, c in enumerate(cards) if c.startswith("starsift chain: "))
    lines = []
    for card in cards[start + 1:]:
        if card == "|" or card.startswith("| "):
            lines.append(card[2:])
        elif card.startswith("+ "):
            lines[-1] += card[2:]
        else:
            break
    return "".join(line + "\n" for line in lines)


def main(frame_path, raw_path, expect_path):
    with open(expect_path, encoding="utf-8") as f:
        expect = json.load(f)
    errors = []
    with fits.open(frame_path, memmap=False) as hdul:
        hdu = hdul[0]
        header = hdu.header.copy()  # before the data are scaled (BZERO) and the header with them
        for key, want in expect["header"].items():
            if key not in header:
                errors.append(f"{key}: missing")
                continue
            got = header[key]
            if want is None:  # astropy gives a key without value as None (or Undefined)
                if got is not None and not isinstance(got, fits.card.Undefined):
                    errors.append(f"{key}: {got!r}, expected no value")
            elif isinstance(want, bool):
                if got is not want:
                    errors.append(f"{key}: {got!r}, expected {want!r}")
            elif got != want:
                errors.append(f"{key}: {got!r}, expected {want!r}")
        chain = chain_from_history(header["HISTORY"])
        if chain != expect["chain"]:
            errors.append(f"chain: {chain!r}, expected {expect['chain']!r}")

        want_dtype = np.dtype(expect["dtype"]).newbyteorder("<")
        want = np.fromfile(raw_path, dtype=want_dtype).reshape(expect["height"], expect["width"])
        data = hdu.data
        if data.shape != want.shape:
            errors.append(f"shape {data.shape}, expected {want.shape}")
        elif data.dtype.kind != want.dtype.kind or data.dtype.itemsize != want.dtype.itemsize:
            errors.append(f"dtype {data.dtype}, expected {want.dtype}")
        else:
            # Compared as bit patterns: NaN payloads and -0.0 count.
            bits = f"u{want.dtype.itemsize}"
            got_bits = np.ascontiguousarray(data).view(data.dtype.byteorder.replace("|", "=") + bits)
            want_bits = want.view("<" + bits)
            if not np.array_equal(got_bits, want_bits):
                bad = np.argwhere(got_bits != want_bits)[0]
                errors.append(f"pixel (y, x) = {tuple(bad)}: {data[tuple(bad)]!r}, "
                              f"expected {want[tuple(bad)]!r}")
    for error in errors:
        print(error)
    if not errors:
        print("ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
