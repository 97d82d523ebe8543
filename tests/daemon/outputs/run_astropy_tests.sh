#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the FITS tests that read with astropy ([.astropy] in the outputs' tests), or reports them
# skipped (exit 77, ctest's "Skipped") where python3-astropy is not installed.
# Usage: run_astropy_tests.sh PYTHON3 TEST_BINARY
python3="$1"
tests="$2"
if ! "$python3" -c 'import astropy.io.fits, numpy' 2>/dev/null; then
  echo "skipped: $python3 cannot import astropy (install python3-astropy; scripts/setup.sh does)"
  exit 77
fi
exec "$tests" '[astropy]'
