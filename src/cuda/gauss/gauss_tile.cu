// SPDX-License-Identifier: LGPL-2.1-or-later
// The fused Gaussian through a block's tile: each block blurs 64 columns by 64 rows (gray) or
// 32 rows (4-byte colour pixels, whose three channels take three planes) in three phases
// through shared memory, so that every sample is converted once, every tap is one fused
// multiply-add on operands already in registers, and the warps of several blocks a SM hide each
// other's latency.
//
// 1. Load: the tile's input with a halo of R rows and Ra = R rounded up to whole words of
//    columns, as floats, one plane per channel: a warp a row, gray frames a word (four
//    samples) a lane, colour ones a pixel. Integers are converted by a byte permute and a
//    subtraction (gauss_words.cuh). Samples across the frame's edge go through the border
//    mode, a row's once a warp and a column's once a lane.
// 2. Rows: 16 threads a row, four neighbouring columns each, read as aligned 16-byte words
//    (whole quarter-warps on 128 contiguous bytes: no bank conflict), written as one.
// 3. Columns: gray frames up to radius 4 four neighbouring columns a thread and 4 output rows,
//    their 4 + 2 R rows of row sums as 16-byte words in registers, each output row rounded and
//    stored as one word; the others one column a thread and kRun output rows, its kRun + 2 R
//    row sums of each channel in registers (the loops unrolled, so each is a register named at
//    compile time). Colour pixels keep their fourth byte.
// Rows are addressed by pointers stepped a row at a time, never by a row's index multiplied out
// (bench/results/gauss/h200-tile-steps/: 50 -> 33 instructions a pixel on GRAY16 at sigma 0.5).
//
// It replaced a kernel in which each warp walked down a strip of gray columns, its neighbours'
// samples by shuffles and a ring of row sums: that one issued 68 instructions a pixel at sigma
// 0.5 with a quarter of the SM's warps active; this one is 1.6-2.9x faster on every gray
// format and sigma (bench/results/gauss/h200-tile/). A walk with its ring in registers was
// tried again later and was slower still (bench/results/gauss/h200-walk/).
//
// The sums are gauss_direct.cu's, in the same order: w0 x0 + sum_i w_i (x_-i + x_i) by fused
// multiply-adds, rows then columns. The radius is a template bucket (gray 2, 4, 8, 12, 16;
// colour 2, 4); a smaller radius in a bucket has zero weights beyond it (and skips them for
// floats, where 0 * inf would be NaN).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/common/launch_limits.cuh"
#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "cuda/gauss/gauss_words.cuh"
#include "pipeline/border.hpp"

namespace starsift::cuda {

namespace {

constexpr int kTileW = 64;
constexpr int kThreads = 256;
constexpr int kWord = 4;                   // floats a 16-byte shared word; gray samples a load
constexpr int kSegments = kTileW / kWord;  // threads a row in the row pass
constexpr int kColumnRuns = kThreads / kTileW;
static_assert(kThreads % kTileW == 0);
// Colour frames (RGBA and its kin) up to this radius: their three float planes fill the shared
// memory of a few blocks at 64 x 32; beyond it the colour tiles of gauss_direct.cu.
constexpr int kMaxColourRadius = 16;

using TileArgs = gauss_io::FusedArgs;

// A block's tile for format traits Io at bucket radius R: C float planes of input (the tile and
// its apron) and of row sums.
template <class Io, int R>
struct Tile {
  static constexpr int C = Io::kChannels;
  static constexpr bool kGray = C == 1;
  static constexpr int kHeight = kGray ? 64 : 32;
  // Phase 3 by words of four columns a thread for gray frames up to radius 4; beyond, the
  // 4 + 2 R words a thread holds cost blocks a SM.
  static constexpr bool kByWords = kGray && R <= 4;
  static constexpr int kHaloX = (R + kWord - 1) / kWord * kWord;  // whole words
  static constexpr int kInWidth = kTileW + 2 * kHaloX;
  static constexpr int kRows = kHeight + 2 * R;
  static constexpr int kInPlane = kRows * kInWidth;
  static constexpr int kSumPlane = kRows * kTileW;
  static constexpr std::size_t kSharedBytes = sizeof(float) * C * (kInPlane + kSumPlane);
};

// Blocks a multiprocessor gauss_tile asks for (0: no minimum, the registers as ptxas likes), as
// many as the registers then allow: GRAY16 at radius 2 six (40 registers; with 48 it had five,
// 1.5 % slower on an H200); GRAY8 and GRAY32F at radius 2 none (six cost GRAY32F 12 % and GRAY8
// a spill, five GRAY8 3 %); radius 4 four (GRAY32F 2 % faster than none)
// (bench/results/gauss/h200-tile-edges/).
template <class Io, int R>
constexpr int tile_min_blocks() {
  if constexpr (R > 2) return 4;
  return std::is_same_v<Io, gauss_io::Gray16> ? 6 : 0;
}

// Whether a tile's input rows and columns all lie inside the frame (all but the edges' tiles),
// so that phase 1 needs no border rule.
template <class Io, int R>
__device__ __forceinline__ bool tile_inside(const gauss_io::Plane& p, int x0, int y0) {
  using T = Tile<Io, R>;
  return x0 - T::kHaloX >= 0 && x0 - T::kHaloX + T::kInWidth <= p.width && y0 - R >= 0 &&
         y0 - R + T::kRows <= p.height;
}

// Phase 1 for gray frames: a warp a row, a word a lane; a batch of a lane's rows loaded before
// any is unpacked and stored, so that the loads are in flight together (a loop's stores to
// shared memory otherwise held each load behind the one before: 9-17 % faster on GRAY16 and
// GRAY32F, bench/results/gauss/h200-tile-batched-loads/). Inside the frame (kEdge false) the
// rows by a pointer stepped 8 rows (a row's address multiplied out cost a word 5 instructions)
// and no border rule; at the edges each row's source through the border once a warp, each
// word's columns once a lane (where a word's row and column took a division and the border's
// rule each, and its load waited on the one before).
template <class Io, int R, bool kEdge>
__device__ void load_gray(const TileArgs& a, int x0, int y0, float* input) {
  using Wd = gauss_io::Word<Io>;
  using T = Tile<Io, R>;
  constexpr int kRowWords = T::kInWidth / kWord;
  static_assert(kRowWords <= 32);
  constexpr int kWarps = kThreads / 32;
  constexpr int kWarpRows = (T::kRows + kWarps - 1) / kWarps;
  // Registers a batch holds: 4 words of 16 bytes (floats), 10 of 8 (GRAY16: every row of a lane
  // to radius 8; in batches of 8, the ninth row's load waited on the first eight's stores and
  // radius 2 ran 3 % slower), all of 4 (GRAY8).
  constexpr int kBatch = sizeof(typename Wd::W) >= 16 ? 4 : sizeof(typename Wd::W) == 8 ? 10 : 16;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // So that the compiler knows which rows every warp has (ly < kRows), and tests only the last.
  __builtin_assume(warp < kWarps);
  if (lane >= kRowWords) return;
  const gauss_io::Plane& p = a.plane;
  const int x = x0 - T::kHaloX + kWord * lane;
  const std::byte* row = p.in + static_cast<std::ptrdiff_t>(y0 - R + warp) * p.in_stride;
  const std::ptrdiff_t step = kWarps * p.in_stride;
  [[maybe_unused]] bool whole = true;  // the word lies inside the frame
  [[maybe_unused]] int sx[kWord];      // its samples' columns through the border (-1: the value)
  if constexpr (kEdge) {
    whole = x >= 0 && x + kWord <= p.width;
#pragma unroll
    for (int i = 0; i < kWord; ++i) sx[i] = border_index(x + i, p.width, a.border);
  }
#pragma unroll
  for (int b = 0; b < kWarpRows; b += kBatch) {
    typename Wd::W words[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int ly = warp + kWarps * (b + i);
      if (b + i < kWarpRows && ly < T::kRows) {
        if constexpr (kEdge) {
          const int sy = border_index(y0 - R + ly, p.height, a.border);
          const std::byte* source =
              p.in + static_cast<std::ptrdiff_t>(sy < 0 ? 0 : sy) * p.in_stride;
          if (sy >= 0 && whole) {
            words[i] = Wd::load(source, x);
          } else {
            float v[kWord];
#pragma unroll
            for (int j = 0; j < kWord; ++j) {
              v[j] = sy < 0 || sx[j] < 0 ? a.border_value : Io::load(source, sx[j], 0);
            }
            words[i] = Wd::pack(v);  // a border value as the format holds it
          }
        } else {
          words[i] = Wd::load(row, x);
        }
      }
      row += step;
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int ly = warp + kWarps * (b + i);
      if (b + i < kWarpRows && ly < T::kRows) {
        float v[kWord];
        Wd::unpack(words[i], v);
        reinterpret_cast<float4*>(input)[ly * kRowWords + lane] =
            make_float4(v[0], v[1], v[2], v[3]);
      }
    }
  }
}

// Phase 1 for 4-byte colour pixels: a warp a row, a pixel a lane (kInWidth pixels in
// kColumnSteps steps of 32), every load of the thread issued before its pixels are split into
// the three channels' planes (the fourth byte is copied at the output). Inside the frame the
// rows by a pointer stepped 8 rows and no border rule, where every pixel went through it (two
// border_index() and a row's address multiplied out each); at the edges each row's source
// through the border once a warp, each column's once a lane.
template <class Io, int R, bool kEdge>
__device__ void load_colour(const TileArgs& a, int x0, int y0, float* input) {
  using T = Tile<Io, R>;
  constexpr int kWarps = kThreads / 32;
  constexpr int kWarpRows = (T::kRows + kWarps - 1) / kWarps;
  constexpr int kColumnSteps = (T::kInWidth + 31) / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __builtin_assume(warp < kWarps);
  const gauss_io::Plane& p = a.plane;
  const std::byte* row = p.in + static_cast<std::ptrdiff_t>(y0 - R + warp) * p.in_stride +
                         static_cast<std::ptrdiff_t>(x0 - T::kHaloX) * 4;
  const std::ptrdiff_t step = kWarps * p.in_stride;
  [[maybe_unused]] int sx[kColumnSteps];  // edges: columns through the border (-1: the value)
  [[maybe_unused]] int sy[kWarpRows];     // edges: rows through the border (-1: the value)
  if constexpr (kEdge) {
#pragma unroll
    for (int j = 0; j < kColumnSteps; ++j) {
      sx[j] = border_index(x0 - T::kHaloX + lane + 32 * j, p.width, a.border);
    }
  }
  std::uint32_t px[kWarpRows][kColumnSteps];
#pragma unroll
  for (int i = 0; i < kWarpRows; ++i) {
    const int ly = warp + kWarps * i;
    if constexpr (kEdge) {
      sy[i] = ly < T::kRows ? border_index(y0 - R + ly, p.height, a.border) : -1;
      row = p.in + static_cast<std::ptrdiff_t>(sy[i] < 0 ? 0 : sy[i]) * p.in_stride;
    }
#pragma unroll
    for (int j = 0; j < kColumnSteps; ++j) {
      const int lx = lane + 32 * j;
      if (ly < T::kRows && lx < T::kInWidth) {
        if constexpr (kEdge) {
          px[i][j] = sy[i] >= 0 && sx[j] >= 0
                         ? __ldg(reinterpret_cast<const std::uint32_t*>(row) + sx[j])
                         : 0u;
        } else {
          px[i][j] = __ldg(reinterpret_cast<const std::uint32_t*>(row) + lx);
        }
      }
    }
    if constexpr (!kEdge) row += step;
  }
#pragma unroll
  for (int i = 0; i < kWarpRows; ++i) {
#pragma unroll
    for (int j = 0; j < kColumnSteps; ++j) {
      const int ly = warp + kWarps * i, lx = lane + 32 * j;
      if (ly < T::kRows && lx < T::kInWidth) {
        const bool border = kEdge && (sy[i] < 0 || sx[j] < 0);
#pragma unroll
        for (int c = 0; c < 3; ++c) {
          input[c * T::kInPlane + ly * T::kInWidth + lx] =
              border ? a.border_value
                     : gauss_io::magic_to_float(px[i][j], 0x7650u | static_cast<unsigned>(c));
        }
      }
    }
  }
}

// w0 c0 + sum_i w_i (c_-i + c_i) for i = 1..R, in the order of
// gauss_direct.cu's sums. kGuard (floats): the weights beyond `r` are skipped, not added as
// 0 * x, which is NaN for an infinite x.
template <int R, bool kGuard>
__device__ __forceinline__ float symmetric_sum(const float* centre, const float* w, int r) {
  float v = w[0] * centre[0];
#pragma unroll
  for (int i = 1; i <= R; ++i) {
    if (kGuard && i > r) break;
    v = fmaf(w[i], centre[-i] + centre[i], v);
  }
  return v;
}

// Phase 3, a column a thread: its rows run * kRun .. + kRun - 1 of the tile, each
// channel's kRun + 2 R row sums in registers.
template <class Io, int R>
__device__ __forceinline__ void columns_by_column(const TileArgs& a, const float* sums, int x0,
                                                  int y0) {
  using T = Tile<Io, R>;
  constexpr int C = T::C;
  constexpr bool kGuard = std::is_same_v<Io, gauss_io::Gray32F>;
  constexpr int kRun = T::kHeight / kColumnRuns;  // outputs a thread
  const gauss_io::Plane& p = a.plane;
  const int column = threadIdx.x % kTileW, run = threadIdx.x / kTileW;
  const int x = x0 + column, y = y0 + run * kRun;  // the first output
  if (x >= p.width || y >= p.height) return;
  float col[C][kRun + 2 * R];
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int i = 0; i < kRun + 2 * R; ++i) {
      col[c][i] = sums[c * T::kSumPlane + (run * kRun + i) * kTileW + column];
    }
  }
  // The outputs by pointers stepped a row at a time: a row's address multiplied out was 7 of
  // the 20 instructions of a gray output.
  std::byte* out_px = p.out + static_cast<std::ptrdiff_t>(y) * p.out_stride +
                      static_cast<std::ptrdiff_t>(x) * Io::kPixelBytes;
  const std::byte* in_px = p.in + static_cast<std::ptrdiff_t>(y) * p.in_stride +
                           static_cast<std::ptrdiff_t>(x) * Io::kPixelBytes;
  const auto output = [&](int i) {
    float o[C];
#pragma unroll
    for (int c = 0; c < C; ++c) o[c] = symmetric_sum<R, kGuard>(col[c] + R + i, a.wy, a.ry);
    if constexpr (T::kGray) {
      gauss_io::Word<Io>::store_one(out_px, 0, o[0]);
    } else {
      // The three channels rounded (weighted means of the samples: mean_bits()), the fourth
      // byte the input's.
      const std::uint32_t in_word = __ldg(reinterpret_cast<const std::uint32_t*>(in_px));
      const std::uint32_t rg =
          __byte_perm(gauss_io::mean_bits(o[0]), gauss_io::mean_bits(o[1]), 0x0040u);
      const std::uint32_t ba = __byte_perm(gauss_io::mean_bits(o[2]), in_word, 0x0070u);
      *reinterpret_cast<std::uint32_t*>(out_px) = __byte_perm(rg, ba, 0x5410u);
      in_px += p.in_stride;
    }
    out_px += p.out_stride;
  };
  const int rows = p.height - y;
#pragma unroll
  for (int i = 0; i < kRun; ++i) {
    if (i >= rows) break;
    output(i);
  }
}

// Phase 3 for gray frames, four columns a thread: the tile's columns 4 q .. 4 q + 3 (q =
// threadIdx.x % kSegments), rows run * kWordRun .. + kWordRun - 1 (run = threadIdx.x /
// kSegments; kWordRun 4), their kWordRun + 2 R rows of row sums as 16-byte shared words in
// registers, the four outputs of a row rounded into one word and stored at once: at radius 2, 8
// shared loads for 16 outputs where a column a thread took 20, and a quarter of its stores,
// address steps and tests (15 instructions an output with a column a thread, 9 here). Words past
// the frame's right edge, or of an output whose rows are not aligned to words, are stored a sample
// at a time.
template <class Io, int R>
__device__ __forceinline__ void columns_by_words(const TileArgs& a, const float* sums, int x0,
                                                 int y0) {
  using T = Tile<Io, R>;
  using Wd = gauss_io::Word<Io>;
  constexpr bool kGuard = std::is_same_v<Io, gauss_io::Gray32F>;
  constexpr std::ptrdiff_t kWordBytes = sizeof(typename Wd::W);
  constexpr int kWordRun = T::kHeight / (kThreads / kSegments);  // output rows a thread
  const gauss_io::Plane& p = a.plane;
  const int quad = threadIdx.x % kSegments, run = threadIdx.x / kSegments;
  const int x = x0 + kWord * quad, y = y0 + run * kWordRun;  // the first output
  if (x >= p.width || y >= p.height) return;
  float4 col[kWordRun + 2 * R];
#pragma unroll
  for (int i = 0; i < kWordRun + 2 * R; ++i) {
    col[i] = reinterpret_cast<const float4*>(sums)[(run * kWordRun + i) * kSegments + quad];
  }
  std::byte* out_px = p.out + static_cast<std::ptrdiff_t>(y) * p.out_stride +
                      static_cast<std::ptrdiff_t>(x) * Io::kPixelBytes;
  const bool whole = x + kWord <= p.width &&
                     (reinterpret_cast<std::uintptr_t>(p.out) | p.out_stride) % kWordBytes == 0;
  const int rows = p.height - y;
#pragma unroll
  for (int i = 0; i < kWordRun; ++i) {
    if (i >= rows) break;
    float c[4][2 * R + 1];
#pragma unroll
    for (int m = 0; m <= 2 * R; ++m) {
      c[0][m] = col[i + m].x;
      c[1][m] = col[i + m].y;
      c[2][m] = col[i + m].z;
      c[3][m] = col[i + m].w;
    }
    float o[kWord];
#pragma unroll
    for (int k = 0; k < kWord; ++k) o[k] = symmetric_sum<R, kGuard>(c[k] + R, a.wy, a.ry);
    if (whole) {
      Wd::store_mean(out_px, 0, o);
    } else {
#pragma unroll
      for (int k = 0; k < kWord; ++k) {
        if (x + k < p.width) Wd::store_one(out_px, k, o[k]);
      }
    }
    out_px += p.out_stride;
  }
}

template <class Io, int R>
__device__ __forceinline__ void tile_body(const TileArgs& a) {
  using T = Tile<Io, R>;
  constexpr int C = T::C;
  constexpr bool kGuard = std::is_same_v<Io, gauss_io::Gray32F>;  // floats may be inf
  extern __shared__ float4 shared_words[];
  float* const input = reinterpret_cast<float*>(shared_words);  // C planes kRows x kInWidth
  float* const sums = input + C * T::kInPlane;                  // C planes kRows x kTileW
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * T::kHeight;

  // 1. Input rows y0 - R .. y0 + kHeight + R - 1, columns x0 - kHaloX on, as floats.
  const bool inside = tile_inside<Io, R>(a.plane, x0, y0);
  if constexpr (T::kGray) {
    if (inside) {
      load_gray<Io, R, false>(a, x0, y0, input);
    } else {
      load_gray<Io, R, true>(a, x0, y0, input);
    }
  } else {
    if (inside) {
      load_colour<Io, R, false>(a, x0, y0, input);
    } else {
      load_colour<Io, R, true>(a, x0, y0, input);
    }
  }
  __syncthreads();

  // 2. Row sums of the tile's columns on every input row, four columns a thread: 16-byte
  // shared words, whole quarter-warps on 128 contiguous bytes. A thread keeps its segment and
  // steps its lines (plane * kRows + row) by pointers: each line's index divided out cost as
  // much as its shared loads and store.
  constexpr int kLineStep = kThreads / kSegments;
  const int segment = threadIdx.x % kSegments, first_line = threadIdx.x / kSegments;
  // Columns x0 + 4 segment - kHaloX .. x0 + 4 segment + 3 + kHaloX of the line.
  const float4* from =
      reinterpret_cast<const float4*>(input + first_line * T::kInWidth + segment * kWord);
  float4* to = reinterpret_cast<float4*>(sums) + first_line * kSegments + segment;
#pragma unroll 2
  for (int line = first_line; line < C * T::kRows; line += kLineStep) {
    float f[kWord + 2 * T::kHaloX];
#pragma unroll
    for (int w = 0; w < (kWord + 2 * T::kHaloX) / kWord; ++w) {
      const float4 q = from[w];
      f[w * kWord] = q.x;
      f[w * kWord + 1] = q.y;
      f[w * kWord + 2] = q.z;
      f[w * kWord + 3] = q.w;
    }
    float h[kWord];
#pragma unroll
    for (int c = 0; c < kWord; ++c) h[c] = symmetric_sum<R, kGuard>(f + T::kHaloX + c, a.wx, a.rx);
    *to = make_float4(h[0], h[1], h[2], h[3]);
    from += kLineStep * T::kInWidth / kWord;
    to += kLineStep * kSegments;
  }
  __syncthreads();

  // 3. Column sums.
  if constexpr (T::kByWords) {
    columns_by_words<Io, R>(a, sums, x0, y0);
  } else {
    columns_by_column<Io, R>(a, sums, x0, y0);
  }
}

// Gray frames up to radius 4 (phase 3 by words), asking for tile_min_blocks(); the others,
// colour and the larger gray buckets, with one block a multiprocessor allowed, so that their row
// sums stay in registers (without it ptxas kept colour's radius 8 at 64 and spilled, and gray's
// radius 8 and 12 ran 2.5-3.5 % slower: bench/results/gauss/h200-tile-steps/).
template <class Io, int R>
__global__ void __launch_bounds__(kThreads, tile_min_blocks<Io, R>()) gauss_tile(const TileArgs a) {
  tile_body<Io, R>(a);
}
template <class Io, int R>
__global__ void __launch_bounds__(kThreads, 1) gauss_wide_tile(const TileArgs a) {
  tile_body<Io, R>(a);
}

template <class Io, int R>
cudaError_t launch_as(const TileArgs& args, cudaStream_t stream) {
  using T = Tile<Io, R>;
  constexpr std::size_t smem = T::kSharedBytes;
  const auto kernel = [] {
    if constexpr (T::kByWords) {
      return gauss_tile<Io, R>;
    } else {
      return gauss_wide_tile<Io, R>;
    }
  }();
  if (const cudaError_t opted = allow_shared(kernel, smem); opted != cudaSuccess) return opted;
  const dim3 grid((args.plane.width + kTileW - 1) / kTileW,
                  (args.plane.height + T::kHeight - 1) / T::kHeight);
  kernel<<<grid, kThreads, smem, stream>>>(args);
  return cudaPeekAtLastError();
}

template <class Io>
cudaError_t launch_bucket(const TileArgs& args, cudaStream_t stream) {
  const int r = args.rx > args.ry ? args.rx : args.ry;
  if (r <= 2) return launch_as<Io, 2>(args, stream);
  if constexpr (Io::kChannels == 1) {
    if (r <= 4) return launch_as<Io, 4>(args, stream);
    if (r <= 8) return launch_as<Io, 8>(args, stream);
    if (r <= 12) return launch_as<Io, 12>(args, stream);
    return launch_as<Io, 16>(args, stream);
  } else {
    if (r <= 4) return launch_as<Io, 4>(args, stream);
    if (r <= 8) return launch_as<Io, 8>(args, stream);
    if (r <= 12) return launch_as<Io, 12>(args, stream);
    return launch_as<Io, kMaxColourRadius>(args, stream);
  }
}

}  // namespace

namespace gauss_detail {

bool tile_takes(const GaussParams& params, ConstImageView in, ImageView out) noexcept {
  const FormatInfo& info = format_info(in.format);
  const int radius = std::max(params.effective_radius_x(), params.effective_radius_y());
  const bool gray = info.channels == 1;
  if (radius > (gray ? kMaxFusedRadius : kMaxColourRadius)) return false;
  // Gray: whole words of four samples in the input's rows (the output is written by words where
  // its rows are aligned to them, else by sample).
  // Colour: 4-byte pixels, read and written whole.
  if (gray) return rows_aligned(in.data, in.stride, kWord * info.bytes_per_sample);
  return rows_aligned(in.data, in.stride, 4) && rows_aligned(out.data, out.stride, 4);
}

cudaError_t launch_tile(const GaussParams& params, ConstImageView in, ImageView out,
                        cudaStream_t stream) {
  TileArgs args;
  if (!gauss_io::fused_args(params, in, out, kMaxFusedRadius, args)) {
    return cudaErrorInvalidValue;
  }
  cudaError_t status = cudaSuccess;
  gauss_io::with_format(in.format, [&](auto io) {
    using Io = decltype(io);
    if (Io::kChannels != 1 && std::max(args.rx, args.ry) > kMaxColourRadius) {
      status = cudaErrorInvalidValue;
    } else {
      status = launch_bucket<Io>(args, stream);
    }
  });
  return status;
}

}  // namespace gauss_detail

}  // namespace starsift::cuda
