// Whitening, fit: the products of the excluded pixels (invalid in the current frame or in any
// stored frame, on the fit rows), which the solve subtracts from R and r so every entry is a
// sum over one common set of pixels (reference.cpp, leave_out_excluded()).
//
// Schedule: a fixed grid of kWhitenExcludedBlocks blocks, each owning one contiguous range of
// the plane. A block walks its range in 256-pixel tiles: the excluded pixels of a tile are
// compacted in pixel order (warp votes, then the warps in order) into shared memory, their
// n history values and target value loaded 32 pixels at a time, and each thread adds the
// products of its entries of (R, r) in pixel order. Excluded pixels are few (clipped stars,
// hot pixels), so the pass costs the scan of the per-pixel count (1 B/px) and the frame's
// mask (1/8 B/px); the block's partial sums go out only when it found any, and the solve adds
// the blocks' partials in block order: the same result every run, no atomics on doubles.
// Ranges are whole spans of kSpan pixels (but the last): a span is first read 16 pixels per
// thread (one 16-byte load of the counts, half a mask word) and skipped when none of its
// pixels is excluded, the common case, so the scan runs at memory speed.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

constexpr int kChunk = 32;  // excluded pixels whose values sit in shared memory at once
constexpr int kSpanPerThread = 16;
constexpr std::size_t kSpan = std::size_t{kWhitenBlock} * kSpanPerThread;

// Whether any pixel of the whole span [start, start + kSpan) is invalid in this frame or in
// a stored one (all threads of the block call it; start is a multiple of kSpan).
__device__ bool span_has_excluded(const WhitenDeviceState& s, std::size_t start) {
  const std::size_t first = start + static_cast<std::size_t>(threadIdx.x) * kSpanPerThread;
  const uint4 counts = *reinterpret_cast<const uint4*>(s.window_count + first);
  const unsigned half = (s.frame_bits[first >> 5] >> (first & 31)) & 0xffffu;
  const bool any = (counts.x | counts.y | counts.z | counts.w | half) != 0u;
  return __syncthreads_or(any) != 0;
}
constexpr int kEntriesPerThread = (kWhitenMaxEntries + kWhitenBlock - 1) / kWhitenBlock;

__global__ void __launch_bounds__(kWhitenBlock)
    excluded_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ unsigned list[kWhitenBlock];
  __shared__ unsigned warp_counts[kWhitenBlock / 32];
  __shared__ double values[kChunk][kWhitenMaxLags];
  const int n = plan.n;
  const int triangle = n * (n + 1) / 2;
  const int entries = triangle + n;
  const float* target = plan.past ? plane_of(s, plan.target_slot) : (plan.resample ? s.y : s.x);

  // This thread's entries: (row, column) of R's lower triangle, or (row, -1) for r.
  int rows[kEntriesPerThread], cols[kEntriesPerThread];
  double acc[kEntriesPerThread];
#pragma unroll
  for (int j = 0; j < kEntriesPerThread; ++j) {
    acc[j] = 0.0;
    const int e = threadIdx.x + j * kWhitenBlock;
    rows[j] = -1;
    cols[j] = -1;
    if (e < triangle) {
      int r = 0;
      while ((r + 1) * (r + 2) / 2 <= e) ++r;
      rows[j] = r;
      cols[j] = e - r * (r + 1) / 2;
    } else if (e < entries) {
      rows[j] = e - triangle;
    }
  }

  const std::size_t total = s.plane;
  const std::size_t spans = (total + kSpan - 1) / kSpan;
  const std::size_t per_block = (spans + gridDim.x - 1) / gridDim.x * kSpan;
  const std::size_t begin = per_block * blockIdx.x < total ? per_block * blockIdx.x : total;
  const std::size_t end = begin + per_block < total ? begin + per_block : total;
  unsigned found = 0;
  for (std::size_t start = begin; start < end; start += kWhitenBlock) {
    // At the start of a whole span with nothing excluded: skip the span.
    if ((start - begin) % kSpan == 0 && start + kSpan <= end && !span_has_excluded(s, start)) {
      start += kSpan - kWhitenBlock;
      continue;
    }
    const std::size_t p = start + threadIdx.x;
    bool excluded = false;
    if (p < end &&
        fit_row(static_cast<int>(static_cast<unsigned>(p) / static_cast<unsigned>(s.width)),
                plan.fit_subsample)) {
      excluded = ((s.frame_bits[p >> 5] >> (p & 31)) & 1u) != 0 || s.window_count[p] != 0;
    }
    // A tile of a span that has some (a few hot pixels or noise spikes in 4096) but not here.
    if (__syncthreads_or(excluded) == 0) continue;
    const unsigned votes = __ballot_sync(0xffffffffu, excluded);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_counts[warp] = __popc(votes);
    __syncthreads();
    unsigned before = 0, tile = 0;
    for (int w = 0; w < kWhitenBlock / 32; ++w) {
      if (w < warp) before += warp_counts[w];
      tile += warp_counts[w];
    }
    if (excluded) {
      list[before + __popc(votes & ((1u << lane) - 1u))] = static_cast<unsigned>(p);
    }
    __syncthreads();
    for (unsigned chunk = 0; chunk < tile; chunk += kChunk) {
      const int count = tile - chunk < kChunk ? static_cast<int>(tile - chunk) : kChunk;
      for (int i = threadIdx.x; i < count * (n + 1); i += kWhitenBlock) {
        const int c = i / (n + 1), k = i - c * (n + 1);
        const unsigned q = list[chunk + c];
        values[c][k] =
            k < n ? static_cast<double>(plane_of(s, plan.fit_slots[k])[q]) : fit_value(target[q]);
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kEntriesPerThread; ++j) {
        if (rows[j] < 0) continue;
        const int r = rows[j];
        const int c = cols[j] >= 0 ? cols[j] : n;  // r's entry pairs with the target
        for (int i = 0; i < count; ++i) acc[j] += values[i][c] * values[i][r];
      }
      __syncthreads();
    }
    found += tile;
    __syncthreads();  // warp_counts and list are rewritten by the next tile
  }
  if (threadIdx.x == 0) s.excluded_counts[blockIdx.x] = found;
  if (found == 0) return;
  double* out = s.excluded_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxEntries;
#pragma unroll
  for (int j = 0; j < kEntriesPerThread; ++j) {
    const int e = threadIdx.x + j * kWhitenBlock;
    if (e < entries) out[e] = acc[j];
  }
}

}  // namespace

cudaError_t launch_whiten_excluded(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                   cudaStream_t stream) {
  excluded_kernel<<<kWhitenExcludedBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
