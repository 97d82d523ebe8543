// SPDX-License-Identifier: LGPL-2.1-or-later
// The whitening history: the last frames stored (on the aligned grid, as float: with
// history-format: half the values are rounded to binary16 before they are stored) in a ring of
// `capacity` slots, each with its mask of invalid pixels (1: the frame had no usable value
// there: saturated or not finite), and the circular Gram matrix of their pairwise dot
// products. Storing a frame adds one row/column (its products with the frames kept); nothing
// is recomputed.
#pragma once

#include <cstddef>
#include <vector>

#include "pipeline/image.hpp"

namespace starsift {

class WhitenHistory {
 public:
  // `capacity` slots of width x height floats; forgets everything.
  void allocate(int capacity, int width, int height);
  // Forgets the frames (keeps the memory).
  void clear() noexcept;

  int capacity() const noexcept { return capacity_; }
  // Frames stored so far, at most capacity().
  int size() const noexcept { return size_; }

  // The slot of the frame stored `lag` frames ago (1 = the most recent), lag <= size().
  int slot_of_lag(int lag) const noexcept;
  // The slot the next frame goes to: a free one, or the oldest frame's when full.
  int next_slot() const noexcept { return head_; }

  ImageView frame(int slot) noexcept;
  ConstImageView frame(int slot) const noexcept;
  // The slot's invalid-pixel mask, width x height bytes, row-major.
  unsigned char* mask(int slot) noexcept;
  const unsigned char* mask(int slot) const noexcept;

  // The Gram matrix, capacity() x capacity(), row-major; entry (i, j) is the dot product of
  // the frames in slots i and j (meaningful while both hold frames).
  const double* gram() const noexcept { return gram_.data(); }
  int gram_ld() const noexcept { return capacity_; }
  double gram_at(int i, int j) const noexcept { return gram_[i * capacity_ + j]; }

  // Declares the frame written into frame(next_slot()) stored. `dots[slot]` is its dot product
  // with the frame in `slot`, for its own slot and the slots of lags 1..min(size(),
  // capacity() - 1) (the frames it is kept with); other entries are ignored.
  void commit(const double* dots) noexcept;

 private:
  int capacity_ = 0;
  int width_ = 0;
  int height_ = 0;
  int size_ = 0;
  int head_ = 0;
  std::vector<float> frames_;         // capacity_ planes of width_ x height_
  std::vector<unsigned char> masks_;  // capacity_ masks of width_ x height_
  std::vector<double> gram_;          // capacity_ x capacity_
};

}  // namespace starsift
