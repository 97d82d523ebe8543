// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, fit: the products of the excluded pixels (invalid in the current frame or in any
// stored frame, on the fit rows), which the solve subtracts from R and r so every entry is a
// sum over one common set of pixels (reference.cpp, leave_out_excluded()).
//
// Schedule: a fixed grid of kWhitenExcludedBlocks blocks, each owning one contiguous range of
// whole steps of kStep pixels (but the last; at 4096^2 one step a block). A step is tested at
// once: a warp owns 4096 consecutive pixels, a lane reads 16 of them at a time with one 16-byte
// load of the per-pixel counts and half a word of the frame's mask, eight such loads all in
// flight (coalesced: the lanes' 16-pixel groups are consecutive). The excluded pixels are then
// listed in pixel order in shared memory: each lane's count, a warp scan (shuffles), the warps
// in order (one barrier). Only when the list is full, or the range is done, are the listed
// pixels' n history values and target value gathered (up to kChunk pixels at a time, every
// thread's loads issued together) and each thread adds the products of its entries of (R, r)
// in list order. Excluded pixels can be common and scattered (saturated samples; despiked
// ones were, when a spike was a missing sample: ~2e-3 of the pixels with 21 stored frames,
// some in every 4096), and then a test per pixel or a compaction per small tile leaves the
// pass bound by barriers and dependent loads (compacting 256-pixel tiles took 0.18 ms a frame
// at 4096^2, N = 20, on an H100); this way a block waits on memory twice (the test, the
// gather) and the pass costs the scan of the counts (1 B/px) and the mask (1/8 B/px) plus one
// gather per excluded pixel and lag.
//
// Every block leaves its partial sums (zeros when it found none), entry-major
// (excluded_partials[entry * kWhitenExcludedBlocks + block]), so the assembly adds one entry's
// blocks with a warp's coalesced loads in a fixed order: the same result every run, no atomics
// on doubles.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

constexpr int kWarps = kWhitenBlock / 32;
constexpr int kGroup = 16;                     // pixels of one 16-byte load of counts
constexpr int kGroupsPerLane = 8;              // loads in flight per lane and step
constexpr int kWarpGroupStride = 32 * kGroup;  // a warp's load covers 512 pixels
constexpr int kWarpPixels = kGroupsPerLane * kWarpGroupStride;  // 4096 pixels a warp and step
constexpr int kStep = kWarps * kWarpPixels;                     // 32768 pixels a block and step
// Listed pixels before they are processed (a block with more goes on after processing them).
constexpr int kListCapacity = 1024;

static_assert(kWhitenBlock % 32 == 0, "whole warps");
static_assert(32 * kGroup < (1 << 16), "a warp's count for one load fits 16 bits of a packed scan");

// Bit i set where byte i of w is not 0: bit 7 of each byte gathers whether the byte is
// nonzero (the low seven bits plus 0x7f carry into it, the high bit is or-ed in; no carry
// leaves a byte), then the four bits move next to each other (one multiply, no overlaps).
__device__ __forceinline__ unsigned nonzero_bytes(unsigned w) {
  const unsigned high = (((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u;
  return (((high >> 7) * 0x00204081u) >> 21) & 0xfu;
}

// Which of the 16 pixels [g, g + 16) are excluded: invalid in this frame or counted invalid
// in a stored frame (g a multiple of 16, the 16 pixels inside the plane).
__device__ __forceinline__ unsigned group_excluded(const WhitenDeviceState& s, std::size_t g) {
  const uint4 c = __ldg(reinterpret_cast<const uint4*>(s.window_count + g));
  const unsigned frame = (__ldg(s.frame_bits + (g >> 5)) >> (g & 31)) & 0xffffu;
  return frame | nonzero_bytes(c.x) | nonzero_bytes(c.y) << 4 | nonzero_bytes(c.z) << 8 |
         nonzero_bytes(c.w) << 12;
}

// The same for a group at the end of the plane: only pixels before `end`, one at a time.
__device__ unsigned group_excluded_tail(const WhitenDeviceState& s, std::size_t g,
                                        std::size_t end) {
  unsigned bits = 0;
  for (int i = 0; i < kGroup && g + i < end; ++i) {
    const std::size_t p = g + i;
    if (((s.frame_bits[p >> 5] >> (p & 31)) & 1u) != 0 || s.window_count[p] != 0) bits |= 1u << i;
  }
  return bits;
}

// L: values a listed pixel holds in shared memory (n history values and the target, n < L);
// E: entries of (R, r) per thread (n (n + 1) / 2 + n <= E * kWhitenBlock); kChunk: pixels
// whose values are gathered at once.
template <int L, int E, int kChunk>
__global__ void __launch_bounds__(kWhitenBlock)
    excluded_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  constexpr int kLoads = (kChunk * L + kWhitenBlock - 1) / kWhitenBlock;
  __shared__ unsigned list[kListCapacity];
  // Two sets: a step's counts are read after one barrier while the next step writes the
  // other set, so no second barrier per step is needed.
  __shared__ unsigned warp_counts[2][kWarps];
  __shared__ double values[kChunk][L];
  __shared__ const void* planes[L];
  const int n = plan.n;
  const int triangle = n * (n + 1) / 2;
  const int entries = triangle + n;
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  // Lag k's plane at k < n, the fitted frame at n (read after the first barrier below).
  for (int k = static_cast<int>(threadIdx.x); k <= n; k += kWhitenBlock) {
    planes[k] = k < n ? plane_of(s, plan.fit_slots[k])
                      : (plan.past ? plane_of(s, plan.target_slot)
                                   : static_cast<const void*>(plan.resample ? s.y : s.x));
  }

  // This thread's entries: (row, column) of R's lower triangle, or (row, n) for r (the row's
  // value times the target's), packed as row | column << 8; -1: none.
  int pair[E];
  double acc[E];
#pragma unroll
  for (int j = 0; j < E; ++j) {
    acc[j] = 0.0;
    const int e = static_cast<int>(threadIdx.x) + j * kWhitenBlock;
    pair[j] = -1;
    if (e < triangle) {
      int r, c;
      entry_position(e, r, c);
      pair[j] = r | c << 8;
    } else if (e < entries) {
      pair[j] = (e - triangle) | n << 8;
    }
  }

  // Adds the products of list[0, count) (count the same in every thread; every thread calls).
  auto add_products = [&](unsigned count) {
    for (unsigned first = 0; first < count; first += kChunk) {
      const int m = count - first < kChunk ? static_cast<int>(count - first) : kChunk;
      const int items = m * (n + 1);
      // All of this thread's loads first, then the stores: the loads' latencies overlap.
      float v[kLoads];
#pragma unroll
      for (int j = 0; j < kLoads; ++j) {
        const int i = static_cast<int>(threadIdx.x) + j * kWhitenBlock;
        v[j] = 0.0f;
        if (i < items) {
          const int c = i / (n + 1);
          const int k = i - c * (n + 1);
          const std::size_t q = list[first + c];
          // The history's planes (float or half), and the current frame's (float).
          v[j] = k < n || plan.past ? history_sample(s, planes[k], q)
                                    : __ldg(static_cast<const float*>(planes[k]) + q);
        }
      }
#pragma unroll
      for (int j = 0; j < kLoads; ++j) {
        const int i = static_cast<int>(threadIdx.x) + j * kWhitenBlock;
        if (i < items) {
          const int c = i / (n + 1), k = i - c * (n + 1);
          values[c][k] = k < n ? static_cast<double>(v[j]) : fit_value(v[j]);
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < E; ++j) {
        if (pair[j] < 0) continue;
        const int r = pair[j] & 0xff, c = pair[j] >> 8;
        double sum = acc[j];
        // One fused multiply-add: the product of two floats is exact in double, so this is
        // the reference's multiply, then add.
        for (int i = 0; i < m; ++i) sum = __fma_rn(values[i][c], values[i][r], sum);
        acc[j] = sum;
      }
      __syncthreads();  // values is rewritten by the next chunk, list by the next pixels
    }
  };

  const std::size_t total = s.plane;
  const std::size_t steps = (total + kStep - 1) / kStep;
  const std::size_t per_block = (steps + gridDim.x - 1) / gridDim.x * kStep;
  const std::size_t begin = per_block * blockIdx.x < total ? per_block * blockIdx.x : total;
  const std::size_t end = begin + per_block < total ? begin + per_block : total;
  const bool subsampled = plan.fit_subsample > 1;
  unsigned fill = 0;   // pixels listed, not yet processed (the same in every thread)
  unsigned found = 0;  // excluded pixels of the range
  int set = 0;
  for (std::size_t start = begin; start < end; start += kStep, set ^= 1) {
    // Lane's group j: pixels [first + j * kWarpGroupStride, + kGroup).
    const std::size_t first = start + static_cast<std::size_t>(warp) * kWarpPixels +
                              static_cast<std::size_t>(lane) * kGroup;
    unsigned bits[kGroupsPerLane];
    if (start + kStep <= end) {
#pragma unroll
      for (int j = 0; j < kGroupsPerLane; ++j)
        bits[j] = group_excluded(s, first + static_cast<std::size_t>(j) * kWarpGroupStride);
    } else {  // the plane's last step
#pragma unroll
      for (int j = 0; j < kGroupsPerLane; ++j) {
        const std::size_t g = first + static_cast<std::size_t>(j) * kWarpGroupStride;
        bits[j] = g + kGroup <= end ? group_excluded(s, g)
                                    : (g < end ? group_excluded_tail(s, g, end) : 0u);
      }
    }
    if (subsampled) {  // only the fit rows' pixels (few are excluded: a loop over them)
#pragma unroll
      for (int j = 0; j < kGroupsPerLane; ++j) {
        const std::size_t g = first + static_cast<std::size_t>(j) * kWarpGroupStride;
        for (unsigned m = bits[j]; m != 0; m &= m - 1) {
          const int i = __ffs(static_cast<int>(m)) - 1;
          const unsigned p = static_cast<unsigned>(g) + i;
          if (!fit_row(static_cast<int>(p / static_cast<unsigned>(s.width)), plan.fit_subsample))
            bits[j] &= ~(1u << i);
        }
      }
    }
    // Positions in pixel order: the warp's groups j' < j, then the lanes before in group j
    // (a scan over the lanes, two groups' counts packed in one word), then the warps before.
    unsigned scan[kGroupsPerLane / 2];
#pragma unroll
    for (int h = 0; h < kGroupsPerLane / 2; ++h)
      scan[h] = __popc(bits[2 * h]) | static_cast<unsigned>(__popc(bits[2 * h + 1])) << 16;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
#pragma unroll
      for (int h = 0; h < kGroupsPerLane / 2; ++h) {
        const unsigned below = __shfl_up_sync(0xffffffffu, scan[h], offset);
        if (lane >= offset) scan[h] += below;
      }
    }
    unsigned position[kGroupsPerLane];  // of the lane's first pixel of group j, in the warp
    unsigned warp_total = 0;
#pragma unroll
    for (int j = 0; j < kGroupsPerLane; ++j) {
      const unsigned inclusive = (scan[j / 2] >> (16 * (j % 2))) & 0xffffu;
      position[j] = warp_total + inclusive - __popc(bits[j]);
      warp_total += __shfl_sync(0xffffffffu, inclusive, 31);
    }
    if (lane == 0) warp_counts[set][warp] = warp_total;
    __syncthreads();
    unsigned before = 0, step_total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const unsigned c = warp_counts[set][w];
      if (w < warp) before += c;
      step_total += c;
    }
    found += step_total;
    // Into the list: as many as it holds, processed when full, until all of the step's are in.
    for (unsigned done = 0; done < step_total;) {
      const unsigned room = kListCapacity - fill;
      const unsigned take = step_total - done < room ? step_total - done : room;
#pragma unroll
      for (int j = 0; j < kGroupsPerLane; ++j) {
        const std::size_t g = first + static_cast<std::size_t>(j) * kWarpGroupStride;
        unsigned pos = before + position[j];
        for (unsigned m = bits[j]; m != 0; m &= m - 1, ++pos) {
          if (pos >= done && pos < done + take) {
            list[fill + pos - done] = static_cast<unsigned>(g) + (__ffs(static_cast<int>(m)) - 1);
          }
        }
      }
      fill += take;
      done += take;
      if (fill == kListCapacity) {
        __syncthreads();
        add_products(fill);
        fill = 0;
      }
    }
  }
  if (fill > 0) {
    __syncthreads();
    add_products(fill);
  }
  if (threadIdx.x == 0) s.excluded_counts[blockIdx.x] = found;
#pragma unroll
  for (int j = 0; j < E; ++j) {
    const int e = static_cast<int>(threadIdx.x) + j * kWhitenBlock;
    if (e < entries) {
      s.excluded_partials[static_cast<std::size_t>(e) * kWhitenExcludedBlocks + blockIdx.x] =
          acc[j];
    }
  }
}

// Histories whose entries fit one a thread (n <= 21 at 256 threads): one sum per thread and
// a chunk of 128 pixels' values; longer ones (up to 64 lags) take several.
constexpr int kSmallLags = 21;
static_assert(kSmallLags * (kSmallLags + 1) / 2 + kSmallLags <= kWhitenBlock,
              "the small schedule has one entry a thread");
constexpr int kLargeEntries = (kWhitenMaxEntries + kWhitenBlock - 1) / kWhitenBlock;

}  // namespace

cudaError_t launch_whiten_excluded(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                   cudaStream_t stream) {
  if (plan.n <= kSmallLags) {
    excluded_kernel<kSmallLags + 1, 1, 128>
        <<<kWhitenExcludedBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  } else {
    excluded_kernel<kWhitenMaxLags, kLargeEntries, 32>
        <<<kWhitenExcludedBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
