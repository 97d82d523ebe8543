// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/history.hpp"

namespace starsift {

void WhitenHistory::allocate(int capacity, int width, int height) {
  capacity_ = capacity;
  width_ = width;
  height_ = height;
  frames_.assign(static_cast<std::size_t>(capacity) * width * height, 0.0f);
  masks_.assign(static_cast<std::size_t>(capacity) * width * height, 0);
  gram_.assign(static_cast<std::size_t>(capacity) * capacity, 0.0);
  clear();
}

void WhitenHistory::clear() noexcept {
  size_ = 0;
  head_ = 0;
}

int WhitenHistory::slot_of_lag(int lag) const noexcept {
  return ((head_ - lag) % capacity_ + capacity_) % capacity_;
}

ImageView WhitenHistory::frame(int slot) noexcept {
  const auto plane = static_cast<std::ptrdiff_t>(width_) * height_;
  return {reinterpret_cast<std::byte*>(frames_.data() + slot * plane), width_, height_,
          static_cast<std::ptrdiff_t>(width_ * sizeof(float)), PixelFormat::Gray32F};
}

ConstImageView WhitenHistory::frame(int slot) const noexcept {
  return const_view(const_cast<WhitenHistory*>(this)->frame(slot));
}

unsigned char* WhitenHistory::mask(int slot) noexcept {
  return masks_.data() + static_cast<std::size_t>(slot) * width_ * height_;
}

const unsigned char* WhitenHistory::mask(int slot) const noexcept {
  return masks_.data() + static_cast<std::size_t>(slot) * width_ * height_;
}

void WhitenHistory::commit(const double* dots) noexcept {
  const int slot = head_;
  const int kept = size_ < capacity_ - 1 ? size_ : capacity_ - 1;
  for (int lag = 1; lag <= kept; ++lag) {
    const int other = slot_of_lag(lag);
    gram_[slot * capacity_ + other] = dots[other];
    gram_[other * capacity_ + slot] = dots[other];
  }
  gram_[slot * capacity_ + slot] = dots[slot];
  head_ = (head_ + 1) % capacity_;
  if (size_ < capacity_) ++size_;
}

}  // namespace starsift
