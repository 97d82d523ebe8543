// SPDX-License-Identifier: LGPL-2.1-or-later
// Streak merge: the pieces of one bright streak or meteor trail, which detection finds as
// several objects along one line (noise gaps, a star crossing the trail), become one record.
// Host code on a frame's downloaded catalogue, after detection and before tracking, so both
// backends give the same result from the records they already produce identically.
// docs/detect.md, "Streak merge".
//
// Two records are pieces of one streak when both are elongated (elongation and length at
// least the minima) and lie on one line with a small gap between them, along the line of the
// piece whose axis is the better known (the more elongated): a crossing of two trails is one
// wide object whose axis is neither trail's, so each trail's clean pieces are measured against
// their own line. Pieces pointing the same way (within max_angle) join when the other's
// centroid lies within max_offset of that line, plus what it is wider across the line than the
// reference (a crossing's centroid is pulled off by the other trail's arm); a short piece whose
// angle is off by more joins a trusted line (a / b >= 1 / max_angle) when all of it lies within
// max_offset of it. A fragment (too short or round to be a piece: the few pixels the noise left
// of a faint stretch) joins a trusted line when its centroid lies within max_offset / 2 of it and
// it is no wider across it than the trail. The gap between facing end points along the line is
// at most max_gap times the sum of their lengths. Pieces linked through other pieces (A-B, B-C)
// form one group, whatever the catalogue order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/detect/catalogue.hpp"

namespace starsift {

struct StreakMergeParams {
  // Chosen by measurement (docs/detect.md, "Streak merge").
  static constexpr double kDefaultMaxAngle = 0.1;
  static constexpr double kMaxMaxAngle = 0.5;
  static constexpr double kDefaultMaxOffset = 2.0;
  static constexpr double kMaxMaxOffset = 100.0;
  static constexpr double kDefaultMinElongation = 2.0;
  static constexpr double kMaxMinElongation = 1000.0;
  static constexpr double kDefaultMinLength = 4.0;
  static constexpr double kMaxMinLength = 10000.0;
  static constexpr double kDefaultMaxGap = 0.5;
  static constexpr double kMaxMaxGap = 10.0;

  // Largest difference between the two pieces' position angles, rad [0.1], (0, 0.5].
  double max_angle = kDefaultMaxAngle;
  // Largest distance of a piece's centroid from the line of the better-known piece, px [2],
  // (0, 100]; a fragment's is half of it.
  double max_offset = kDefaultMaxOffset;
  // Smallest elongation (a / b) of a piece [2], 1..1000: round objects (stars) are never
  // pieces; a fragment joins only a trusted line, and only when no wider than the trail.
  double min_elongation = kDefaultMinElongation;
  // Smallest streak length of a piece, px [4], 0..10000: a few noise pixels in a row have
  // an elongation but no direction worth trusting.
  double min_length = kDefaultMinLength;
  // Largest gap between facing end points, as a fraction of the sum of the two pieces'
  // lengths [0.5], [0, 10].
  double max_gap = kDefaultMaxGap;

  // Throws Error naming the parameter, the value and what is allowed.
  void validate() const;

  bool operator==(const StreakMergeParams&) const = default;
};

// Buffers merge_streaks() reuses, so that merging allocates nothing once they have grown to
// the largest catalogue seen.
struct StreakMergeScratch {
  std::vector<std::uint32_t> candidates;      // indices of the records that may be pieces
  std::vector<double> reach;                  // per candidate: how far it may join (px)
  std::vector<std::uint32_t> short_by_x;      // the candidates of short reach, in x order
  std::vector<std::uint32_t> long_reach;      // the others
  std::vector<std::uint32_t> trusted;         // the candidates whose axis is trusted
  std::vector<std::uint32_t> fragments_by_x;  // the other records that may be fragments
  std::vector<std::uint32_t> parent;          // union-find over the records, roots the smallest
  std::vector<std::uint32_t> next;            // the next piece of the same group, in order
  std::vector<std::uint32_t> last;            // per root: its group's last piece so far
  std::vector<const DetectedObject*> pieces;  // the group being merged
};

// True when `o` may be a fragment of a streak: positive flux, finite position and moments.
bool is_streak_fragment(const DetectedObject& o) noexcept;

// True when `o` may be a streak piece: a fragment elongated and long enough.
bool is_streak_piece(const DetectedObject& o, const StreakMergeParams& params) noexcept;

// True when `p` and `q` lie on one line with a small gap between them: both streak pieces, or
// one a piece of trusted axis and the other a fragment on its line. False when neither is a
// piece. Symmetric in its two records.
bool streak_pieces_join(const DetectedObject& p, const DetectedObject& q,
                        const StreakMergeParams& params) noexcept;

// One record from the pieces `pieces[0..n)` (n >= 1): pixel counts, fluxes and variances
// summed, flux-weighted centroid, second moments combined about it (the parallel-axis
// theorem: the moments of the union of the pieces' pixels), bounding box union, the larger
// peak, the ellipse from the combined moments, and as length and end points the outermost
// of the pieces' end points along the combined major axis. Flagged kObjectStreakMerged; the
// id is the first piece's.
DetectedObject merge_streak_pieces(const DetectedObject* const* pieces, std::size_t n);

// Merges the pieces of each streak in `catalogue` (records in id order) into one record in
// the place of its smallest id; the others are removed and the catalogue renumbered 1, 2, ...
// in the same order (ids stay dense and in raster order of each object's first pixel).
// Returns the number of records removed (0: the catalogue is unchanged).
//
// With `new_ids`, when records were removed it is filled with where each went:
// (*new_ids)[k] is the new id of the record whose id was k, for k up to the largest id in the
// catalogue before the merge (0 maps to 0; an id no record had also to 0), so that a label
// frame can be renumbered to match (remap_labels()). Left as it was when nothing merged. Its
// storage is reused: no allocation once it has grown to the largest catalogue seen.
std::size_t merge_streaks(std::vector<DetectedObject>& catalogue, const StreakMergeParams& params,
                          StreakMergeScratch& scratch,
                          std::vector<std::uint32_t>* new_ids = nullptr);
std::size_t merge_streaks(std::vector<DetectedObject>& catalogue, const StreakMergeParams& params);

}  // namespace starsift
