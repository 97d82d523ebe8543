// Detection's kernels: the steps of DetectState (pipeline/detect/reference.cpp) as passes on
// one stream, between them the labelling of labels.cuh. Compiled without fused multiply-add
// (CMakeLists.txt), so the filter's double sums and the per-pixel rules round as the CPU
// reference rounds them.
#include <cub/cub.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cuda/common/format_traits.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/detect/detect.cuh"
#include "cuda/detect/labels.cuh"
#include "pipeline/detect/background_mesh.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/object_sums.hpp"
#include "pipeline/stage_result.hpp"

namespace starsift::cuda {

namespace {

constexpr int kRun = 16;  // pixels of a row one thread sums before its atomics
constexpr int kMaxTaps =
    (2 * DetectParams::kMaxFilterRadius + 1) * (2 * DetectParams::kMaxFilterRadius + 1);

struct TileState {
  double mean, sigma, lo, hi;
};
struct Partial {
  double sum, sum2;
  unsigned long long n;
};
// One catalogue record's sums (ObjectSums, with atomics-friendly fields).
struct DeviceSums {
  double flux, var, rx, ry, rxx, ryy, rxy, vx, vy, vxx, vyy, ux, uy, uxx, uyy, uxy;
  unsigned long long peak;  // peak_key()
  unsigned int npix;
  int xmin, xmax, ymin, ymax;
};

// The small buffers, carved from one allocation (DetectBuffers::small_).
struct Small {
  TileState* tiles;
  Partial* partials;
  float* taps;
  double* sigma_floor;
  std::uint32_t* components;  // launch_labels()' count
  // Each column's and row's place in the mesh (mesh_locate()), worked out at allocation: the
  // mesh's geometry is fixed, and locating per pixel took divisions on every pass.
  int* col_tile;
  double* col_weight;
  int* row_tile;
  double* row_weight;
};
std::size_t align256(std::size_t b) {
  return (b + 255) / 256 * 256;
}
std::size_t small_bytes(int tiles, int splits, int width, int height) {
  return align256(sizeof(TileState) * tiles) + align256(sizeof(Partial) * tiles * splits) +
         align256(sizeof(float) * kMaxTaps) + align256(sizeof(double)) +
         align256(sizeof(std::uint32_t)) + align256(sizeof(int) * width) +
         align256(sizeof(double) * width) + align256(sizeof(int) * height) +
         align256(sizeof(double) * height);
}
Small carve(std::byte* base, int tiles, int splits, int width, int height) {
  Small s;
  s.tiles = reinterpret_cast<TileState*>(base);
  base += align256(sizeof(TileState) * tiles);
  s.partials = reinterpret_cast<Partial*>(base);
  base += align256(sizeof(Partial) * tiles * splits);
  s.taps = reinterpret_cast<float*>(base);
  base += align256(sizeof(float) * kMaxTaps);
  s.sigma_floor = reinterpret_cast<double*>(base);
  base += align256(sizeof(double));
  s.components = reinterpret_cast<std::uint32_t*>(base);
  base += align256(sizeof(std::uint32_t));
  s.col_tile = reinterpret_cast<int*>(base);
  base += align256(sizeof(int) * width);
  s.col_weight = reinterpret_cast<double*>(base);
  base += align256(sizeof(double) * width);
  s.row_tile = reinterpret_cast<int*>(base);
  base += align256(sizeof(int) * height);
  s.row_weight = reinterpret_cast<double*>(base);
  return s;
}

// Orders floats as unsigned keys (larger float, larger key), for an atomicMax of the peak.
__device__ __forceinline__ std::uint32_t float_key(float f) {
  const std::uint32_t b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float key_float(std::uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
// The peak: largest value, then the first pixel in raster order.
__device__ __forceinline__ unsigned long long peak_key(float r, std::uint32_t raster) {
  return (static_cast<unsigned long long>(float_key(r)) << 32) | (0xffffffffu - raster);
}

// ImageView::row_as() is host code: the kernels' row of an output view.
template <class T>
__device__ __forceinline__ T* out_row(ImageView v, int y) {
  return reinterpret_cast<T*>(v.data + static_cast<std::ptrdiff_t>(y) * v.stride);
}

__device__ __forceinline__ float load_sample(const std::byte* row, int x, PixelFormat f) {
  switch (f) {
    case PixelFormat::Gray8:
      return static_cast<float>(reinterpret_cast<const std::uint8_t*>(row)[x]);
    case PixelFormat::Gray16:
      return static_cast<float>(reinterpret_cast<const std::uint16_t*>(row)[x]);
    default: {
      const float v = reinterpret_cast<const float*>(row)[x];
      return isfinite(v) ? v : 0.0f;
    }
  }
}

struct Frame {
  int width, height;
  float* residual;             // packed rows of `width`
  std::size_t residual_pitch;  // floats
  std::uint8_t* mask;
  std::size_t mask_pitch;
  std::uint32_t* labels;
  std::size_t label_pitch;  // elements
  MeshAxis ax, ay;
  bool has_background;
  const int* col_tile;
  const double* col_weight;
  const int* row_tile;
  const double* row_weight;
};

__global__ void load_kernel(ConstImageView in, Frame f) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  f.residual[y * f.residual_pitch + x] = load_sample(in.data + y * in.stride, x, in.format);
}

__global__ void tiles_init_kernel(TileState* tiles, int count) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) tiles[t] = {0.0, 0.0, -HUGE_VAL, HUGE_VAL};
}

// One block: rows s, s + splits, ... of tile blockIdx.x, the values within the tile's bounds
// (tiles too large for tile_clip_shared_kernel, e.g. a global background).
__global__ void tile_partial_kernel(Frame f, const TileState* tiles, Partial* partials,
                                    int splits) {
  const int t = blockIdx.x, s = blockIdx.y;
  const int i = t % f.ax.count, j = t / f.ax.count;
  const TileState st = tiles[t];
  double sum = 0.0, sum2 = 0.0;
  unsigned long long n = 0;
  for (int y = f.ay.begin(j) + s; y < f.ay.end(j); y += splits) {
    const float* row = f.residual + y * f.residual_pitch;
    for (int x = f.ax.begin(i) + threadIdx.x; x < f.ax.end(i); x += blockDim.x) {
      const float v = row[x];
      if (v < st.lo || v > st.hi) continue;
      sum += v;
      sum2 += static_cast<double>(v) * v;
      ++n;
    }
  }
  using Reduce = cub::BlockReduce<double, 256>;
  using ReduceN = cub::BlockReduce<unsigned long long, 256>;
  __shared__ typename Reduce::TempStorage t1;
  __shared__ typename Reduce::TempStorage t2;
  __shared__ typename ReduceN::TempStorage t3;
  const double bsum = Reduce(t1).Sum(sum);
  const double bsum2 = Reduce(t2).Sum(sum2);
  const unsigned long long bn = ReduceN(t3).Sum(n);
  if (threadIdx.x == 0) partials[t * splits + s] = {bsum, bsum2, bn};
}

// One round of sigma clipping per tile, as clipped_stats() does it.
__global__ void tile_finalize_kernel(TileState* tiles, const Partial* partials, int count,
                                     int splits, double clip) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  double sum = 0.0, sum2 = 0.0;
  unsigned long long n = 0;
  for (int s = 0; s < splits; ++s) {
    sum += partials[t * splits + s].sum;
    sum2 += partials[t * splits + s].sum2;
    n += partials[t * splits + s].n;
  }
  if (n == 0) return;  // nothing within the bounds: the previous round stands
  TileState& st = tiles[t];
  st.mean = sum / static_cast<double>(n);
  const double var = sum2 / static_cast<double>(n) - st.mean * st.mean;
  st.sigma = sqrt(var > 0.0 ? var : 0.0);
  st.lo = st.mean - clip * st.sigma;
  st.hi = st.mean + clip * st.sigma;
}

// Tiles of at most kSharedTilePixels: the tile is read once into shared memory and clipped
// there, every round, by one block (a round over global memory per tile cost ~140 us at
// 4096^2 with 64 px tiles, five times). Same rule as tile_partial + tile_finalize.
constexpr int kSharedTilePixels = 12 * 1024;  // 48 KB: the default limit of dynamic shared memory

__global__ void tile_clip_shared_kernel(Frame f, TileState* tiles, int rounds, double clip) {
  extern __shared__ float values[];
  const int t = blockIdx.x;
  const int i = t % f.ax.count, j = t / f.ax.count;
  const int x0 = f.ax.begin(i), tw = f.ax.end(i) - x0;
  const int y0 = f.ay.begin(j), th = f.ay.end(j) - y0;
  const int n = tw * th;
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    const int dy = k / tw;
    values[k] = f.residual[(y0 + dy) * f.residual_pitch + x0 + (k - dy * tw)];
  }
  // Each round: the block's sums by warp shuffles and one pass over the warps' partials (two
  // barriers a round; three CUB block reductions cost twice the time).
  __shared__ double warp_sum[32], warp_sum2[32];
  __shared__ unsigned long long warp_n[32];
  __shared__ TileState st;
  if (threadIdx.x == 0) st = {0.0, 0.0, -HUGE_VAL, HUGE_VAL};
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  for (int round = 0; round < rounds; ++round) {
    const double lo = st.lo, hi = st.hi;
    double sum = 0.0, sum2 = 0.0;
    unsigned long long count = 0;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
      const float v = values[k];
      if (v < lo || v > hi) continue;
      sum += v;
      sum2 += static_cast<double>(v) * v;
      ++count;
    }
    for (int o = 16; o > 0; o >>= 1) {
      sum += __shfl_down_sync(0xffffffffu, sum, o);
      sum2 += __shfl_down_sync(0xffffffffu, sum2, o);
      count += __shfl_down_sync(0xffffffffu, count, o);
    }
    if (lane == 0) {
      warp_sum[warp] = sum;
      warp_sum2[warp] = sum2;
      warp_n[warp] = count;
    }
    __syncthreads();  // also: every thread has read st's bounds before thread 0 moves them
    if (threadIdx.x == 0) {
      double bsum = 0.0, bsum2 = 0.0;
      unsigned long long bn = 0;
      for (int w = 0; w < warps; ++w) {
        bsum += warp_sum[w];
        bsum2 += warp_sum2[w];
        bn += warp_n[w];
      }
      if (bn != 0) {
        st.mean = bsum / static_cast<double>(bn);
        const double var = bsum2 / static_cast<double>(bn) - st.mean * st.mean;
        st.sigma = sqrt(var > 0.0 ? var : 0.0);
        st.lo = st.mean - clip * st.sigma;
        st.hi = st.mean + clip * st.sigma;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) tiles[t] = st;
}

__global__ void sigma_floor_kernel(const TileState* tiles, int count, double* floor) {
  double m = 0.0;
  for (int t = threadIdx.x; t < count; t += blockDim.x) m = fmax(m, tiles[t].sigma);
  using Reduce = cub::BlockReduce<double, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  const double best = Reduce(tmp).Reduce(m, ::cuda::maximum<double>{});
  if (threadIdx.x == 0) *floor = best > 0.0 ? best * 1e-3 : 1e-6;
}

__device__ __forceinline__ float background_at(const Frame& f, const TileState* tiles, int x,
                                               int y) {
  return static_cast<float>(mesh_blend(f.ax, f.ay, f.col_tile[x], f.col_weight[x], f.row_tile[y],
                                       f.row_weight[y], [&](int k) { return tiles[k].mean; }));
}
__device__ __forceinline__ float sigma_at(const Frame& f, const TileState* tiles, double floor,
                                          int x, int y) {
  if (!f.has_background) return 1.0f;
  const double s = mesh_blend(f.ax, f.ay, f.col_tile[x], f.col_weight[x], f.row_tile[y],
                              f.row_weight[y], [&](int k) { return tiles[k].sigma; });
  return static_cast<float>(s > floor ? s : floor);
}

__global__ void subtract_kernel(Frame f, const TileState* tiles) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  float& v = f.residual[y * f.residual_pitch + x];
  v = v - background_at(f, tiles, x, y);
}

// The filtered significance against the threshold; the taps' sum in the reference's order.
// Radius: the filter's at compile time (0: none, 1: the default 3 x 3, unrolled with its taps
// in registers), or -1 for any (`radius`, the Gaussian).
template <int Radius>
__global__ void mask_kernel(Frame f, const TileState* tiles, const double* floor_ptr,
                            const float* taps, int runtime_radius, double norm, bool sigma_units,
                            float threshold) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  const int radius = Radius >= 0 ? Radius : runtime_radius;
  double sum = 0.0;
  if (Radius == 0) {
    sum = f.residual[y * f.residual_pitch + x];
  } else {
    const int side = 2 * radius + 1;
#pragma unroll
    for (int dy = -radius; dy <= radius; ++dy) {
      const int yy = y + dy;
      if (yy < 0 || yy >= f.height) continue;
      const float* row = f.residual + yy * f.residual_pitch;
#pragma unroll
      for (int dx = -radius; dx <= radius; ++dx) {
        const int xx = x + dx;
        if (xx < 0 || xx >= f.width) continue;
        sum += static_cast<double>(taps[(dy + radius) * side + dx + radius]) * row[xx];
      }
    }
  }
  const double floor = f.has_background ? *floor_ptr : 0.0;
  const float s = sigma_units ? static_cast<float>(sum / (sigma_at(f, tiles, floor, x, y) * norm))
                              : static_cast<float>(sum);
  f.mask[y * f.mask_pitch + x] = s > threshold ? 1 : 0;
}

// npix per component: runs of kRun pixels of a row summed before their atomics.
__global__ void count_kernel(Frame f, std::uint32_t* npix) {
  const int runs = (f.width + kRun - 1) / kRun;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int y = static_cast<int>(t / runs);
  if (y >= f.height) return;
  const int x0 = static_cast<int>(t % runs) * kRun;
  const std::uint32_t* row = f.labels + y * f.label_pitch;
  std::uint32_t current = 0, n = 0;
  for (int x = x0; x < x0 + kRun && x < f.width; ++x) {
    const std::uint32_t l = row[x];
    if (l != current) {
      if (current != 0) atomicAdd(&npix[current], n);
      current = l;
      n = 0;
    }
    ++n;
  }
  if (current != 0) atomicAdd(&npix[current], n);
}

__global__ void kept_flags_kernel(const std::uint32_t* npix, std::uint32_t* kept, std::size_t count,
                                  std::uint32_t min_area) {
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < count) kept[c] = (c > 0 && npix[c] >= min_area) ? 1u : 0u;
}

// The catalogue id of component l: its place among the kept ones, 0 when dropped.
__device__ __forceinline__ std::uint32_t catalogue_id(std::uint32_t l, const std::uint32_t* npix,
                                                      const std::uint32_t* kept,
                                                      std::uint32_t min_area) {
  return (l != 0 && npix[l] >= min_area) ? kept[l] : 0u;
}

__global__ void sums_init_kernel(DeviceSums* sums, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  DeviceSums s{};
  s.xmin = s.ymin = 0x7fffffff;
  s.xmax = s.ymax = -1;
  sums[i] = s;
}

// A run's ObjectSums as the atomics take them (the peak as its key), and back.
__device__ __forceinline__ DeviceSums to_device(const ObjectSums& o, int width) {
  DeviceSums a;
  a.flux = o.flux, a.var = o.var, a.rx = o.rx, a.ry = o.ry, a.rxx = o.rxx, a.ryy = o.ryy;
  a.rxy = o.rxy, a.vx = o.vx, a.vy = o.vy, a.vxx = o.vxx, a.vyy = o.vyy;
  a.ux = o.ux, a.uy = o.uy, a.uxx = o.uxx, a.uyy = o.uyy, a.uxy = o.uxy;
  a.peak = o.npix == 0 ? 0ull
                       : peak_key(o.peak, static_cast<std::uint32_t>(o.ypeak) *
                                                  static_cast<std::uint32_t>(width) +
                                              static_cast<std::uint32_t>(o.xpeak));
  a.npix = o.npix;
  a.xmin = o.xmin, a.xmax = o.xmax, a.ymin = o.ymin, a.ymax = o.ymax;
  return a;
}

__device__ __forceinline__ ObjectSums to_object(const DeviceSums& d, int width) {
  ObjectSums s;
  s.npix = d.npix;
  s.xmin = d.xmin, s.xmax = d.xmax, s.ymin = d.ymin, s.ymax = d.ymax;
  s.flux = d.flux, s.var = d.var, s.rx = d.rx, s.ry = d.ry, s.rxx = d.rxx, s.ryy = d.ryy;
  s.rxy = d.rxy, s.vx = d.vx, s.vy = d.vy, s.vxx = d.vxx, s.vyy = d.vyy;
  s.ux = d.ux, s.uy = d.uy, s.uxx = d.uxx, s.uyy = d.uyy, s.uxy = d.uxy;
  s.peak = key_float(static_cast<std::uint32_t>(d.peak >> 32));
  const std::uint32_t raster = 0xffffffffu - static_cast<std::uint32_t>(d.peak & 0xffffffffu);
  s.xpeak = static_cast<std::int32_t>(raster % static_cast<std::uint32_t>(width));
  s.ypeak = static_cast<std::int32_t>(raster / static_cast<std::uint32_t>(width));
  return s;
}

__device__ void flush(const DeviceSums& a, DeviceSums* sums, std::uint32_t id) {
  DeviceSums& d = sums[id - 1];
  atomicAdd(&d.flux, a.flux);
  atomicAdd(&d.var, a.var);
  atomicAdd(&d.rx, a.rx);
  atomicAdd(&d.ry, a.ry);
  atomicAdd(&d.rxx, a.rxx);
  atomicAdd(&d.ryy, a.ryy);
  atomicAdd(&d.rxy, a.rxy);
  atomicAdd(&d.vx, a.vx);
  atomicAdd(&d.vy, a.vy);
  atomicAdd(&d.vxx, a.vxx);
  atomicAdd(&d.vyy, a.vyy);
  atomicAdd(&d.ux, a.ux);
  atomicAdd(&d.uy, a.uy);
  atomicAdd(&d.uxx, a.uxx);
  atomicAdd(&d.uyy, a.uyy);
  atomicAdd(&d.uxy, a.uxy);
  atomicMax(&d.peak, a.peak);
  atomicAdd(&d.npix, a.npix);
  atomicMin(&d.xmin, a.xmin);
  atomicMax(&d.xmax, a.xmax);
  atomicMin(&d.ymin, a.ymin);
  atomicMax(&d.ymax, a.ymax);
}

// Adds the lanes' sums into lane 0's (all 32 lanes hold sums of the same record).
__device__ void warp_reduce(DeviceSums& a) {
  for (int o = 16; o > 0; o >>= 1) {
    a.flux += __shfl_down_sync(0xffffffffu, a.flux, o);
    a.var += __shfl_down_sync(0xffffffffu, a.var, o);
    a.rx += __shfl_down_sync(0xffffffffu, a.rx, o);
    a.ry += __shfl_down_sync(0xffffffffu, a.ry, o);
    a.rxx += __shfl_down_sync(0xffffffffu, a.rxx, o);
    a.ryy += __shfl_down_sync(0xffffffffu, a.ryy, o);
    a.rxy += __shfl_down_sync(0xffffffffu, a.rxy, o);
    a.vx += __shfl_down_sync(0xffffffffu, a.vx, o);
    a.vy += __shfl_down_sync(0xffffffffu, a.vy, o);
    a.vxx += __shfl_down_sync(0xffffffffu, a.vxx, o);
    a.vyy += __shfl_down_sync(0xffffffffu, a.vyy, o);
    a.ux += __shfl_down_sync(0xffffffffu, a.ux, o);
    a.uy += __shfl_down_sync(0xffffffffu, a.uy, o);
    a.uxx += __shfl_down_sync(0xffffffffu, a.uxx, o);
    a.uyy += __shfl_down_sync(0xffffffffu, a.uyy, o);
    a.uxy += __shfl_down_sync(0xffffffffu, a.uxy, o);
    const unsigned long long p = __shfl_down_sync(0xffffffffu, a.peak, o);
    a.peak = p > a.peak ? p : a.peak;
    a.npix += __shfl_down_sync(0xffffffffu, a.npix, o);
    a.xmin = min(a.xmin, __shfl_down_sync(0xffffffffu, a.xmin, o));
    a.xmax = max(a.xmax, __shfl_down_sync(0xffffffffu, a.xmax, o));
    a.ymin = min(a.ymin, __shfl_down_sync(0xffffffffu, a.ymin, o));
    a.ymax = max(a.ymax, __shfl_down_sync(0xffffffffu, a.ymax, o));
  }
}

// Each record's sums (add_pixel()'s terms), runs of kRun pixels summed in registers; where a
// whole warp's last run belongs to one record (a large object), the warp adds them up first,
// so a frame-filling object costs one set of atomics per warp, not per thread.
__global__ void sums_kernel(Frame f, const TileState* tiles, const double* floor_ptr,
                            const std::uint32_t* npix, const std::uint32_t* kept,
                            std::uint32_t min_area, std::uint32_t capacity, DeviceSums* sums) {
  const int runs = (f.width + kRun - 1) / kRun;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int y = static_cast<int>(t / runs);
  const int x0 = static_cast<int>(t % runs) * kRun;
  const double floor = f.has_background ? *floor_ptr : 0.0;
  ObjectSums o;  // the current run's, add_pixel() as on the CPU
  std::uint32_t current = 0;
  if (y < f.height) {
    const std::uint32_t* row = f.labels + y * f.label_pitch;
    const float* res = f.residual + y * f.residual_pitch;
    for (int x = x0; x < x0 + kRun && x < f.width; ++x) {
      std::uint32_t id = catalogue_id(row[x], npix, kept, min_area);
      if (id > capacity) id = 0;
      if (id != current) {
        if (current != 0) flush(to_device(o, f.width), sums, current);
        o = ObjectSums{};
        current = id;
      }
      if (id == 0) continue;
      const float sigma = sigma_at(f, tiles, floor, x, y);
      add_pixel(o, x, y, res[x], sigma * sigma);
    }
  }
  DeviceSums a = to_device(o, f.width);
  // Every lane reaches here (no early return above): the warp may add up its runs.
  const std::uint32_t first = __shfl_sync(0xffffffffu, current, 0);
  if (__all_sync(0xffffffffu, current == first) && first != 0) {
    warp_reduce(a);
    if ((threadIdx.x & 31) == 0) flush(a, sums, first);
  } else if (current != 0) {
    flush(a, sums, current);
  }
}

__device__ __forceinline__ std::uint32_t total_kept(const std::uint32_t* kept, std::size_t count) {
  return kept[count - 1];
}

__global__ void catalogue_kernel(const DeviceSums* sums, const std::uint32_t* kept,
                                 std::size_t components, std::uint32_t capacity, int width,
                                 int height, std::byte* result) {
  const std::uint32_t total = total_kept(kept, components);
  const std::uint32_t count = total < capacity ? total : capacity;
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) {
    auto* header = reinterpret_cast<ResultHeader*>(result);
    header->count = count;
    header->overflow = total - count;
  }
  if (i >= count) return;
  const ObjectSums s = to_object(sums[i], width);
  reinterpret_cast<DetectedObject*>(result + kResultRecordsOffset)[i] =
      finalize_object(s, i + 1, width, height);
}

__global__ void labels_out_kernel(Frame f, const std::uint32_t* npix, const std::uint32_t* kept,
                                  std::uint32_t min_area, ImageView out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  const std::uint32_t id = catalogue_id(f.labels[y * f.label_pitch + x], npix, kept, min_area);
  out_row<std::uint16_t>(out, y)[x] = static_cast<std::uint16_t>(id < 65535u ? id : 65535u);
}

__global__ void overlay_kernel(Frame f, const TileState* tiles, const double* floor_ptr,
                               ImageView out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  const double floor = f.has_background ? *floor_ptr : 0.0;
  const float r = f.residual[y * f.residual_pitch + x] / sigma_at(f, tiles, floor, x, y);
  const float v = fminf(fmaxf((r + 2.0f) * (254.0f / 12.0f), 0.0f), 254.0f);
  out_row<std::uint8_t>(out, y)[x] = static_cast<std::uint8_t>(lroundf(v));
}

// Each written record's box at 255 (one block per record).
__global__ void boxes_kernel(const DeviceSums* sums, const std::uint32_t* kept,
                             std::size_t components, std::uint32_t capacity, ImageView out) {
  const std::uint32_t total = total_kept(kept, components);
  const std::uint32_t i = blockIdx.x;
  if (i >= (total < capacity ? total : capacity)) return;
  const DeviceSums& d = sums[i];
  const int w = d.xmax - d.xmin + 1, h = d.ymax - d.ymin + 1;
  for (int k = threadIdx.x; k < w; k += blockDim.x) {
    out_row<std::uint8_t>(out, d.ymin)[d.xmin + k] = 255;
    out_row<std::uint8_t>(out, d.ymax)[d.xmin + k] = 255;
  }
  for (int k = threadIdx.x; k < h; k += blockDim.x) {
    out_row<std::uint8_t>(out, d.ymin + k)[d.xmin] = 255;
    out_row<std::uint8_t>(out, d.ymin + k)[d.xmax] = 255;
  }
}

dim3 grid2d(int w, int h, dim3 block) {
  return dim3((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
}

}  // namespace

void DetectBuffers::allocate(const DetectParams& params, const FrameShape& shape,
                             const std::vector<float>& taps, int radius, double norm) {
  shape_ = shape;
  max_objects_ = params.max_objects;
  const bool mesh = params.background == DetectBackground::Mesh;
  const MeshAxis ax = mesh_axis(shape.width, mesh ? params.mesh : shape.width);
  const MeshAxis ay = mesh_axis(shape.height, mesh ? params.mesh : shape.height);
  tiles_x_ = ax.count;
  tiles_y_ = ay.count;
  // Enough blocks per tile to fill the GPU for a global background, few for a fine mesh.
  const int tiles = tiles_x_ * tiles_y_;
  splits_ = std::clamp(2048 / tiles, 1, std::min(ay.side, 512));
  const std::size_t pixels = static_cast<std::size_t>(shape.width) * shape.height;
  // At most: 4-connected, a checkerboard, half the pixels rounded up; 8-connected, one pixel
  // in every 2 x 2 block. +1 for label 0. (Every per-component pass and the scan cover this.)
  connectivity_ = params.connectivity;
  components_ = params.connectivity == Connectivity::Eight
                    ? static_cast<std::size_t>((shape.width + 1) / 2) * ((shape.height + 1) / 2) + 1
                    : (pixels + 1) / 2 + 1;
  residual_.allocate(static_cast<std::size_t>(shape.width) * sizeof(float), shape.height);
  mask_.allocate(static_cast<std::size_t>(shape.width), shape.height);
  labels_.allocate(static_cast<std::size_t>(shape.width) * sizeof(std::uint32_t), shape.height);
  small_.allocate(small_bytes(tiles, splits_, shape.width, shape.height), 1);
  {
    std::vector<int> col_tile(shape.width), row_tile(shape.height);
    std::vector<double> col_weight(shape.width), row_weight(shape.height);
    for (int x = 0; x < shape.width; ++x) mesh_locate(ax, x, col_tile[x], col_weight[x]);
    for (int y = 0; y < shape.height; ++y) mesh_locate(ay, y, row_tile[y], row_weight[y]);
    const Small s = carve(small_.data(), tiles, splits_, shape.width, shape.height);
    check(
        cudaMemcpy(s.col_tile, col_tile.data(), sizeof(int) * shape.width, cudaMemcpyHostToDevice),
        "cudaMemcpy");
    check(cudaMemcpy(s.col_weight, col_weight.data(), sizeof(double) * shape.width,
                     cudaMemcpyHostToDevice),
          "cudaMemcpy");
    check(
        cudaMemcpy(s.row_tile, row_tile.data(), sizeof(int) * shape.height, cudaMemcpyHostToDevice),
        "cudaMemcpy");
    check(cudaMemcpy(s.row_weight, row_weight.data(), sizeof(double) * shape.height,
                     cudaMemcpyHostToDevice),
          "cudaMemcpy");
  }
  npix_.allocate(components_ * sizeof(std::uint32_t), 1);
  kept_.allocate(components_ * sizeof(std::uint32_t), 1);
  sums_.allocate(static_cast<std::size_t>(max_objects_) * sizeof(DeviceSums), 1);
  scan_temp_bytes_ = 0;
  std::uint32_t* k = reinterpret_cast<std::uint32_t*>(kept_.data());
  check(
      cub::DeviceScan::InclusiveSum(nullptr, scan_temp_bytes_, k, k, static_cast<int>(components_)),
      "cub::DeviceScan::InclusiveSum (size)");
  scan_temp_.allocate(std::max<std::size_t>(scan_temp_bytes_, 1), 1);
  label_scratch_bytes_ = label_scratch_bytes(shape.width, shape.height);
  label_scratch_.allocate(std::max<std::size_t>(label_scratch_bytes_, 1), 1);
  set_filter(taps, radius, norm);
}

void DetectBuffers::set_filter(const std::vector<float>& taps, int radius, double norm) {
  radius_ = radius;
  norm_ = norm;
  const Small s = carve(small_.data(), tiles_x_ * tiles_y_, splits_, shape_.width, shape_.height);
  if (!taps.empty()) {
    check(cudaMemcpy(s.taps, taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice),
          "detect filter taps (cudaMemcpy)");
  }
}

cudaError_t launch_detect(const DetectParams& p, DetectBuffers& b, ConstImageView in, ImageView out,
                          cudaStream_t stream) {
  const int w = b.shape_.width, h = b.shape_.height;
  // The per-component buffers are sized for the connectivity they were allocated with.
  if (in.width != w || in.height != h || in.format != b.shape_.format ||
      p.max_objects != b.max_objects_ || p.connectivity != b.connectivity_) {
    return cudaErrorInvalidValue;
  }
  const int tiles = b.tiles_x_ * b.tiles_y_;
  const Small s = carve(b.small_.data(), tiles, b.splits_, w, h);
  const bool mesh = p.background == DetectBackground::Mesh;
  Frame f;
  f.width = w;
  f.height = h;
  f.residual = reinterpret_cast<float*>(b.residual_.data());
  f.residual_pitch = b.residual_.pitch() / sizeof(float);
  f.mask = reinterpret_cast<std::uint8_t*>(b.mask_.data());
  f.mask_pitch = b.mask_.pitch();
  f.labels = reinterpret_cast<std::uint32_t*>(b.labels_.data());
  f.label_pitch = b.labels_.pitch() / sizeof(std::uint32_t);
  f.ax = mesh_axis(w, mesh ? p.mesh : w);
  f.ay = mesh_axis(h, mesh ? p.mesh : h);
  f.has_background = p.background != DetectBackground::None;
  f.col_tile = s.col_tile;
  f.col_weight = s.col_weight;
  f.row_tile = s.row_tile;
  f.row_weight = s.row_weight;
  if (f.has_background && f.ax.count * f.ay.count != tiles) return cudaErrorInvalidValue;

  const dim3 block(32, 8);
  const dim3 grid = grid2d(w, h, block);
  load_kernel<<<grid, block, 0, stream>>>(in, f);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  if (f.has_background) {
    const int tile_pixels = f.ax.side * f.ay.side;
    if (tile_pixels <= kSharedTilePixels) {
      tile_clip_shared_kernel<<<tiles, 256, sizeof(float) * tile_pixels, stream>>>(
          f, s.tiles, DetectParams::kClipRounds, DetectParams::kClipSigma);
    } else {
      tiles_init_kernel<<<(tiles + 127) / 128, 128, 0, stream>>>(s.tiles, tiles);
      for (int round = 0; round < DetectParams::kClipRounds; ++round) {
        tile_partial_kernel<<<dim3(tiles, b.splits_), 256, 0, stream>>>(f, s.tiles, s.partials,
                                                                        b.splits_);
        tile_finalize_kernel<<<(tiles + 127) / 128, 128, 0, stream>>>(
            s.tiles, s.partials, tiles, b.splits_, DetectParams::kClipSigma);
      }
    }
    sigma_floor_kernel<<<1, 256, 0, stream>>>(s.tiles, tiles, s.sigma_floor);
    subtract_kernel<<<grid, block, 0, stream>>>(f, s.tiles);
    STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  }
  const bool sigma_units = p.threshold_mode == DetectThreshold::Sigma;
  const auto threshold = static_cast<float>(p.threshold);
  if (p.filter == DetectFilter::None) {
    mask_kernel<0><<<grid, block, 0, stream>>>(f, s.tiles, s.sigma_floor, s.taps, 0, b.norm_,
                                               sigma_units, threshold);
  } else if (b.radius_ == 1) {
    mask_kernel<1><<<grid, block, 0, stream>>>(f, s.tiles, s.sigma_floor, s.taps, 1, b.norm_,
                                               sigma_units, threshold);
  } else {
    mask_kernel<-1><<<grid, block, 0, stream>>>(f, s.tiles, s.sigma_floor, s.taps, b.radius_,
                                                b.norm_, sigma_units, threshold);
  }
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  STARSIFT_CUDA_TRY(launch_labels(f.mask, static_cast<std::ptrdiff_t>(f.mask_pitch), w, h,
                                  p.connectivity, f.labels,
                                  static_cast<std::ptrdiff_t>(f.label_pitch), s.components,
                                  {b.label_scratch_.data(), b.label_scratch_bytes_}, stream));
  auto* npix = reinterpret_cast<std::uint32_t*>(b.npix_.data());
  auto* kept = reinterpret_cast<std::uint32_t*>(b.kept_.data());
  auto* sums = reinterpret_cast<DeviceSums*>(b.sums_.data());
  STARSIFT_CUDA_TRY(cudaMemsetAsync(npix, 0, b.components_ * sizeof(std::uint32_t), stream));
  const long long runs = static_cast<long long>((w + kRun - 1) / kRun) * h;
  const int run_blocks = static_cast<int>((runs + 255) / 256);
  count_kernel<<<run_blocks, 256, 0, stream>>>(f, npix);
  const auto min_area = static_cast<std::uint32_t>(p.min_area);
  kept_flags_kernel<<<static_cast<int>((b.components_ + 255) / 256), 256, 0, stream>>>(
      npix, kept, b.components_, min_area);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  std::size_t temp = b.scan_temp_bytes_;
  STARSIFT_CUDA_TRY(cub::DeviceScan::InclusiveSum(b.scan_temp_.data(), temp, kept, kept,
                                                  static_cast<int>(b.components_), stream));
  sums_init_kernel<<<(b.max_objects_ + 127) / 128, 128, 0, stream>>>(sums, b.max_objects_);
  sums_kernel<<<run_blocks, 256, 0, stream>>>(f, s.tiles, s.sigma_floor, npix, kept, min_area,
                                              static_cast<std::uint32_t>(b.max_objects_), sums);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  switch (p.output) {
    case DetectOutput::Input:
      STARSIFT_CUDA_TRY(cudaMemcpy2DAsync(out.data, out.stride, in.data, in.stride, in.row_bytes(),
                                          h, cudaMemcpyDeviceToDevice, stream));
      break;
    case DetectOutput::Labels:
      labels_out_kernel<<<grid, block, 0, stream>>>(f, npix, kept, min_area, out);
      break;
    case DetectOutput::Overlay:
      overlay_kernel<<<grid, block, 0, stream>>>(f, s.tiles, s.sigma_floor, out);
      boxes_kernel<<<b.max_objects_, 128, 0, stream>>>(
          sums, kept, b.components_, static_cast<std::uint32_t>(b.max_objects_), out);
      break;
  }
  return cudaPeekAtLastError();
}

cudaError_t launch_detect_catalogue(const DetectParams& p, DetectBuffers& b, void* result,
                                    cudaStream_t stream) {
  if (p.max_objects != b.max_objects_) return cudaErrorInvalidValue;
  const auto* kept = reinterpret_cast<const std::uint32_t*>(b.kept_.data());
  const auto* sums = reinterpret_cast<const DeviceSums*>(b.sums_.data());
  catalogue_kernel<<<(b.max_objects_ + 127) / 128, 128, 0, stream>>>(
      sums, kept, b.components_, static_cast<std::uint32_t>(b.max_objects_), b.shape_.width,
      b.shape_.height, static_cast<std::byte*>(result));
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
