// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian's recursive path: Deriche's fourth-order recursion (deriche.hpp), the
// computation of the CPU's GaussIir, on the GPU.
//
// A line is one row (pass along x) or one column (pass along y) of one colour channel. The
// CPU runs each line whole: padded by kPadSigmas sigma through the border mode, a causal
// recursion forward, an anticausal one backward, their sum. A GPU has far more threads than
// a frame has lines, so each line is cut into chunks, and a chunk runs the CPU's computation
// on its own window: from kPadSigmas sigma before it (through the border mode where that lies
// outside the frame) to kPadSigmas sigma after it, each recursion starting in the steady
// state of its first sample. The first and last chunks are the CPU's line ends exactly;
// inside, a recursion that starts 6 sigma early has forgotten its start (as the CPU's does at
// the frame's edges), so chunks agree with the whole line to float rounding. Chunks are
// long enough that the overlap costs at most as much as the chunk.
//
// Along x, lines are rows: a warp takes 32 rows and walks them 32 columns at a time through
// shared memory, so that loads and stores are whole rows of the tile (coalesced) while each
// thread recurses along its own row. Along y, lines are columns: neighbouring threads take
// neighbouring columns, coalesced as they are.
//
// State in double, as on the CPU: a float state loses digits over the long responses of a
// large sigma. The causal part and the frame between the passes are stored as float.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "pipeline/border.hpp"
#include "pipeline/gauss/deriche.hpp"
#include "pipeline/gauss/gauss_iir.hpp"

namespace starsift::cuda {

namespace {

using gauss_io::Plane;

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
constexpr int kColumnsPerBlock = 128;
constexpr int kTargetThreads = 64 * 1024;  // enough lines x chunks to fill the GPU
constexpr int kBatch = 16;                 // samples loaded ahead along a column

struct Recursion {
  DericheCoefficients k;
  int pad;    // samples read before and after a chunk
  int chunk;  // samples a chunk writes
};

Recursion recursion_for(double sigma, int length, int lines) {
  Recursion r{deriche_coefficients(sigma), 0, length};
  if (!(sigma > 0.0)) return r;  // the identity: one chunk, no padding
  r.pad = static_cast<int>(std::ceil(GaussIir::kPadSigmas * sigma));
  const int want_chunks = std::max(1, (kTargetThreads + lines - 1) / lines);
  const int len = std::max({(length + want_chunks - 1) / want_chunks, 2 * r.pad, 64});
  r.chunk = std::min(len, length);
  return r;
}

// One recursion's state: the last four inputs and outputs.
struct State {
  double x1, x2, x3, x4, y1, y2, y3, y4;
  __device__ void start(double v, double gain) {
    x1 = x2 = x3 = x4 = v;
    y1 = y2 = y3 = y4 = gain * v;
  }
  // The feedback is summed oldest first, so the newest output (y1) enters last: the chain
  // from one output to the next is one multiply-add, not eight.
  __device__ double feedback(const DericheCoefficients& k, double sum) const {
    sum = fma(-k.d4, y4, sum);
    sum = fma(-k.d3, y3, sum);
    sum = fma(-k.d2, y2, sum);
    return fma(-k.d1, y1, sum);
  }
  __device__ double causal(const DericheCoefficients& k, double x) {
    const double y = feedback(k, k.n0 * x + k.n1 * x1 + k.n2 * x2 + k.n3 * x3);
    push(x, y);
    return y;
  }
  // The anticausal output at this sample is made of the samples after it, so it is computed
  // before the sample joins the state.
  __device__ double anticausal(const DericheCoefficients& k, double x) {
    const double y = feedback(k, k.m1 * x1 + k.m2 * x2 + k.m3 * x3 + k.m4 * x4);
    push(x, y);
    return y;
  }
  __device__ void push(double x, double y) {
    x4 = x3;
    x3 = x2;
    x2 = x1;
    x1 = x;
    y4 = y3;
    y3 = y2;
    y2 = y1;
    y1 = y;
  }
};

struct RowArgs {
  Plane plane;
  Recursion r;
  BorderMode border;
  float border_value;
  float* causal;  // frame_b
  float* result;  // frame_a: the frame blurred along x
  std::size_t row_floats;
};

// Along x. Block: kWarpsPerBlock warps, each 32 lines (line = row * C + channel); grid.y:
// chunks.
template <class Io>
__global__ void __launch_bounds__(kWarp* kWarpsPerBlock) gauss_recursive_rows(const RowArgs a) {
  constexpr int C = Io::kChannels;
  __shared__ float tiles[kWarpsPerBlock][2][kWarp][kWarp + 1];
  float(&in_t)[kWarp][kWarp + 1] = tiles[threadIdx.y][0];
  float(&out_t)[kWarp][kWarp + 1] = tiles[threadIdx.y][1];
  const Plane& p = a.plane;
  const int lane = threadIdx.x;
  const int lines = p.height * C;
  const int first_line = (blockIdx.x * kWarpsPerBlock + threadIdx.y) * kWarp;
  if (first_line >= lines) return;  // whole warps only: the tiles are per warp
  const int x0 = blockIdx.y * a.r.chunk;
  const int x1 = min(x0 + a.r.chunk, p.width);
  const int start = x0 - a.r.pad, end = x1 + a.r.pad;
  const DericheCoefficients& k = a.r.k;

  // Sample `x` (any, through the border) of line `line`.
  const auto sample = [&](int line, int x) -> float {
    const int y = line / C, c = line - y * C;
    const int sx = border_index(x, p.width, a.border);
    if (sx < 0) return a.border_value;
    return Io::load(p.in + static_cast<std::ptrdiff_t>(y) * p.in_stride, sx, c);
  };
  const auto frame_at = [&](float* frame, int line, int x) -> float& {
    const int y = line / C, c = line - y * C;
    return frame[static_cast<std::size_t>(y) * a.row_floats + static_cast<std::size_t>(x) * C + c];
  };
  const int my_line = first_line + lane;
  const bool mine = my_line < lines;

  State s;
  if (mine) s.start(sample(my_line, start), k.causal_gain);
  for (int xs = start; xs < x1; xs += kWarp) {
    const int count = min(kWarp, x1 - xs);
#pragma unroll 8
    for (int l = 0; l < kWarp; ++l) {
      if (lane < count && first_line + l < lines) in_t[l][lane] = sample(first_line + l, xs + lane);
    }
    __syncwarp();
    if (mine) {
      for (int j = 0; j < count; ++j) {
        const double y = s.causal(k, in_t[lane][j]);
        out_t[lane][j] = static_cast<float>(y);
      }
    }
    __syncwarp();
    const int x = xs + lane;
    if (lane < count && x >= x0) {
      for (int l = 0; l < kWarp && first_line + l < lines; ++l) {
        frame_at(a.causal, first_line + l, x) = out_t[l][lane];
      }
    }
    __syncwarp();
  }

  if (mine) s.start(sample(my_line, end - 1), k.anticausal_gain);
  for (int xe = end; xe > x0; xe -= kWarp) {
    const int xs = max(xe - kWarp, x0);
    const int count = xe - xs;
#pragma unroll 8
    for (int l = 0; l < kWarp; ++l) {
      if (lane < count && first_line + l < lines) {
        const int x = xs + lane;
        in_t[l][lane] = sample(first_line + l, x);
        if (x < x1) out_t[l][lane] = frame_at(a.causal, first_line + l, x);
      }
    }
    __syncwarp();
    if (mine) {
      for (int j = count - 1; j >= 0; --j) {
        const double y = s.anticausal(k, in_t[lane][j]);
        if (xs + j < x1) out_t[lane][j] = static_cast<float>((out_t[lane][j] + y) * k.scale);
      }
    }
    __syncwarp();
    const int x = xs + lane;
    if (lane < count && x < x1) {
      for (int l = 0; l < kWarp && first_line + l < lines; ++l) {
        frame_at(a.result, first_line + l, x) = out_t[l][lane];
      }
    }
    __syncwarp();
  }
}

struct ColumnArgs {
  Plane plane;
  Recursion r;
  BorderMode border;
  float border_value;
  const float* rows;  // frame_a: the frame blurred along x
  float* causal;      // frame_b
  std::size_t row_floats;
};

// Along y. Thread: one line (column * C + channel), consecutive threads neighbouring samples
// of a row; grid.y: chunks.
template <class Io>
__global__ void __launch_bounds__(kColumnsPerBlock) gauss_recursive_columns(const ColumnArgs a) {
  constexpr int C = Io::kChannels;
  const Plane& p = a.plane;
  const int line = blockIdx.x * kColumnsPerBlock + threadIdx.x;
  if (line >= p.width * C) return;
  const int x = line / C, c_index = line - x * C;
  const int y0 = blockIdx.y * a.r.chunk;
  const int y1 = min(y0 + a.r.chunk, p.height);
  const int start = y0 - a.r.pad, end = y1 + a.r.pad;
  const DericheCoefficients& k = a.r.k;
  const auto sample = [&](int y) -> float {
    const int sy = border_index(y, p.height, a.border);
    return sy < 0 ? a.border_value : a.rows[static_cast<std::size_t>(sy) * a.row_floats + line];
  };
  float* const causal = a.causal + line;

  // Loads are issued kBatch at a time ahead of the recursion that consumes them: one line
  // a thread leaves too few threads to hide a load's latency one sample at a time.
  State s;
  s.start(sample(start), k.causal_gain);
  for (int y = start; y < y1; y += kBatch) {
    float v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = y + b < y1 ? sample(y + b) : 0.0f;
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (y + b >= y1) break;
      const double r = s.causal(k, v[b]);
      if (y + b >= y0)
        causal[static_cast<std::size_t>(y + b) * a.row_floats] = static_cast<float>(r);
    }
  }
  s.start(sample(end - 1), k.anticausal_gain);
  for (int y = end - 1; y >= y0; y -= kBatch) {
    float v[kBatch], c[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int yy = y - b;
      v[b] = yy >= y0 ? sample(yy) : 0.0f;
      c[b] = yy >= y0 && yy < y1 ? causal[static_cast<std::size_t>(yy) * a.row_floats] : 0.0f;
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int yy = y - b;
      if (yy < y0) break;
      const double r = s.anticausal(k, v[b]);
      if (yy >= y1) continue;
      const double sum = (c[b] + r) * k.scale;
      std::byte* out_row = p.out + static_cast<std::ptrdiff_t>(yy) * p.out_stride;
      Io::store(out_row, x, c_index, static_cast<float>(sum));
      if constexpr (Io::kHasAlpha) {
        if (c_index == 0) {
          Io::copy_alpha(p.in + static_cast<std::ptrdiff_t>(yy) * p.in_stride, out_row, x);
        }
      }
    }
  }
}

}  // namespace

namespace gauss_detail {

cudaError_t launch_recursive(const GaussParams& params, ConstImageView in, ImageView out,
                             const ScratchLayout& scratch, cudaStream_t stream) {
  const Plane plane = gauss_io::plane_of(in, out);
  const int channels = format_info(in.format).color_channels;
  const BorderMode border = params.border;
  const auto border_value = static_cast<float>(params.border_value);

  const RowArgs rows{plane,
                     recursion_for(params.sigma_x, in.width, in.height * channels),
                     border,
                     border_value,
                     scratch.frame_b,
                     scratch.frame_a,
                     scratch.row_floats};
  const ColumnArgs columns{plane,
                           recursion_for(params.sigma_y, in.height, in.width * channels),
                           border,
                           border_value,
                           scratch.frame_a,
                           scratch.frame_b,
                           scratch.row_floats};
  const int row_lines = in.height * channels;
  const dim3 row_grid((row_lines + kWarp * kWarpsPerBlock - 1) / (kWarp * kWarpsPerBlock),
                      (in.width + rows.r.chunk - 1) / rows.r.chunk);
  const int column_lines = in.width * channels;
  const dim3 column_grid((column_lines + kColumnsPerBlock - 1) / kColumnsPerBlock,
                         (in.height + columns.r.chunk - 1) / columns.r.chunk);
  gauss_io::with_format(in.format, [&](auto io) {
    using Io = decltype(io);
    gauss_recursive_rows<Io><<<row_grid, dim3(kWarp, kWarpsPerBlock), 0, stream>>>(rows);
    gauss_recursive_columns<Io><<<column_grid, kColumnsPerBlock, 0, stream>>>(columns);
  });
  return cudaPeekAtLastError();
}

}  // namespace gauss_detail

}  // namespace starsift::cuda
