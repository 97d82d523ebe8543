// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA median filter: two schedules of the same algorithm (median_reference()).
//
// Network (sizes 3..15): separable sorting networks in registers (Adams 2021).
//   1. Each thread sorts every input column of its tile once; the rows shared by its
//      tile_h output rows are sorted once and the remaining rows inserted per output row.
//   2. A generated program (scripts/gen_median_networks.py) selects the tile_w medians of a
//      row from those sorted columns: rank rows sorted across the window (shared between
//      adjacent outputs), candidates pruned by rank, their sorted runs merged; only the
//      min/max that feed a median are kept.
//   Integer formats hold two 16-bit samples per register (two row groups of the block) and
//   use Hopper's DPX 16x2 min/max, one instruction for two comparisons.
//
// Tracking (any size): each thread slides a window along a row segment keeping the median
//   and the counts of window values below / not above it; when a column leaves and one
//   enters, the counts are updated and the median moves to the next distinct value until
//   the counts bracket the median rank again. Cost ~ k per output plus a k^2 scan per move:
//   rises smoothly with k, no network blow-up.
//
// Both read their input tile once into shared memory, where borders are resolved
// (load_key_tile(), tile_loader.cuh: border_index(), shared with the CPU reference), so the
// inner loops never test borders.
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "cuda/common/format_traits.cuh"
#include "cuda/common/rows_aligned.hpp"
#include "cuda/common/tile_loader.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/median/median.cuh"
#include "cuda/median/median_tuning.hpp"
#include "pipeline/border.hpp"
#include "pipeline/sample_key.hpp"

namespace starsift::cuda {

namespace {

// ---- What one frame looks like to a kernel -------------------------------------------------

struct Frame {
  const std::byte* in;
  std::byte* out;
  int width;
  int height;
  std::ptrdiff_t in_stride;
  std::ptrdiff_t out_stride;
  BorderMode border;
  std::uint32_t border_key;  // the border value as an ordered key
  bool aligned;              // both images' base and stride are multiples of 16 bytes
};

// ---- Formats: how samples become ordered keys and back (format_traits.cuh) ----------------

using namespace key_formats;

// ---- Registers: one key, or two 16-bit keys side by side ----------------------------------

struct ScalarLanes {
  static constexpr int kLanes = 1;
  __device__ static std::uint32_t lo(std::uint32_t a, std::uint32_t b) { return min(a, b); }
  __device__ static std::uint32_t hi(std::uint32_t a, std::uint32_t b) { return max(a, b); }
};

struct PackedLanes {
  static constexpr int kLanes = 2;
  // sm_90 has packed 16x2 min/max (one instruction for two comparisons); earlier
  // architectures emulate the SIMD intrinsics.
  __device__ static std::uint32_t lo(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    std::uint32_t r;
    asm("min.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return __vminu2(a, b);
#endif
  }
  __device__ static std::uint32_t hi(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    std::uint32_t r;
    asm("max.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return __vmaxu2(a, b);
#endif
  }
};

template <class L>
__device__ __forceinline__ void compare_exchange(std::uint32_t& a, std::uint32_t& b) {
  const std::uint32_t low = L::lo(a, b);
  b = L::hi(a, b);
  a = low;
}

// Batcher's odd-even merge sort for any N (comparators past N dropped), ascending, as a
// compile-time list of index pairs: applying it unrolls to straight-line min/max on
// registers, with no loop or index arithmetic left for the compiler to see through.
constexpr int kMaxNetwork = 160;  // largest array sorted here (candidates of a 9x9 window)

struct Comparators {
  int count = 0;
  int a[2048] = {};
  int b[2048] = {};
};

constexpr Comparators batcher_network(int n) {
  Comparators net;
  for (int p = 1; p < n; p *= 2)
    for (int k = p; k >= 1; k /= 2)
      for (int j = k % p; j <= n - 1 - k; j += 2 * k)
        for (int i = 0; i < k && i <= n - j - k - 1; ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) {
            net.a[net.count] = i + j;
            net.b[net.count] = i + j + k;
            ++net.count;
          }
  return net;
}

template <int N>
struct BatcherNetwork {
  static_assert(N <= kMaxNetwork);
  static constexpr Comparators net = batcher_network(N);
};

template <class L, int N, std::size_t... I>
__device__ __forceinline__ void apply_network(std::uint32_t (&v)[N], std::index_sequence<I...>) {
  (compare_exchange<L>(v[BatcherNetwork<N>::net.a[I]], v[BatcherNetwork<N>::net.b[I]]), ...);
}

template <class L, int N>
__device__ __forceinline__ void sort_network(std::uint32_t (&v)[N]) {
  if constexpr (N > 1) {
    apply_network<L, N>(v, std::make_index_sequence<BatcherNetwork<N>::net.count>{});
  }
}

// ---- Network schedule ----------------------------------------------------------------------

// Interior tiles of gray formats: 32-bit loads of 4 (GRAY8) or 2 (GRAY16) samples, each
// split into the tile's words (two lanes: the sample of row r below, of row r + lane_offset
// above). Covers columns [ox, ox + COLS) from the aligned word below ox.
template <class F, int kLanes, int ROWS, int COLS, int PITCH, int LEAD, int THREADS>
__device__ __forceinline__ void fill_tile_vector(const Frame& f, std::uint32_t* tile, int ox,
                                                 int oy, int lane_offset) {
  constexpr int S = 4 / static_cast<int>(sizeof(typename F::Sample));
  constexpr int WORDS = (LEAD + COLS + S - 1) / S;  // 32-bit words per tile row
  constexpr int TOTAL = ROWS * WORDS;
  constexpr int PER_THREAD = (TOTAL + THREADS - 1) / THREADS;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int first_x = ox - LEAD;  // word-aligned
  // All loads first, then all shared-memory writes: the block keeps every load of its tile
  // in flight at once (memory-level parallelism is what a 3x3 median is short of).
  std::uint32_t v[PER_THREAD][kLanes];
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) {
    const int i = tid + k * THREADS;
    if (TOTAL % THREADS == 0 || i < TOTAL) {
      const int r = i / WORDS;
      const int x0 = first_x + (i - r * WORDS) * S;
#pragma unroll
      for (int lane = 0; lane < kLanes; ++lane) {
        v[k][lane] = __ldg(reinterpret_cast<const std::uint32_t*>(
            f.in + (oy + r + lane * lane_offset) * f.in_stride + x0 * (4 / S)));
      }
    }
  }
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) {
    const int i = tid + k * THREADS;
    if (TOTAL % THREADS == 0 || i < TOTAL) {
      const int r = i / WORDS;
      const int w = i - r * WORDS;
      const std::uint32_t hi = kLanes == 2 ? v[k][kLanes - 1] : 0u;
#pragma unroll
      for (int s = 0; s < S; ++s) {
        const int c = w * S + s - LEAD;
        if (c < 0 || c >= COLS) continue;
        std::uint32_t word;
        if constexpr (S == 4) {  // bytes s of the two rows -> 16-bit lanes
          word = __byte_perm(v[k][0], hi, s | (s << 4) | ((4 + s) << 8) | ((4 + s) << 12)) &
                 0x00ff00ffu;
        } else {  // halves s of the two rows
          word = __byte_perm(v[k][0], hi, s == 0 ? 0x5410 : 0x7632);
        }
        if constexpr (kLanes == 1) word &= S == 4 ? 0xffu : 0xffffu;
        tile[r * PITCH + c] = word;
      }
    }
  }
}

// Stores the keys of `n` adjacent output samples of one row: one vector store where the run
// is aligned and inside the frame, sample by sample otherwise.
template <class F, int N>
__device__ __forceinline__ void store_run(const Frame& f, int ox, int oy, int plane,
                                          const std::uint32_t (&keys)[N]) {
  using S = typename F::Sample;
  constexpr int kBytes = N * static_cast<int>(sizeof(S));
  std::byte* row = f.out + oy * f.out_stride;
  if constexpr (F::kPlanes == 1 && (kBytes == 4 || kBytes == 8 || kBytes == 16)) {
    std::byte* p = row + ox * static_cast<int>(sizeof(S));
    if (ox + N <= f.width && (reinterpret_cast<std::uintptr_t>(p) % kBytes) == 0) {
      std::uint32_t packed[kBytes / 4];
#pragma unroll
      for (int w = 0; w < kBytes / 4; ++w) {
        std::uint32_t word = 0;
        constexpr int per_word = 4 / static_cast<int>(sizeof(S));
#pragma unroll
        for (int k = 0; k < per_word; ++k) {
          const int idx = w * per_word + k;
          if constexpr (per_word == 1) {
            word = F::to_sample(keys[idx]);
          } else {
            word |= (F::to_sample(keys[idx]) & ((1u << (8 * sizeof(S))) - 1u))
                    << (8 * sizeof(S) * k);
          }
        }
        packed[w] = word;
      }
      if constexpr (kBytes == 4) {
        *reinterpret_cast<std::uint32_t*>(p) = packed[0];
      } else if constexpr (kBytes == 8) {
        *reinterpret_cast<uint2*>(p) = make_uint2(packed[0], packed[1]);
      } else {
        *reinterpret_cast<uint4*>(p) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
      }
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (ox + k < f.width) F::store(row, ox + k, plane, keys[k]);
  }
}

// Sorts the K-row windows of one tile column for TH consecutive output rows: the K-TH+1
// rows all windows share are sorted once, the others inserted per window.
template <class L, int K, int TH>
__device__ __forceinline__ void sort_column_windows(const std::uint32_t* column, int pitch,
                                                    std::uint32_t (&out)[TH][K]) {
  static_assert(TH <= K, "more rows than the window shares");
  constexpr int NR = TH + K - 1;
  constexpr int CORE = K - TH + 1;
  std::uint32_t raw[NR];
#pragma unroll
  for (int r = 0; r < NR; ++r) raw[r] = column[r * pitch];
  std::uint32_t core[CORE];
#pragma unroll
  for (int r = 0; r < CORE; ++r) core[r] = raw[TH - 1 + r];
  sort_network<L>(core);
#pragma unroll
  for (int t = 0; t < TH; ++t) {
    std::uint32_t s[K];
#pragma unroll
    for (int r = 0; r < CORE; ++r) s[r] = core[r];
      // Insert the rows of this window outside the core: [t, TH-1) and [K, K+t).
#pragma unroll
    for (int e = 0; e < TH - 1; ++e) {
      const int n = CORE + e;  // sorted so far
      std::uint32_t x = raw[e < TH - 1 - t ? t + e : K + (e - (TH - 1 - t))];
#pragma unroll
      for (int r = 0; r < K - 1; ++r) {
        if (r < n) {
          const std::uint32_t low = L::lo(s[r], x);
          x = L::hi(s[r], x);
          s[r] = low;
        }
      }
      s[n] = x;
    }
#pragma unroll
    for (int r = 0; r < K; ++r) out[t][r] = s[r];
  }
}

// Generated selection programs (scripts/gen_median_networks.py): from the sorted columns of
// TW adjacent windows to their medians, with rank rows shared between the windows and the
// candidate runs merged rather than sorted.
template <int K, int TW>
struct SelectProgram;
#include "cuda/median/median_select_programs.inc"

template <class L, class P, std::size_t... I>
__device__ __forceinline__ void run_program(std::uint32_t (&v)[P::kSlots],
                                            std::index_sequence<I...>) {
  ((v[P::dst[I]] = P::kind[I] ? L::hi(v[P::a[I]], v[P::b[I]]) : L::lo(v[P::a[I]], v[P::b[I]])),
   ...);
}

template <class P, int TW, std::size_t... X>
__device__ __forceinline__ void read_outputs(const std::uint32_t (&v)[P::kSlots],
                                             std::uint32_t (&medians)[TW],
                                             std::index_sequence<X...>) {
  ((medians[X] = v[P::out[X]]), ...);
}

template <int K, class L, class F>
__global__ void __launch_bounds__(network_tuning(K).block_x* network_tuning(K).block_y,
                                  network_tuning(K).min_blocks) median_network_kernel(Frame f) {
  constexpr NetworkTuning T = network_tuning(K);
  constexpr int R = K / 2;
  constexpr int NC = T.tile_w + K - 1;        // input columns a thread reads
  constexpr int HALF = T.block_y * T.tile_h;  // output rows of one lane group
  constexpr int TILE_W = T.block_x * T.tile_w;
  constexpr int ROWS = HALF + 2 * R;
  constexpr int COLS = TILE_W + 2 * R;
  constexpr int PITCH = COLS | 1;  // odd: spreads rows over banks
  constexpr int PLANE = ROWS * PITCH;

  __shared__ std::uint32_t tile[F::kPlanes * PLANE];
  // Large windows: every column window of the tile sorted once and shared by the K outputs
  // that read it (instead of each thread sorting all K of its own).
  // (Only where the windows fit beside the tile in 48 KB of static shared memory.)
  constexpr int kSharedRows = 2;
  constexpr bool kShared = T.shared_columns && HALF % kSharedRows == 0 &&
                           (F::kPlanes * PLANE + HALF * COLS * K) * 4 <= 48 * 1024;
  __shared__ std::uint32_t windows[kShared ? HALF * COLS * K : 1];

  const int bx0 = blockIdx.x * TILE_W;
  const int by0 = blockIdx.y * HALF * L::kLanes;
  const int ox = bx0 - R;
  const int oy = by0 - R;
  if constexpr (F::kPlanes == 1 && sizeof(typename F::Sample) < 4) {
    constexpr int S = 4 / static_cast<int>(sizeof(typename F::Sample));
    // Tiles start at multiples of TILE_W, so the distance from ox down to a word boundary
    // is the same for every block.
    static_assert(TILE_W % S == 0);
    constexpr int LEAD = ((-R) % S + S) % S;
    constexpr int WORDS = (LEAD + COLS + S - 1) / S;
    const int first_word_x = ox - LEAD;
    const int last_x = first_word_x + WORDS * S;  // exclusive
    const bool vector_inside = f.aligned && first_word_x >= 0 && last_x <= f.width && oy >= 0 &&
                               oy + ROWS - 1 + (L::kLanes - 1) * HALF < f.height;
    if (vector_inside) {
      fill_tile_vector<F, L::kLanes, ROWS, COLS, PITCH, LEAD, T.block_x * T.block_y>(f, tile, ox,
                                                                                     oy, HALF);
    } else {
      load_key_tile<F, L::kLanes>(f, tile, PLANE, PITCH, ROWS, COLS, ox, oy, HALF);
    }
  } else {
    load_key_tile<F, L::kLanes>(f, tile, PLANE, PITCH, ROWS, COLS, ox, oy, HALF);
  }
  __syncthreads();

  const int row0 = threadIdx.y * T.tile_h;
  const int col0 = threadIdx.x * T.tile_w;
  // 4-channel formats gather the channels of each output pixel here, stored once at the end.
  std::uint32_t pixels[F::kHasAlpha ? T.tile_h * L::kLanes : 1][F::kHasAlpha ? T.tile_w : 1] = {};

#pragma unroll 1
  for (int plane = 0; plane < F::kPlanes; ++plane) {
    const std::uint32_t* src = tile + plane * PLANE + row0 * PITCH + col0;

    // 1. Sorted column windows: cols[c][t] is column c sorted over output row t's window,
    //    computed by this thread or, for large windows, read from the block's shared copy.
    std::uint32_t cols[NC][T.tile_h][K];
    if constexpr (kShared) {
      if (plane > 0) __syncthreads();  // the previous plane's windows are no longer read
      const std::uint32_t* plane_tile = tile + plane * PLANE;
      // Task: one tile column, kSharedRows consecutive output rows (their core sorted once).
      constexpr int kTasks = COLS * (HALF / kSharedRows);
      for (int task = threadIdx.y * T.block_x + threadIdx.x; task < kTasks;
           task += T.block_x * T.block_y) {
        const int c = task % COLS;
        const int r0 = (task / COLS) * kSharedRows;
        std::uint32_t w[kSharedRows][K];
        sort_column_windows<L, K, kSharedRows>(plane_tile + r0 * PITCH + c, PITCH, w);
#pragma unroll
        for (int t = 0; t < kSharedRows; ++t) {
#pragma unroll
          for (int i = 0; i < K; ++i) windows[((r0 + t) * COLS + c) * K + i] = w[t][i];
        }
      }
      __syncthreads();
#pragma unroll
      for (int c = 0; c < NC; ++c) {
#pragma unroll
        for (int t = 0; t < T.tile_h; ++t) {
#pragma unroll
          for (int i = 0; i < K; ++i)
            cols[c][t][i] = windows[((row0 + t) * COLS + col0 + c) * K + i];
        }
      }
    } else {
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        std::uint32_t w[T.tile_h][K];
        sort_column_windows<L, K, T.tile_h>(src + c, PITCH, w);
#pragma unroll
        for (int t = 0; t < T.tile_h; ++t) {
#pragma unroll
          for (int i = 0; i < K; ++i) cols[c][t][i] = w[t][i];
        }
      }
    }

    // 2. Per output row: the generated program selects the tile_w medians.
#pragma unroll
    for (int t = 0; t < T.tile_h; ++t) {
      using P = SelectProgram<K, T.tile_w>;
      std::uint32_t v[P::kSlots];
#pragma unroll
      for (int c = 0; c < NC; ++c) {
#pragma unroll
        for (int i = 0; i < K; ++i) v[c * K + i] = cols[c][t][i];
      }
      run_program<L, P>(v, std::make_index_sequence<P::kOps>{});
      std::uint32_t medians[T.tile_w];
      read_outputs<P>(v, medians, std::make_index_sequence<T.tile_w>{});
#pragma unroll
      for (int lane = 0; lane < L::kLanes; ++lane) {
        const int oy_t = by0 + lane * HALF + row0 + t;
        std::uint32_t keys[T.tile_w];
#pragma unroll
        for (int x = 0; x < T.tile_w; ++x) {
          keys[x] = L::kLanes == 2 ? (medians[x] >> (16 * lane)) & 0xffffu : medians[x];
        }
        if constexpr (F::kHasAlpha) {
#pragma unroll
          for (int x = 0; x < T.tile_w; ++x)
            pixels[lane * T.tile_h + t][x] |= keys[x] << (8 * plane);
        } else if (oy_t < f.height) {
          store_run<F>(f, bx0 + col0, oy_t, plane, keys);
        }
      }
    }
  }

  if constexpr (F::kHasAlpha) {  // colour channels computed; alpha/padding byte copied
#pragma unroll
    for (int lane = 0; lane < L::kLanes; ++lane) {
#pragma unroll
      for (int t = 0; t < T.tile_h; ++t) {
        const int oy_t = by0 + lane * HALF + row0 + t;
        if (oy_t >= f.height) continue;
        const auto* in_row = reinterpret_cast<const std::uint32_t*>(f.in + oy_t * f.in_stride);
        auto* out_row = reinterpret_cast<std::uint32_t*>(f.out + oy_t * f.out_stride);
#pragma unroll
        for (int x = 0; x < T.tile_w; ++x) {
          const int ox_x = bx0 + col0 + x;
          if (ox_x < f.width) {
            out_row[ox_x] = pixels[lane * T.tile_h + t][x] | (in_row[ox_x] & 0xff000000u);
          }
        }
      }
    }
  }
}

template <int K, class L, class F>
cudaError_t launch_network(const Frame& f, cudaStream_t stream) {
  constexpr NetworkTuning T = network_tuning(K);
  const dim3 block(T.block_x, T.block_y);
  const int tile_w = T.block_x * T.tile_w;
  const int tile_h = T.block_y * T.tile_h * L::kLanes;
  const dim3 grid((f.width + tile_w - 1) / tile_w, (f.height + tile_h - 1) / tile_h);
  median_network_kernel<K, L, F><<<grid, block, 0, stream>>>(f);
  return cudaPeekAtLastError();
}

template <class L, class F>
cudaError_t launch_network_size(int size, const Frame& f, cudaStream_t stream) {
  switch (size) {
    case 3:
      return launch_network<3, L, F>(f, stream);
    case 5:
      return launch_network<5, L, F>(f, stream);
    case 7:
      return launch_network<7, L, F>(f, stream);
    case 9:
      return launch_network<9, L, F>(f, stream);
    case 11:
      return launch_network<11, L, F>(f, stream);
    case 13:
      return launch_network<13, L, F>(f, stream);
    case 15:
      return launch_network<15, L, F>(f, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

// ---- Tracking schedule ---------------------------------------------------------------------

// Window statistics around a current median value.
struct Counts {
  int below;    // values < median
  int at_most;  // values <= median
};

__device__ __forceinline__ Counts count_window(const std::uint32_t* w, int pitch, int k,
                                               std::uint32_t value) {
  Counts c{0, 0};
  for (int dy = 0; dy < k; ++dy) {
    const std::uint32_t* row = w + dy * pitch;
    for (int dx = 0; dx < k; ++dx) {
      const std::uint32_t v = row[dx];
      c.below += v < value;
      c.at_most += v <= value;
    }
  }
  return c;
}

// The median of the window by bisection over key bits: the largest v with count(< v) <= m.
__device__ std::uint32_t select_by_bits(const std::uint32_t* w, int pitch, int k, int m, int bits) {
  std::uint32_t result = 0;
  for (int b = bits - 1; b >= 0; --b) {
    const std::uint32_t trial = result | (1u << b);
    int below = 0;
    for (int dy = 0; dy < k; ++dy) {
      const std::uint32_t* row = w + dy * pitch;
      for (int dx = 0; dx < k; ++dx) below += row[dx] < trial;
    }
    if (below <= m) result = trial;
  }
  return result;
}

// The nearest distinct window value below (kDown) or above `value`, and in `equal` how
// often it occurs. The caller guarantees one exists.
template <bool kDown>
__device__ __forceinline__ std::uint32_t next_distinct(const std::uint32_t* w, int pitch, int k,
                                                       std::uint32_t value, int& equal) {
  std::uint32_t best = kDown ? 0u : 0xffffffffu;
  int count = 0;
  // Branch-free: every thread of a warp scans its own window in step.
  for (int dy = 0; dy < k; ++dy) {
    for (int dx = 0; dx < k; ++dx) {
      const std::uint32_t v = w[dy * pitch + dx];
      const bool beyond = kDown ? v < value : v > value;
      const bool closer = beyond && (kDown ? v > best : v < best);
      const bool same = beyond && v == best;
      count = closer ? 1 : count + static_cast<int>(same);
      best = closer ? v : best;
    }
  }
  equal = count;
  return best;
}

template <class F>
__global__ void median_tracking_kernel(Frame f, int k, int key_bits) {
  constexpr TrackingTuning T = tracking_tuning(0);
  extern __shared__ std::uint32_t tile[];
  const int r = k / 2;
  const int m = (k * k - 1) / 2;
  const int tile_w = T.segments * T.segment;
  const int rows = T.rows + 2 * r;
  const int cols = tile_w + 2 * r;
  const int pitch = cols | 1;
  const int bx0 = blockIdx.x * tile_w;
  const int by0 = blockIdx.y * T.rows;

  const int y = by0 + threadIdx.x;  // one row per thread: a warp reads 32 rows, one column
  const int xs = threadIdx.y * T.segment;
  const int x_end = min(T.segment, f.width - (bx0 + xs));

  for (int plane = 0; plane < F::kPlanes; ++plane) {
    if (plane > 0) __syncthreads();  // everyone is done with the previous plane
    // One plane at a time keeps the tile small; the re-read hits L1/L2.
    {
      const int threads = blockDim.x * blockDim.y;
      const int tid = threadIdx.y * blockDim.x + threadIdx.x;
      for (int i = tid; i < rows * cols; i += threads) {
        const int rr = i / cols;
        const int cc = i - rr * cols;
        std::uint32_t keys[F::kPlanes];
        read_keys<F>(f, bx0 - r + cc, by0 - r + rr, keys);
        tile[rr * pitch + cc] = keys[plane];
      }
    }
    __syncthreads();
    if (y >= f.height || x_end <= 0) continue;

    const std::uint32_t* w = tile + threadIdx.x * pitch + xs;  // window of output xs
    std::byte* out_row = f.out + y * f.out_stride;
    const std::byte* in_row = f.in + y * f.in_stride;

    std::uint32_t median = select_by_bits(w, pitch, k, m, key_bits);
    Counts c = count_window(w, pitch, k, median);
    for (int x = 0;; ++x) {
      F::store(out_row, bx0 + xs + x, plane, median);
      if constexpr (F::kHasAlpha) {
        if (plane == 0) F::copy_alpha(in_row, out_row, bx0 + xs + x);
      }
      if (x + 1 >= x_end) break;
      // Slide right: column x leaves, column x + k enters.
      for (int dy = 0; dy < k; ++dy) {
        const std::uint32_t gone = w[dy * pitch + x];
        const std::uint32_t come = w[dy * pitch + x + k];
        c.below += static_cast<int>(come < median) - static_cast<int>(gone < median);
        c.at_most += static_cast<int>(come <= median) - static_cast<int>(gone <= median);
      }
      const std::uint32_t* win = w + x + 1;
      // Too many below: the median is the largest value below the current one.
      while (c.below > m) {
        int equal = 0;
        median = next_distinct<true>(win, pitch, k, median, equal);
        c.at_most = c.below;
        c.below -= equal;
      }
      // Too few at or below: the median is the smallest value above the current one.
      while (c.at_most <= m) {
        int equal = 0;
        median = next_distinct<false>(win, pitch, k, median, equal);
        c.below = c.at_most;
        c.at_most += equal;
      }
    }
  }
}

std::size_t tracking_smem_bytes(int k) {
  constexpr TrackingTuning T = tracking_tuning(0);
  const int r = k / 2;
  const int pitch = (T.segments * T.segment + 2 * r) | 1;
  return static_cast<std::size_t>(T.rows + 2 * r) * pitch * sizeof(std::uint32_t);
}

template <class F>
cudaError_t launch_tracking(int k, int key_bits, const Frame& f, cudaStream_t stream) {
  constexpr TrackingTuning T = tracking_tuning(0);
  const dim3 block(T.rows, T.segments);
  const int tile_w = T.segments * T.segment;
  const dim3 grid((f.width + tile_w - 1) / tile_w, (f.height + T.rows - 1) / T.rows);
  const std::size_t smem = tracking_smem_bytes(k);
  if (smem > 48 * 1024) {
    STARSIFT_CUDA_TRY(cudaFuncSetAttribute(median_tracking_kernel<F>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  }
  median_tracking_kernel<F><<<grid, block, smem, stream>>>(f, k, key_bits);
  return cudaPeekAtLastError();
}

// ---- Dispatch ------------------------------------------------------------------------------

MedianSchedule resolve(MedianSchedule schedule, int size, PixelFormat format) {
  if (schedule != MedianSchedule::Auto) return schedule;
  if (size > kAutoNetworkMaxSize) return MedianSchedule::Tracking;
  return format_info(format).is_float ? MedianSchedule::NetworkUnpacked : MedianSchedule::Network;
}

template <class F>
cudaError_t launch_format(MedianSchedule schedule, int size, int key_bits, const Frame& f,
                          cudaStream_t stream) {
  switch (schedule) {
    case MedianSchedule::Network:
      if constexpr (F::kPackable) return launch_network_size<PackedLanes, F>(size, f, stream);
      return cudaErrorInvalidValue;
    case MedianSchedule::NetworkUnpacked:
      return launch_network_size<ScalarLanes, F>(size, f, stream);
    case MedianSchedule::Tracking:
      return launch_tracking<F>(size, key_bits, f, stream);
    case MedianSchedule::Auto:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace

std::string_view to_string(MedianSchedule schedule) noexcept {
  switch (schedule) {
    case MedianSchedule::Auto:
      return "auto";
    case MedianSchedule::Network:
      return "network";
    case MedianSchedule::NetworkUnpacked:
      return "network-unpacked";
    case MedianSchedule::Tracking:
      return "tracking";
  }
  return "?";
}

bool median_schedule_supports(MedianSchedule schedule, int size, PixelFormat format) noexcept {
  if (size < MedianParams::kMinSize || size > MedianParams::kMaxSize || size % 2 == 0) return false;
  switch (schedule) {
    case MedianSchedule::Auto:
    case MedianSchedule::Tracking:
      return true;
    case MedianSchedule::Network:
      return size <= kNetworkMaxSize && !format_info(format).is_float;
    case MedianSchedule::NetworkUnpacked:
      return size <= kNetworkMaxSize;
  }
  return false;
}

cudaError_t launch_median(const MedianParams& params, ConstImageView in, ImageView out,
                          cudaStream_t stream, MedianSchedule schedule) {
  if (in.width != out.width || in.height != out.height || in.format != out.format || in.width < 1 ||
      in.height < 1) {
    return cudaErrorInvalidValue;
  }
  const MedianSchedule chosen = resolve(schedule, params.size, in.format);
  if (!median_schedule_supports(chosen, params.size, in.format)) return cudaErrorInvalidValue;

  const Frame f{in.data,
                out.data,
                in.width,
                in.height,
                in.stride,
                out.stride,
                params.border,
                median_border_sample(params, in.format),
                rows_aligned(in.data, in.stride, 16) && rows_aligned(out.data, out.stride, 16)};
  switch (in.format) {
    case PixelFormat::Gray8:
      return launch_format<Gray8>(chosen, params.size, 8, f, stream);
    case PixelFormat::Gray16:
      return launch_format<Gray16>(chosen, params.size, 16, f, stream);
    case PixelFormat::Gray32F:
      return launch_format<Gray32F>(chosen, params.size, 32, f, stream);
    case PixelFormat::Rgba:
    case PixelFormat::Bgra:
    case PixelFormat::Rgbx:
    case PixelFormat::Bgrx:
      return launch_format<Color4x8>(chosen, params.size, 8, f, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace starsift::cuda
