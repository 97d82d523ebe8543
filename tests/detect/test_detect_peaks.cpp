// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection's peak finder: strict local maxima of an SNR image inside an interior, one per flat
// top.
#include <catch2/catch.hpp>

#include <vector>

#include "pipeline/detect/peaks.hpp"
#include "pipeline/plane.hpp"

using namespace starsift;

TEST_CASE("peaks are strict local maxima inside the interior, one per flat top", "[detect]") {
  Plane snr(12, 10, 0.0f);
  snr.at(3, 3) = 6.0f;                 // a lone peak
  snr.at(7, 5) = snr.at(8, 5) = 5.0f;  // a flat top of two pixels: one peak
  snr.at(5, 8) = 9.0f;                 // on the border row of the interior below: not scanned
  snr.at(2, 6) = 2.0f;                 // below the floor
  std::vector<Peak> peaks;
  find_peaks(snr, Interior::of(12, 10, 2), 3.0f, peaks);
  REQUIRE(peaks.size() == 2);
  CHECK(peaks[0].x == 3);
  CHECK(peaks[0].y == 3);
  CHECK(peaks[0].snr == 6.0f);
  CHECK(peaks[1].x == 7);
  CHECK(peaks[1].y == 5);
  CHECK_THROWS(find_peaks(snr, Interior::of(12, 10, 0), 3.0f, peaks));
}
