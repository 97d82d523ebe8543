// SPDX-License-Identifier: LGPL-2.1-or-later
// The fused Gaussian of 8-bit gray frames on the tensor cores. A blur along a row is a product
// with a banded (Toeplitz) matrix: the 8 outputs x0..x0+7 of 16 rows are the 16 x K window of
// input columns x0 - R.. times the K x 8 matrix B[k][j] = w(k - j - R), the same matrix for
// every window. So each warp multiplies windows of the block's tile by one matrix it holds in
// registers (mma.sync m16n8k16, half operands, float sums), the row sums go to shared memory,
// and the columns are the transposed product with the same band: W[i][k] = w(k - i - R) times
// 16 x 8 windows of the row sums.
//
// Why: the float sums of the block tile (gauss_tile.cu) issue 2r + 1 operations a pixel and
// pass, and at sigma 2-3 the SM's issue slots, not the memory, bound them (docs/gauss.md,
// "Speed"). A tensor-core product does a whole window's taps in one instruction; the band's
// zeros cost the tensor cores time they have spare. Measured on an H200 (4096^2, against the
// float tile in the same run): 47 / 57 / 62 us at sigma 2 / 3 / 4 where the tile took 68 / 87 /
// 114 (bench/results/gauss/h200-mma/). Each block sums one tile: blocks looping over tiles,
// with or without the next tile's input copied ahead (cp.async), were 5-15 % slower.
//
// Accuracy: half operands carry 11 significant bits, so every operand is split in two halves,
// hi = half(v) and lo = half(v - hi), and the products that matter are summed: the samples
// (integers to 255) are exact in one half; each weight is w_hi + w_lo (24 bits); each row sum
// is s_hi + s_lo, and a column output sums W_hi S_hi + W_lo S_hi + W_hi S_lo (the dropped
// W_lo S_lo is 2^-22 of it). The weights are scaled by 2^8 on each pass, exactly, so that a
// row sum of 255 * 256 still fits a half and small tail weights keep their bits; the output is
// scaled back by 2^-16. The sums are thus within float rounding of the tile's, in another
// order: a sample may round the other way where its sum lies within that of .5, as between the
// other direct paths and gauss_reference() (|difference| <= 1).
//
// The block: a 64 x 64 tile of outputs and 256 threads (8 warps, one per 8-column strip).
// 1. Load: rows y0 - R .. and columns x0 - R .. as halves (a word of four samples a thread and
//    step, unpacked by a byte permute into 1024 + n and one subtraction), through the border.
//    Every row and column a product reads is loaded, the padding included, so that no
//    unloaded half (NaN, say) meets a zero weight.
// 2. Rows: each warp its strip on every 16-row slab of input rows, windows by ldmatrix; the
//    sums split into hi and lo planes of halves.
// 3. Columns: each warp its strip of the 64 output rows, the row sums by ldmatrix.trans; the
//    outputs rounded as gauss_round() rounds into shared memory (over the input, no longer
//    read), then stored a 4-byte word a thread.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "cuda/common/launch_limits.cuh"
#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "cuda/gauss/gauss_words.cuh"
#include "cuda/per_device.hpp"
#include "pipeline/border.hpp"

namespace starsift::cuda {

namespace {

constexpr int kTile = 64;  // outputs a block along each axis
constexpr int kThreads = 256;
constexpr int kStrip = 8;             // output columns of a warp (an m16n8 product's n)
constexpr int kSlab = 16;             // rows of an m16n8k16 product's m and k
constexpr int kSumPitch = kTile + 8;  // halves: 144-byte rows put ldmatrix's 8 rows in 8 banks
constexpr int kOutPitch = kTile + 4;  // bytes of a staged output row: 17 words, no conflicts
constexpr float kWeightScale = 256.0f;
constexpr float kOutScale = 1.0f / (kWeightScale * kWeightScale);
static_assert(kThreads / 32 * kStrip == kTile, "a warp a strip");

constexpr int round_up(int n, int m) {
  return (n + m - 1) / m * m;
}

// The shapes of bucket radius R (a multiple of 4, so that the tile's first column x0 - R starts
// a word of the input).
template <int R>
struct MmaTile {
  static_assert(R % 4 == 0 && R >= 4 && R <= kMaxTensorFusedRadius);
  static constexpr int kRowSteps = (kStrip + 2 * R + kSlab - 1) / kSlab;  // k-steps, row pass
  static constexpr int kColSteps = (kSlab + 2 * R + kSlab - 1) / kSlab;   // k-steps, columns
  // Input rows: whole slabs for the row pass, and every row the column pass's windows read.
  static constexpr int kRows =
      std::max(round_up(kTile + 2 * R, kSlab), kTile - kSlab + kSlab * kColSteps);
  // Input columns: every column the last strip's windows read, in an odd number of 16-byte
  // units so that ldmatrix's 8 rows fall in 8 different bank groups.
  static constexpr int kColsNeeded = std::max(kTile + 2 * R, kTile - kStrip + kSlab * kRowSteps);
  static constexpr int kCols = kColsNeeded % 16 == 0 ? kColsNeeded + 8 : round_up(kColsNeeded, 8);
  static constexpr std::size_t kInputBytes = sizeof(__half) * kRows * kCols;
  static constexpr std::size_t kSumBytes = sizeof(__half) * kRows * kSumPitch;  // a plane
  static constexpr std::size_t kSharedBytes = kInputBytes + 2 * kSumBytes;      // 58 KiB at R = 24
  static_assert(kInputBytes >= std::size_t{kTile} * kOutPitch, "the staged output fits");
};

using MmaArgs = gauss_io::FusedArgs;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr bool kDeviceHasMma = true;
#else
constexpr bool kDeviceHasMma = false;
#endif

// D += A B for one m16n8k16 product (A row-major 16 x 16, B column-major 16 x 8, halves; D
// floats), in the register layout of the PTX ISA's mma.m16n8k16.
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Four 8 x 8 matrices of halves from shared memory, each lane giving one row's address.
template <bool kTransposed>
__device__ __forceinline__ void load_matrices(const __half* row, std::uint32_t (&r)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(row));
  if constexpr (kTransposed) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
#endif
}

__device__ __forceinline__ std::uint32_t bits_of(__half2 h) {
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

// The band's entries w(d) for d = kBandFirst .. kBandLast (every offset the fragments of
// either pass hold), scaled and split, as registers of two neighbouring entries (d, d + 1):
// built once a block in shared memory, from which each lane picks its fragments. (Picked from
// the kernel's parameters, each lane's own offset made the constant cache serve a warp's
// loads one address at a time: three quarters of the kernel's time.) It lies in the row sums'
// planes, which phase 2 writes only after every lane has picked its fragments.
template <int R>
struct Band {
  using T = MmaTile<R>;
  static constexpr int kFirst = -(kSlab - 1) - R;
  // Past both passes' last d + 1: k < kSlab * steps, j or i >= 0.
  static constexpr int kLast = kSlab * std::max(T::kRowSteps, T::kColSteps) - R;
  static constexpr int kPairs = kLast - kFirst;  // pairs (d, d + 1)
  std::uint32_t hi[2][kPairs];                   // [axis][d - kFirst]
  std::uint32_t lo[2][kPairs];
  float w[2][R + 1];  // the weights of x and y
};

template <int R>
__device__ void build_band(const MmaArgs& a, Band<R>& band) {
  static_assert(sizeof(Band<R>) <= MmaTile<R>::kSumBytes);
  float(&w)[2][R + 1] = band.w;
  if (threadIdx.x <= R) {
    w[0][threadIdx.x] = a.wx[threadIdx.x];
    w[1][threadIdx.x] = a.wy[threadIdx.x];
  }
  __syncthreads();
  for (int k = threadIdx.x; k < 2 * Band<R>::kPairs; k += kThreads) {
    const int axis = k / Band<R>::kPairs, p = k - axis * Band<R>::kPairs;
    __half hi[2], lo[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int d = Band<R>::kFirst + p + e, m = d < 0 ? -d : d;
      const float v = m <= R ? w[axis][m] * kWeightScale : 0.0f;
      hi[e] = __float2half_rn(v);
      lo[e] = __float2half_rn(v - __half2float(hi[e]));
    }
    band.hi[axis][p] = bits_of(__halves2half2(hi[0], hi[1]));
    band.lo[axis][p] = bits_of(__halves2half2(lo[0], lo[1]));
  }
}

// A word of four samples as four halves, exactly: 0x64 above a byte n makes the half 1024 + n,
// and 1024 off it leaves n.
__device__ __forceinline__ uint2 halves_of(std::uint32_t word) {
  const __half2 bias = __float2half2_rn(1024.0f);
  const std::uint32_t p01 = __byte_perm(word, 0x64646464u, 0x4140u);
  const std::uint32_t p23 = __byte_perm(word, 0x64646464u, 0x4342u);
  const __half2 h01 = __hsub2(*reinterpret_cast<const __half2*>(&p01), bias);
  const __half2 h23 = __hsub2(*reinterpret_cast<const __half2*>(&p23), bias);
  return make_uint2(bits_of(h01), bits_of(h23));
}

// Phase 1: the input rows and columns, a warp a row and a word of four samples a lane (no
// division; the lanes past the row idle), in two halves: fetch_inner() (tiles whose rows and
// columns all lie inside the frame, all but the edges': no border rule) or fetch_edge() issue
// every load of a lane into registers, and the block builds the band while they are in
// flight; store_rows() unpacks them into shared memory. (Loaded after the band, each block
// waited on its setup and then on a whole round trip to memory.)
template <int R>
struct InputRows {  // a lane's words of the input rows
  using T = MmaTile<R>;
  static constexpr int kRowWords = T::kCols / 4;
  static constexpr int kWarpRows = T::kRows / (kThreads / 32);  // rows a warp loads
  static_assert(kRowWords <= 32 && T::kRows % (kThreads / 32) == 0);
  std::uint32_t words[kWarpRows];
};

template <int R>
__device__ __forceinline__ bool tile_inside(const gauss_io::Plane& p, int x0, int y0) {
  using T = MmaTile<R>;
  return x0 - R >= 0 && x0 - R + T::kCols <= p.width && y0 - R >= 0 &&
         y0 - R + T::kRows <= p.height;
}

template <int R>
__device__ __forceinline__ void fetch_inner(const gauss_io::Plane& p, int x0, int y0,
                                            InputRows<R>& rows) {
  using Wd = gauss_io::Word<gauss_io::Gray8>;
  const int lane = threadIdx.x % 32;
  if (lane >= InputRows<R>::kRowWords) return;
  // The warp's rows by a pointer stepped 8 rows (each row's address multiplied out cost a
  // word 5 instructions). All of a lane's rows are loaded before any is unpacked: with the
  // loop unrolled instead, the compiler kept the loads one after another behind the shared
  // stores (10-19 % slower).
  const std::byte* row =
      p.in + static_cast<std::ptrdiff_t>(y0 - R + threadIdx.x / 32) * p.in_stride;
  const std::ptrdiff_t step = (kThreads / 32) * p.in_stride;
#pragma unroll
  for (int i = 0; i < InputRows<R>::kWarpRows; ++i) {
    rows.words[i] = Wd::load(row, x0 - R + 4 * lane);
    row += step;
  }
}

template <int R>
__device__ __forceinline__ void store_rows(const InputRows<R>& rows, __half* input) {
  constexpr int kRowWords = InputRows<R>::kRowWords;
  const int lane = threadIdx.x % 32;
  if (lane >= kRowWords) return;
  uint2* const to = reinterpret_cast<uint2*>(input);
  const int ly0 = threadIdx.x / 32;
#pragma unroll
  for (int i = 0; i < InputRows<R>::kWarpRows; ++i) {
    to[(ly0 + i * (kThreads / 32)) * kRowWords + lane] = halves_of(rows.words[i]);
  }
}

// The tiles at the frame's edges (6 % of a 4096^2 frame's), through the border: a row's source
// found once a warp, a word's columns once a lane, where each word's row and column took a
// division and both went through the border's rule.
template <int R>
__device__ __forceinline__ void fetch_edge(const MmaArgs& a, int x0, int y0, InputRows<R>& rows) {
  using Wd = gauss_io::Word<gauss_io::Gray8>;
  const gauss_io::Plane& p = a.plane;
  const int lane = threadIdx.x % 32;
  if (lane >= InputRows<R>::kRowWords) return;
  const int x = x0 - R + 4 * lane;
  const bool whole = x >= 0 && x + 4 <= p.width;
  int sx[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) sx[i] = border_index(x + i, p.width, a.border);
#pragma unroll
  for (int i = 0; i < InputRows<R>::kWarpRows; ++i) {
    const int ly = static_cast<int>(threadIdx.x / 32) + i * (kThreads / 32);
    const int sy = border_index(y0 - R + ly, p.height, a.border);
    const std::byte* row = p.in + static_cast<std::ptrdiff_t>(sy < 0 ? 0 : sy) * p.in_stride;
    if (sy >= 0 && whole) {
      rows.words[i] = Wd::load(row, x);
    } else {
      float v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        v[j] = sy < 0 || sx[j] < 0 ? a.border_value : gauss_io::Gray8::load(row, sx[j], 0);
      }
      rows.words[i] = Wd::pack(v);  // a border value as the format holds it
    }
  }
}

// Up to radius 20 at most 64 registers, so that four blocks fit a multiprocessor as their shared
// memory allows (the stepped rows of the store took radius 20 to 69, three blocks).
template <int R>
__global__ void __launch_bounds__(kThreads, R <= 20 ? 4 : 1) gauss_mma_tile(const MmaArgs a) {
  // Older devices: the code compiles (every helper referenced) but the launcher never
  // launches it (device_runs_mma()).
  if constexpr (!kDeviceHasMma) return;
  using T = MmaTile<R>;
  extern __shared__ uint4 shared_words[];
  __half* const input = reinterpret_cast<__half*>(shared_words);  // kRows x kCols
  __half* const sum_hi = input + T::kRows * T::kCols;             // kRows x kSumPitch
  __half* const sum_lo = sum_hi + T::kRows * kSumPitch;
  const gauss_io::Plane& p = a.plane;
  const int lane = threadIdx.x % 32, strip = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;  // the fragments' row group and pair

  // 1. The input: every load of a lane issued first (fetch_inner(), fetch_edge()), then the
  // bands of both passes built in the row sums' planes (free until phase 2) while they are in
  // flight.
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  InputRows<R> input_rows;
  if (tile_inside<R>(p, x0, y0)) {
    fetch_inner<R>(p, x0, y0, input_rows);
  } else {
    fetch_edge<R>(a, x0, y0, input_rows);
  }
  Band<R>& band = *reinterpret_cast<Band<R>*>(sum_hi);
  build_band<R>(a, band);
  __syncthreads();
  store_rows<R>(input_rows, input);
  // Each lane's fragments: the row pass's B[k][j] = w(k - j - R), k = 2t, 2t + 1 (and + 8) of
  // column j = g; the column pass's W[i][k] = w(k - i - R), rows i = g, g + 8 and k = 2t,
  // 2t + 1 (and + 8); each k-step's hi and lo.
  std::uint32_t b_hi[T::kRowSteps][2], b_lo[T::kRowSteps][2];
#pragma unroll
  for (int s = 0; s < T::kRowSteps; ++s) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int pair = kSlab * s + 2 * t + 8 * h - g - R - Band<R>::kFirst;
      b_hi[s][h] = band.hi[0][pair];
      b_lo[s][h] = band.lo[0][pair];
    }
  }
  std::uint32_t w_hi[T::kColSteps][4], w_lo[T::kColSteps][4];
#pragma unroll
  for (int s = 0; s < T::kColSteps; ++s) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int i = g + 8 * (q % 2), k = kSlab * s + 2 * t + 8 * (q / 2);
      const int pair = k - i - R - Band<R>::kFirst;
      w_hi[s][q] = band.hi[1][pair];
      w_lo[s][q] = band.lo[1][pair];
    }
  }
  __syncthreads();  // the input stored, the band read: the row sums go over it

  // 2. Row sums of the strip's 8 columns on every input row, a 16-row slab at a time.
  const int a_row = lane % 8 + 8 * (lane / 8 % 2), a_col = 8 * (lane / 16);
#pragma unroll
  for (int m = 0; m < T::kRows / kSlab; ++m) {
    // The hi and lo weights' products in two sums: two chains of dependent products, not
    // one twice as long.
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f}, e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int s = 0; s < T::kRowSteps; ++s) {
      std::uint32_t frag[4];
      load_matrices<false>(
          input + (kSlab * m + a_row) * T::kCols + kStrip * strip + kSlab * s + a_col, frag);
      mma(d, frag, b_hi[s]);
      mma(e, frag, b_lo[s]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) d[i] += e[i];
      // Rows g and g + 8 of the slab, columns 2t and 2t + 1 of the strip.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const __half2 hi = __floats2half2_rn(d[2 * h], d[2 * h + 1]);
      const __half2 lo =
          __floats2half2_rn(d[2 * h] - __low2float(hi), d[2 * h + 1] - __high2float(hi));
      const int at = (kSlab * m + g + 8 * h) * kSumPitch + kStrip * strip + 2 * t;
      *reinterpret_cast<__half2*>(sum_hi + at) = hi;
      *reinterpret_cast<__half2*>(sum_lo + at) = lo;
    }
  }

  __syncthreads();

  // 3. Output rows 16 m + g (+ 8), columns 2t, 2t + 1 of the strip, staged as bytes over
  // the input.
  auto* const staged = reinterpret_cast<std::uint8_t*>(input);
  const int b_row = lane % 16;
  const __half* const b_plane = lane < 16 ? sum_hi : sum_lo;
#pragma unroll
  for (int m = 0; m < kTile / kSlab; ++m) {
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f}, e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int s = 0; s < T::kColSteps; ++s) {
      // Matrices: hi rows 0-7, hi rows 8-15, lo rows 0-7, lo rows 8-15 of the window.
      std::uint32_t frag[4];
      load_matrices<true>(b_plane + (kSlab * m + kSlab * s + b_row) * kSumPitch + kStrip * strip,
                          frag);
      const std::uint32_t s_hi[2] = {frag[0], frag[1]}, s_lo[2] = {frag[2], frag[3]};
      mma(d, w_hi[s], s_hi);
      mma(e, w_lo[s], s_hi);  // the two corrections in their own sum
      mma(e, w_hi[s], s_lo);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) d[i] += e[i];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // A weighted mean of the samples, within float rounding (mean_bits(): no clamp).
      const std::uint32_t v0 = gauss_io::mean_bits(d[2 * h] * kOutScale);
      const std::uint32_t v1 = gauss_io::mean_bits(d[2 * h + 1] * kOutScale);
      const int at = (kSlab * m + g + 8 * h) * kOutPitch + kStrip * strip + 2 * t;
      *reinterpret_cast<std::uint16_t*>(staged + at) =
          static_cast<std::uint16_t>(__byte_perm(v0, v1, 0x0040u));
    }
  }
  __syncthreads();

  // The tile's rows a word at a time (bytes at the frame's right edge): a thread keeps its
  // word's column and steps its rows, kRowRuns apart, by pointers (a row's address multiplied
  // out, and its index divided, cost a word as much as the rest of its store).
  constexpr int kRowWords = kTile / 4;
  constexpr int kRowRuns = kThreads / kRowWords;  // rows stored at once
  const int lx = 4 * (threadIdx.x % kRowWords), first_row = threadIdx.x / kRowWords;
  const int x = x0 + lx;
  if (x >= p.width) return;
  const int rows = min(kTile, p.height - y0);
  const std::uint8_t* from = staged + first_row * kOutPitch + lx;
  std::byte* out = p.out + static_cast<std::ptrdiff_t>(y0 + first_row) * p.out_stride + x;
  const std::ptrdiff_t out_step = kRowRuns * p.out_stride;
  const bool whole = x + 4 <= p.width;
#pragma unroll
  for (int ly = first_row; ly < kTile; ly += kRowRuns) {
    if (ly >= rows) break;
    if (whole) {
      *reinterpret_cast<std::uint32_t*>(out) = *reinterpret_cast<const std::uint32_t*>(from);
    } else {
      for (int i = 0; x + i < p.width; ++i) reinterpret_cast<std::uint8_t*>(out)[i] = from[i];
    }
    from += kRowRuns * kOutPitch;
    out += out_step;
  }
}

template <int R>
cudaError_t launch_as(const MmaArgs& args, cudaStream_t stream) {
  const dim3 grid((args.plane.width + kTile - 1) / kTile, (args.plane.height + kTile - 1) / kTile);
  gauss_mma_tile<R><<<grid, kThreads, MmaTile<R>::kSharedBytes, stream>>>(args);
  return cudaPeekAtLastError();
}

// Whether the current device runs the kernels' tensor-core code: an sm_80+ binary (a compute_75
// PTX JIT-compiled on an sm_80 device has none), the large buckets' shared memory opted in.
// Asked once a device.
bool device_runs_mma() {
  return once_per_device(
      [](int) -> std::optional<bool> {
        cudaFuncAttributes attributes{};
        const bool yes =
            cudaFuncGetAttributes(&attributes, gauss_mma_tile<4>) == cudaSuccess &&
            attributes.binaryVersion >= 80 &&
            allow_shared(gauss_mma_tile<20>, MmaTile<20>::kSharedBytes) == cudaSuccess &&
            allow_shared(gauss_mma_tile<24>, MmaTile<24>::kSharedBytes) == cudaSuccess;
        cudaGetLastError();
        return yes;
      },
      false);
}

}  // namespace

namespace gauss_detail {

bool mma_takes(const GaussParams& params, ConstImageView in, ImageView out) noexcept {
  if (in.format != PixelFormat::Gray8) return false;
  // At radius 2 (sigma 0.5) the float tile is as fast (42 us on a 4096^2 frame, H200): its few
  // taps leave the SM's issue slots free; from radius 3 this kernel is the faster.
  const int radius = std::max(params.effective_radius_x(), params.effective_radius_y());
  if (radius < 3 || radius > kMaxTensorFusedRadius) return false;
  // Words of four samples in and out.
  if (!rows_aligned(in.data, in.stride, 4) || !rows_aligned(out.data, out.stride, 4)) return false;
  return device_runs_mma();
}

cudaError_t launch_mma(const GaussParams& params, ConstImageView in, ImageView out,
                       cudaStream_t stream) {
  MmaArgs args;
  if (!gauss_io::fused_args(params, in, out, kMaxTensorFusedRadius, args)) {
    return cudaErrorInvalidValue;
  }
  if (!device_runs_mma()) return cudaErrorInvalidDeviceFunction;
  const int r = std::max(args.rx, args.ry);
  if (r <= 4) return launch_as<4>(args, stream);
  if (r <= 8) return launch_as<8>(args, stream);
  if (r <= 12) return launch_as<12>(args, stream);
  if (r <= 16) return launch_as<16>(args, stream);
  if (r <= 20) return launch_as<20>(args, stream);
  return launch_as<24>(args, stream);
}

}  // namespace gauss_detail

int gauss_max_fused_radius(PixelFormat format) noexcept {
  return format == PixelFormat::Gray8 && device_runs_mma() ? kMaxTensorFusedRadius
                                                           : kMaxFusedRadius;
}

}  // namespace starsift::cuda
