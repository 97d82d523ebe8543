// SPDX-License-Identifier: LGPL-2.1-or-later
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "bench/bench_kernels.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::bench {

namespace {

constexpr int kThreads = 256;

__host__ __device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// One random 32-bit word per (row, word index); a float in [-1000, 1000) when `as_float`.
__global__ void fill_kernel(std::byte* data, std::ptrdiff_t stride, int row_bytes, int height,
                            std::uint64_t key, bool as_float) {
  const int words = (row_bytes + 3) / 4;
  for (int y = blockIdx.y; y < height; y += gridDim.y) {
    std::byte* row = data + static_cast<std::ptrdiff_t>(y) * stride;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) {
      const std::uint64_t h =
          splitmix64(key ^ ((static_cast<std::uint64_t>(y) << 32) | static_cast<std::uint32_t>(i)));
      std::uint32_t word = static_cast<std::uint32_t>(h >> 32);
      if (as_float) {
        const float v = (static_cast<float>(word >> 8) * 0x1.0p-24f - 0.5f) * 2000.0f;
        word = __float_as_uint(v);
      }
      if (4 * i + 4 <= row_bytes) {
        reinterpret_cast<std::uint32_t*>(row)[i] = word;
      } else {
        for (int b = 4 * i; b < row_bytes; ++b) {
          row[b] = static_cast<std::byte>(word >> (8 * (b - 4 * i)));
        }
      }
    }
  }
}

template <class Unit>
__global__ void copy_kernel(const std::byte* in, std::ptrdiff_t in_stride, std::byte* out,
                            std::ptrdiff_t out_stride, int units_per_row, long long total) {
  const long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= total) return;
  const int y = static_cast<int>(k / units_per_row);
  const int x = static_cast<int>(k - static_cast<long long>(y) * units_per_row);
  reinterpret_cast<Unit*>(out + y * out_stride)[x] =
      reinterpret_cast<const Unit*>(in + y * in_stride)[x];
}

// Warp-aggregated: one atomic per warp and step, so a wholly different frame stays cheap.
__global__ void mismatch_kernel(const std::byte* a, std::ptrdiff_t a_stride, const std::byte* b,
                                std::ptrdiff_t b_stride, int width, long long total, int bpp,
                                int compare_bytes, unsigned long long* result) {
  const int lane = threadIdx.x % 32;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const long long warps = static_cast<long long>(gridDim.x) * blockDim.x / 32;
  for (long long base = warp * 32; base < total; base += warps * 32) {
    const long long k = base + lane;
    bool differs = false;
    if (k < total) {
      const int y = static_cast<int>(k / width);
      const int x = static_cast<int>(k - static_cast<long long>(y) * width);
      const std::byte* pa = a + y * a_stride + static_cast<std::ptrdiff_t>(x) * bpp;
      const std::byte* pb = b + y * b_stride + static_cast<std::ptrdiff_t>(x) * bpp;
      for (int i = 0; i < compare_bytes; ++i) differs |= pa[i] != pb[i];
    }
    const unsigned ballot = __ballot_sync(0xffffffffu, differs);
    if (ballot != 0 && lane == 0) {
      atomicAdd(&result[0], static_cast<unsigned long long>(__popc(ballot)));
      atomicMin(&result[1], static_cast<unsigned long long>(base + __ffs(ballot) - 1));
    }
  }
}

__device__ float sample_at(const std::byte* p, int bytes_per_sample, bool is_float) {
  if (is_float) return *reinterpret_cast<const float*>(p);
  if (bytes_per_sample == 2) return static_cast<float>(*reinterpret_cast<const std::uint16_t*>(p));
  return static_cast<float>(*reinterpret_cast<const std::uint8_t*>(p));
}

// One sample per thread and step; a warp's largest difference and its count of differing
// samples go out in one atomic each.
__global__ void difference_kernel(const std::byte* a, std::ptrdiff_t a_stride, const std::byte* b,
                                  std::ptrdiff_t b_stride, int width, int samples, int bpp,
                                  int bytes_per_sample, bool is_float, long long total,
                                  unsigned long long* result) {
  const int lane = threadIdx.x % 32;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const long long warps = static_cast<long long>(gridDim.x) * blockDim.x / 32;
  const long long per_row = static_cast<long long>(width) * samples;
  for (long long base = warp * 32; base < total; base += warps * 32) {
    const long long k = base + lane;
    float d = 0.0f;
    if (k < total) {
      const int y = static_cast<int>(k / per_row);
      const long long in_row = k - y * per_row;
      const int x = static_cast<int>(in_row / samples);
      const int c = static_cast<int>(in_row - static_cast<long long>(x) * samples);
      const std::ptrdiff_t offset = static_cast<std::ptrdiff_t>(x) * bpp + c * bytes_per_sample;
      const float va = sample_at(a + y * a_stride + offset, bytes_per_sample, is_float);
      const float vb = sample_at(b + y * b_stride + offset, bytes_per_sample, is_float);
      if (isnan(va) || isnan(vb)) {
        d = isnan(va) && isnan(vb) ? 0.0f : INFINITY;
      } else {
        d = fabsf(va - vb);
      }
    }
    const unsigned ballot = __ballot_sync(0xffffffffu, d > 0.0f);
    float m = d;
    for (int offset = 16; offset > 0; offset /= 2) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    }
    if (ballot != 0 && lane == 0) {
      // Non-negative floats order as their bits do.
      atomicMax(&result[0], static_cast<unsigned long long>(__float_as_uint(m)));
      atomicAdd(&result[1], static_cast<unsigned long long>(__popc(ballot)));
    }
  }
}

unsigned blocks_for(long long items) {
  return static_cast<unsigned>((items + kThreads - 1) / kThreads);
}

}  // namespace

cudaError_t fill_random(ImageView frame, std::uint64_t seed, std::uint32_t stream_id,
                        cudaStream_t stream) {
  const int row_bytes = static_cast<int>(frame.row_bytes());
  const int words = (row_bytes + 3) / 4;
  const dim3 grid(blocks_for(words),
                  static_cast<unsigned>(frame.height < 65535 ? frame.height : 65535));
  const std::uint64_t key = splitmix64(seed ^ splitmix64(stream_id));
  fill_kernel<<<grid, kThreads, 0, stream>>>(frame.data, frame.stride, row_bytes, frame.height, key,
                                             format_info(frame.format).is_float);
  return cudaPeekAtLastError();
}

cudaError_t copy_frame(ConstImageView in, ImageView out, cudaStream_t stream) {
  const std::size_t row_bytes = in.row_bytes();
  const auto aligned = [&](std::size_t unit) {
    return row_bytes % unit == 0 && reinterpret_cast<std::uintptr_t>(in.data) % unit == 0 &&
           reinterpret_cast<std::uintptr_t>(out.data) % unit == 0 && in.stride % unit == 0 &&
           out.stride % unit == 0;
  };
  const auto launch = [&]<class Unit>(Unit*) {
    const int units = static_cast<int>(row_bytes / sizeof(Unit));
    const long long total = static_cast<long long>(units) * in.height;
    copy_kernel<Unit><<<blocks_for(total), kThreads, 0, stream>>>(in.data, in.stride, out.data,
                                                                  out.stride, units, total);
  };
  if (aligned(16)) {
    launch(static_cast<uint4*>(nullptr));
  } else if (aligned(4)) {
    launch(static_cast<std::uint32_t*>(nullptr));
  } else {
    launch(static_cast<unsigned char*>(nullptr));
  }
  return cudaPeekAtLastError();
}

cudaError_t count_mismatches(ConstImageView a, ConstImageView b, int compare_bytes,
                             unsigned long long* result, cudaStream_t stream) {
  if (const cudaError_t s = cudaMemsetAsync(result, 0, sizeof(unsigned long long), stream);
      s != cudaSuccess) {
    return s;
  }
  if (const cudaError_t s = cudaMemsetAsync(result + 1, 0xff, sizeof(unsigned long long), stream);
      s != cudaSuccess) {
    return s;
  }
  const long long total = static_cast<long long>(a.width) * a.height;
  if (total == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(total) < 4096 ? blocks_for(total) : 4096;
  mismatch_kernel<<<blocks, kThreads, 0, stream>>>(a.data, a.stride, b.data, b.stride, a.width,
                                                   total, bytes_per_pixel(a.format), compare_bytes,
                                                   result);
  return cudaPeekAtLastError();
}

cudaError_t max_difference(ConstImageView a, ConstImageView b, int samples,
                           unsigned long long* result, cudaStream_t stream) {
  if (const cudaError_t s = cudaMemsetAsync(result, 0, 2 * sizeof(unsigned long long), stream);
      s != cudaSuccess) {
    return s;
  }
  const long long total = static_cast<long long>(a.width) * a.height * samples;
  if (total == 0) return cudaSuccess;
  const FormatInfo& info = format_info(a.format);
  const unsigned blocks = blocks_for(total) < 4096 ? blocks_for(total) : 4096;
  difference_kernel<<<blocks, kThreads, 0, stream>>>(
      a.data, a.stride, b.data, b.stride, a.width, samples, bytes_per_pixel(a.format),
      info.bytes_per_sample, info.is_float, total, result);
  return cudaPeekAtLastError();
}

}  // namespace starsift::bench
