// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA labelling against the CPU reference: the same labels bit for bit and the same count,
// 4 and 8 connectivity, small odd shapes and 4096^2-class frames, padded strides on both
// sides (device padding never written), one scratch reused without clearing.
#include <catch2/catch.hpp>

#include <algorithm>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/detect/labels.cuh"
#include "cuda/device_buffer.hpp"
#include "detect/label_masks.hpp"
#include "pipeline/detect/labels.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

constexpr std::uint8_t kPadByte = 0xAB;  // device label padding: every byte, checked after
constexpr int kMaskPad = 13;             // bytes of device mask padding per row
constexpr int kLabelPad = 9;             // words of device label padding per row

struct DeviceMem {
  explicit DeviceMem(std::size_t bytes) {
    cuda::check(cudaMalloc(&ptr, bytes ? bytes : 1), "cudaMalloc");
  }
  ~DeviceMem() { cudaFree(ptr); }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  void* ptr = nullptr;
};

// A star field: discs of radius 0..6 at random places, a few long streaks, 1 byte per pixel.
Mask star_field(int w, int h, std::uint32_t seed) {
  Mask m("star field", w, h);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> px(0, w - 1), py(0, h - 1), radius(0, 6);
  for (int s = 0; s < w * h / 300; ++s) {
    const int cx = px(rng), cy = py(rng), r = radius(rng) / 2 + (radius(rng) == 6 ? 4 : 0);
    for (int y = std::max(0, cy - r); y <= std::min(h - 1, cy + r); ++y)
      for (int x = std::max(0, cx - r); x <= std::min(w - 1, cx + r); ++x)
        if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) m.at(x, y) = 255;
  }
  for (int k = 0; k < 6; ++k) {
    const double x0 = px(rng), y0 = py(rng), angle = k * 0.5 + 0.1, len = w * (0.1 + 0.08 * k);
    for (double t = 0; t < len; t += 0.5) {
      const int x = static_cast<int>(x0 + t * std::cos(angle));
      const int y = static_cast<int>(y0 + t * std::sin(angle));
      if (x >= 0 && y >= 0 && x < w && y < h) m.at(x, y) = 200;
    }
  }
  return m;
}

// How the device rows lie: padded by odd amounts (the mask's rows and the labels' rows unaligned:
// read and written a sample at a time), or aligned to 16 bytes (a tile row's mask in two 16-byte
// loads, 4 labels in one store).
enum class Rows { Odd, Aligned };

struct Labeller {
  Labeller(int max_w, int max_h)
      : scratch_bytes(cuda::label_scratch_bytes(max_w, max_h)),
        scratch(scratch_bytes),
        mask(static_cast<std::size_t>(max_w + 32) * max_h),
        labels(static_cast<std::size_t>(max_w + 16) * max_h * 4),
        count(4) {
    REQUIRE(scratch_bytes > 0);
  }

  // Labels `m` on the GPU; returns the labels without padding; checks the padding. With
  // LabelBackground::Keep the background's labels come back as the buffer held them (every
  // byte kPadByte).
  std::vector<std::uint32_t> run(const Mask& m, Connectivity c, std::uint32_t& n,
                                 cudaStream_t stream, Rows rows = Rows::Odd,
                                 cuda::LabelBackground background = cuda::LabelBackground::Zero) {
    const bool aligned = rows == Rows::Aligned;
    const std::ptrdiff_t mask_stride = aligned ? (m.width + 15) / 16 * 16 + 16 : m.width + kMaskPad;
    const std::ptrdiff_t label_stride = aligned ? (m.width + 3) / 4 * 4 + 4 : m.width + kLabelPad;
    const std::size_t label_bytes = static_cast<std::size_t>(label_stride) * m.height * 4;
    cuda::check(cudaMemset(mask.ptr, 0x5A, static_cast<std::size_t>(mask_stride) * m.height),
                "cudaMemset");
    cuda::check(cudaMemcpy2D(mask.ptr, mask_stride, m.bytes.data(), m.stride, m.width, m.height,
                             cudaMemcpyHostToDevice),
                "upload");
    cuda::check(cudaMemset(labels.ptr, kPadByte, label_bytes), "cudaMemset");
    cuda::check(cudaMemset(count.ptr, 0xFF, 4), "cudaMemset");
    cuda::check(
        cuda::launch_labels(static_cast<const std::uint8_t*>(mask.ptr), mask_stride, m.width,
                            m.height, c, static_cast<std::uint32_t*>(labels.ptr), label_stride,
                            static_cast<std::uint32_t*>(count.ptr), {scratch.ptr, scratch_bytes},
                            stream, cuda::LabelSchedule::Auto, background),
        "launch_labels");
    cuda::check(cudaStreamSynchronize(stream), "sync");
    std::vector<std::uint32_t> padded(static_cast<std::size_t>(label_stride) * m.height);
    cuda::check(cudaMemcpy(padded.data(), labels.ptr, label_bytes, cudaMemcpyDeviceToHost),
                "download");
    cuda::check(cudaMemcpy(&n, count.ptr, 4, cudaMemcpyDeviceToHost), "download");
    std::vector<std::uint32_t> out(static_cast<std::size_t>(m.width) * m.height);
    bool padding_kept = true;
    for (int y = 0; y < m.height; ++y) {
      for (int x = 0; x < m.width; ++x) out[y * m.width + x] = padded[y * label_stride + x];
      for (int x = m.width; x < label_stride; ++x)
        padding_kept &= padded[y * label_stride + x] == 0xABABABABu;
    }
    REQUIRE(padding_kept);
    return out;
  }

  std::size_t scratch_bytes;
  DeviceMem scratch, mask, labels, count;
};

std::vector<std::uint32_t> reference(const Mask& m, Connectivity c, std::uint32_t& n) {
  std::vector<std::uint32_t> parent, out(static_cast<std::size_t>(m.width) * m.height);
  n = label_reference(m.bytes.data(), m.stride, m.width, m.height, c, out.data(), m.width, parent);
  return out;
}

// Where two label images first differ, for the failure message.
std::string first_difference(const std::vector<std::uint32_t>& a,
                             const std::vector<std::uint32_t>& b, int width) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) {
      std::ostringstream os;
      os << "(" << i % width << ", " << i / width << "): got " << a[i] << ", expected " << b[i];
      return os.str();
    }
  return "none";
}

// The labels and count against the reference, in both row layouts; and with the background's
// labels kept, the foreground's the same and the background's untouched.
void check_equal(Labeller& gpu, const Mask& m, cudaStream_t stream) {
  for (Connectivity c : {Connectivity::Four, Connectivity::Eight}) {
    std::uint32_t n_ref = 0;
    const auto expected = reference(m, c, n_ref);
    for (const Rows rows : {Rows::Odd, Rows::Aligned}) {
      std::uint32_t n_gpu = 0;
      const auto got = gpu.run(m, c, n_gpu, stream, rows);
      INFO(m.name << " " << m.width << "x" << m.height << " connectivity " << static_cast<int>(c)
                  << " rows " << (rows == Rows::Odd ? "odd" : "aligned") << " components " << n_ref
                  << " first difference " << first_difference(got, expected, m.width));
      REQUIRE(n_gpu == n_ref);
      REQUIRE(got == expected);
    }
    // Background kept: the pass writes the groups of 4 pixels of a row (from column 0) that hold
    // a foreground pixel, whole, and leaves the others as the buffer held them.
    std::uint32_t n_kept = 0;
    const auto kept = gpu.run(m, c, n_kept, stream, Rows::Aligned, cuda::LabelBackground::Keep);
    REQUIRE(n_kept == n_ref);
    std::vector<std::uint32_t> want = expected;
    for (int y = 0; y < m.height; ++y) {
      for (int x0 = 0; x0 < m.width; x0 += 4) {
        const int x1 = std::min(x0 + 4, m.width);
        bool any = false;
        for (int x = x0; x < x1; ++x)
          any |= expected[static_cast<std::size_t>(y) * m.width + x] != 0;
        if (any) continue;
        for (int x = x0; x < x1; ++x) want[static_cast<std::size_t>(y) * m.width + x] = 0xABABABABu;
      }
    }
    INFO(m.name << " background kept, first difference " << first_difference(kept, want, m.width));
    REQUIRE(kept == want);
  }
}

}  // namespace

TEST_CASE("CUDA labels equal the CPU reference on small and odd masks", "[labels][cuda]") {
  Labeller gpu(400, 300);
  cuda::Stream stream;
  int cases = 0;
  for (const Mask& m : small_masks()) {
    check_equal(gpu, m, stream.get());
    ++cases;
  }
  REQUIRE(cases > 60);
}

TEST_CASE("CUDA labels equal the CPU reference on large frames", "[labels][cuda][large]") {
  Labeller gpu(4099, 4096);
  cuda::Stream stream;
  check_equal(gpu, star_field(4096, 4096, 3), stream.get());
  check_equal(gpu, star_field(4099, 4093, 4), stream.get());
  check_equal(gpu, random_mask(4096, 4096, 0.1, 5), stream.get());
  check_equal(gpu, random_mask(4096, 4096, 0.5, 6), stream.get());
  check_equal(gpu, random_mask(4096, 4096, 0.6, 7), stream.get());  // above percolation
  Mask full("all foreground", 4096, 4096);
  std::fill(full.bytes.begin(), full.bytes.end(), 1);
  check_equal(gpu, full, stream.get());
  check_equal(gpu, spiral(2047), stream.get());
  check_equal(gpu, checkerboard(4096, 1024), stream.get());
}

TEST_CASE("CUDA labels: empty frames and what the launcher refuses", "[labels][cuda]") {
  Labeller gpu(64, 64);
  auto* mask = static_cast<const std::uint8_t*>(gpu.mask.ptr);
  auto* labels = static_cast<std::uint32_t*>(gpu.labels.ptr);
  auto* count = static_cast<std::uint32_t*>(gpu.count.ptr);
  const cuda::LabelScratch scratch{gpu.scratch.ptr, gpu.scratch_bytes};
  cuda::check(cudaMemset(count, 0xFF, 4), "cudaMemset");
  REQUIRE(cuda::launch_labels(mask, 64, 0, 64, Connectivity::Eight, labels, 64, count, scratch,
                              nullptr) == cudaSuccess);
  std::uint32_t n = 1;
  cuda::check(cudaMemcpy(&n, count, 4, cudaMemcpyDeviceToHost), "download");
  REQUIRE(n == 0);
  // Strides shorter than a row, scratch too small for the frame.
  REQUIRE(cuda::launch_labels(mask, 63, 64, 64, Connectivity::Four, labels, 64, count, scratch,
                              nullptr) == cudaErrorInvalidValue);
  REQUIRE(cuda::launch_labels(mask, 64, 64, 64, Connectivity::Four, labels, 63, count, scratch,
                              nullptr) == cudaErrorInvalidValue);
  REQUIRE(cuda::launch_labels(mask, 128, 128, 64, Connectivity::Four, labels, 128, count, scratch,
                              nullptr) == cudaErrorInvalidValue);
  REQUIRE(cuda::launch_labels(mask, 64, 64, 64, static_cast<Connectivity>(6), labels, 64, count,
                              scratch, nullptr) == cudaErrorInvalidValue);
  REQUIRE(cuda::label_scratch_bytes(1 << 16, 1 << 16) == 0);  // beyond 2^31 indices
  REQUIRE(cudaGetLastError() == cudaSuccess);
}
