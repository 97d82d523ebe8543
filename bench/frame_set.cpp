// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/frame_set.hpp"

#include <algorithm>
#include <charconv>

#include "bench/bench_kernels.hpp"
#include "cuda/cuda_check.hpp"
#include "pipeline/error.hpp"

namespace starsift::bench {

std::string resolution_name(int width, int height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

Resolution parse_resolution(std::string_view text, std::string_view option) {
  const auto number = [&](std::string_view s) {
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      throw Error(std::string(option) + ": '" + std::string(text) + "' is not WxH");
    }
    return value;
  };
  const std::size_t x = text.find('x');
  if (x == std::string_view::npos) {
    throw Error(std::string(option) + ": '" + std::string(text) + "' is not WxH");
  }
  const Resolution r{number(text.substr(0, x)), number(text.substr(x + 1))};
  FrameShape{r.width, r.height, PixelFormat::Gray8, 8}.validate();
  return r;
}

FrameSet::FrameSet(Resolution r, PixelFormat format, std::size_t l2_bytes, std::uint64_t seed,
                   cudaStream_t stream)
    : width_(r.width), height_(r.height), format_(format) {
  const std::size_t row_bytes = static_cast<std::size_t>(r.width) * bytes_per_pixel(format);
  add_pair(row_bytes);
  const std::size_t pair_bytes = 2 * inputs_[0].pitch() * static_cast<std::size_t>(r.height);
  const std::size_t count = std::max<std::size_t>(3, 2 * l2_bytes / pair_bytes + 1);
  while (inputs_.size() < count) add_pair(row_bytes);
  const std::uint32_t tag = static_cast<std::uint32_t>(r.width * 131 + r.height * 7) * 8 +
                            static_cast<std::uint32_t>(format);
  for (int i = 0; i < frames(); ++i) {
    cuda::check(fill_random(out(i), seed, tag * 1024 + 2 * i, stream), "fill_random");
    cuda::check(fill_random(view(inputs_[i]), seed, tag * 1024 + 2 * i + 1, stream), "fill_random");
  }
  cuda::check(cudaStreamSynchronize(stream), "fill (cudaStreamSynchronize)");
}

void FrameSet::add_pair(std::size_t row_bytes) {
  inputs_.emplace_back(row_bytes, height_);
  outputs_.emplace_back(row_bytes, height_);
}

}  // namespace starsift::bench
