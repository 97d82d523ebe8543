// SPDX-License-Identifier: LGPL-2.1-or-later
// TruthTally: each mover counted once, however many frames it is in, and a bounded memory
// however many movers a long run sees.
#include <catch2/catch.hpp>

#include "daemon/runtime/truth_tally.hpp"

using starsift::daemon::TruthTally;

TEST_CASE("each mover is counted once: seen, detected, tracked", "[truth]") {
  TruthTally tally;
  for (std::uint64_t frame = 0; frame < 10; ++frame) {
    tally.add(frame, 1, frame >= 3, frame >= 6);  // found from frame 3, tracked from 6
    tally.add(frame, 2, false, false);            // never found
  }
  tally.add(10, 3, true, false);
  CHECK(tally.movers() == 3);
  CHECK(tally.detected() == 2);
  CHECK(tally.tracked() == 1);
}

TEST_CASE("a long run with ever new movers keeps a bounded memory", "[truth]") {
  TruthTally tally;
  // 8 movers in every frame, each replaced (new id) after 50 frames: 16 000 movers in all.
  constexpr std::uint64_t kFrames = 100'000, kSlots = 8, kLife = 50;
  std::size_t most = 0;
  for (std::uint64_t frame = 0; frame < kFrames; ++frame) {
    for (std::uint64_t slot = 0; slot < kSlots; ++slot) {
      const std::uint64_t id = (frame / kLife) * kSlots + slot;
      tally.add(frame, id, frame % kLife == 10, frame % kLife == 20);
    }
    most = std::max(most, tally.remembered());
  }
  CHECK(tally.movers() == kFrames / kLife * kSlots);
  CHECK(tally.detected() == tally.movers());
  CHECK(tally.tracked() == tally.movers());
  // Those of the last kForgetFrames frames, and those not yet pruned: a few lifetimes' worth.
  CHECK(most <= kSlots * (2 * TruthTally::kForgetFrames / kLife + 2));
}
