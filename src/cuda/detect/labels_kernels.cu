// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA connected-component labelling: one union-find tree node per pixel, the same numbering
// as label_reference().
//
// Every tree keeps parent <= index (unions hang the larger root under the smaller with
// atomicMin), so a component's root is its smallest index, its first pixel in raster order:
// marking roots and counting them in raster order gives the dense ids. Indices run over rows
// of `pitch` = width rounded up to 32, so the 32 pixels of a warp are one 32-bit word of root
// bits and the order is still raster order.
//
// Measured on an H100 (bench/results/labels/, dense ids and the count included, masks and labels
// rotated beyond the L2): 4096^2 star field 0.188 ms with 4 connectivity, 0.206 ms with 8; one
// frame-filling object 0.26 ms; random 50 % with 8 connectivity, one percolating component,
// 1.10 ms, the slowest case (its border unions contend on one root).
//
// Passes, no host loop:
//   1. tile_union: a block unites a 32x32 tile in shared memory. A warp ballot gives a tile row's
//      mask bits; each pixel points at the start of its run (the row's horizontal edges without
//      an atomic), then the edges to the row above are united with shared atomicMin. Writes each
//      foreground pixel's tile root, and a bit per tile root.
//   2. border_union: the edges that cross tile borders, united in global memory, the finds
//      halving the paths they walk.
//   3. mark_roots: a thread per word of 32 indices; only tile roots can be roots. Each tile root
//      finds its root, keeps its bit if it is its own root, and otherwise points straight at
//      it. Writes the root count per word.
//   4. cub::DeviceScan::InclusiveSum over the counts: roots before each word.
//   5. relabel: each foreground pixel's root (parent of its parent), its dense id from the root
//      bits and the scan; 8 pixels a thread so that enough loads are in flight.
//
// Edges implied by others are not united: a pixel whose left neighbour and upper-left neighbour
// are both foreground is already joined to the pixel above through them (and, with 8
// connectivity, the corner edges are implied whenever the pixel above is foreground). So a
// frame-filling object costs one union per tile row and a few per tile border, not one per
// pixel on one root. Edges leaving the tile on the left are never skipped inside the tile, so
// every skipped edge is implied by edges earlier in raster order or united unconditionally.
#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "cuda/detect/labels.cuh"

namespace starsift::cuda {

namespace {

constexpr int kTile = 32;        // tile side: a warp spans one tile row, one ballot its mask bits
constexpr int kTileRows = 8;     // threads along y in a tile block: kTile / kTileRows rows each
constexpr int kBorderTiles = 4;  // tiles per border_union block (one warp each)
constexpr int kFlatThreads = 256;

struct Frame {
  const std::uint8_t* mask;
  std::ptrdiff_t mask_stride;
  int width;
  int height;
  int pitch;  // index rows: width rounded up to kTile
};

__device__ __forceinline__ bool fg(const Frame& f, int x, int y) {
  return x >= 0 && y >= 0 && x < f.width && y < f.height && f.mask[y * f.mask_stride + x] != 0;
}

// Reads through volatile: other threads lower parents while a thread walks its path.
__device__ __forceinline__ std::uint32_t load(const std::uint32_t* p) {
  return *static_cast<const volatile std::uint32_t*>(p);
}

__device__ std::uint32_t find(const std::uint32_t* parent, std::uint32_t a) {
  std::uint32_t p = load(parent + a);
  while (p != a) {
    a = p;
    p = load(parent + a);
  }
  return a;
}

// Root of `a`, pointing every second node of the path at its grandparent. The plain store is
// safe beside concurrent unions: it only writes non-roots (a node stops being a root for good),
// and an atomicMin it overwrites on a non-root was a failed link that its union retries.
__device__ std::uint32_t find_halving(std::uint32_t* parent, std::uint32_t a) {
  while (true) {
    const std::uint32_t p = load(parent + a);
    if (p == a) return a;
    const std::uint32_t g = load(parent + p);
    if (g == p) return p;
    *static_cast<volatile std::uint32_t*>(parent + a) = g;
    a = g;
  }
}

// Joins the trees of `a` and `b` (Playne & Hawick): hang the larger root under the smaller;
// when the larger was linked elsewhere meanwhile, atomicMin returns its new parent and the
// union goes on from there, so no link is lost. In global memory the finds halve the paths
// they walk, so the chains a percolating or frame-filling component builds across tiles stay
// short; a tile's chains in shared memory are short anyway (at most a tile row's run starts),
// and there plain finds keep the reads and writes of other threads to atomics alone.
template <bool kHalving>
__device__ void unite(std::uint32_t* parent, std::uint32_t a, std::uint32_t b) {
  while (true) {
    a = kHalving ? find_halving(parent, a) : find(parent, a);
    b = kHalving ? find_halving(parent, b) : find(parent, b);
    if (a == b) return;
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t old = atomicMin(parent + b, a);
    if (old == b) return;
    b = old;
  }
}

// ---- 1. Tiles in shared memory --------------------------------------------------------------

template <bool kEight>
__global__ void __launch_bounds__(kTile* kTileRows)
    tile_union(Frame f, std::uint32_t* parent, std::uint32_t* tile_root_bits) {
  constexpr int kRows = kTile / kTileRows;
  __shared__ std::uint32_t node[kTile * kTile];  // tile-local parents, index r * kTile + lane
  __shared__ std::uint32_t row_bits[kTile];      // mask bits of each tile row
  const int lane = threadIdx.x;
  const int x = blockIdx.x * kTile + lane;
  const int y0 = blockIdx.y * kTile;
  std::uint32_t bits[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int r = threadIdx.y + k * kTileRows;
    const std::uint32_t b = __ballot_sync(~0u, fg(f, x, y0 + r));
    bits[k] = b;
    if (lane == 0) row_bits[r] = b;
    // The start of this pixel's run: the lowest lane from which every bit up to here is set.
    const std::uint32_t gaps = ~b & ((1u << lane) - 1u);
    node[r * kTile + lane] = r * kTile + (gaps ? 32 - __clz(gaps) : 0);
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int r = threadIdx.y + k * kTileRows;
    const std::uint32_t b = bits[k];
    if (r == 0 || !(b >> lane & 1u)) continue;
    const std::uint32_t above = row_bits[r - 1];
    const bool up = above >> lane & 1u;
    const bool left = lane > 0 && (b >> (lane - 1) & 1u);
    const bool upleft = lane > 0 && (above >> (lane - 1) & 1u);
    const bool upright = lane < kTile - 1 && (above >> (lane + 1) & 1u);
    const std::uint32_t i = r * kTile + lane;
    if (up) {
      if (!(left && upleft)) unite<false>(node, i, i - kTile);
    } else if (kEight) {
      if (upleft && !left) unite<false>(node, i, i - kTile - 1);
      if (upright) unite<false>(node, i, i - kTile + 1);
    }
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int r = threadIdx.y + k * kTileRows;
    const int y = y0 + r;
    const bool on = bits[k] >> lane & 1u;
    const std::uint32_t i = r * kTile + lane;
    const std::uint32_t root = on ? find(node, i) : 0;
    const std::uint32_t roots = __ballot_sync(~0u, on && root == i);
    if (y >= f.height) continue;
    const std::uint32_t index = static_cast<std::uint32_t>(y) * f.pitch + x;
    if (on) {
      parent[index] = static_cast<std::uint32_t>(y0 + root / kTile) * f.pitch + blockIdx.x * kTile +
                      root % kTile;
    }
    if (lane == 0) tile_root_bits[index / 32] = roots;
  }
}

// ---- 2. Edges across tile borders -----------------------------------------------------------

// The same edge rules as tile_union, for the edges with one end outside the tile: the top row's
// edges to the row above, the left column's to the column on the left, and (8 connectivity) the
// right column's up-right edge. Lane i takes top-row pixel i and column pixel i.
template <bool kEight>
__global__ void __launch_bounds__(kTile* kBorderTiles)
    border_union(Frame f, std::uint32_t* parent) {
  const int i = threadIdx.x;
  const int x0 = (blockIdx.x * kBorderTiles + threadIdx.y) * kTile;
  const int y0 = blockIdx.y * kTile;
  if (x0 >= f.width) return;
  auto index = [&](int x, int y) { return static_cast<std::uint32_t>(y) * f.pitch + x; };
  if (y0 > 0) {
    const int x = x0 + i, y = y0;
    if (fg(f, x, y)) {
      const bool up = fg(f, x, y - 1), left = fg(f, x - 1, y);
      const bool upleft = fg(f, x - 1, y - 1), upright = fg(f, x + 1, y - 1);
      if (up) {
        if (!(i > 0 && left && upleft)) unite<true>(parent, index(x, y), index(x, y - 1));
      } else if (kEight) {
        if (upleft && !left) unite<true>(parent, index(x, y), index(x - 1, y - 1));
        if (upright) unite<true>(parent, index(x, y), index(x + 1, y - 1));
      }
    }
  }
  const int y = y0 + i;
  if (x0 > 0 && fg(f, x0, y)) {
    const bool left = fg(f, x0 - 1, y), up = fg(f, x0, y - 1), upleft = fg(f, x0 - 1, y - 1);
    // Below the top row the pixel above is joined inside the tile, so with the upper-left pixel
    // also on, the row above's own border edge already joins the two.
    if (left && !(i > 0 && up && upleft)) unite<true>(parent, index(x0, y), index(x0 - 1, y));
    if (kEight && i > 0 && !up && upleft && !left)
      unite<true>(parent, index(x0, y), index(x0 - 1, y - 1));
  }
  const int xr = x0 + kTile - 1;
  if (kEight && i > 0 && xr + 1 < f.width && fg(f, xr, y)) {
    if (!fg(f, xr, y - 1) && fg(f, xr + 1, y - 1))
      unite<true>(parent, index(xr, y), index(xr + 1, y - 1));
  }
}

// ---- 3. Roots -------------------------------------------------------------------------------

// One thread per word of 32 indices (pitch is a multiple of 32): only tile roots can be roots.
// Each tile root walks to its root and then points straight at it. Every parent value is a tile
// root (the tile pass writes tile roots, unions write roots, halving copies parents), so
// afterwards any pixel's root is parent[parent[p]]: two loads, no loop, in relabel. Only the
// owner writes a tile root's entry here, and walkers reading it meanwhile see an ancestor
// either way.
__global__ void __launch_bounds__(kFlatThreads)
    mark_roots(std::uint32_t* parent, std::uint32_t* root_bits, std::uint32_t* root_counts,
               std::uint32_t words) {
  const std::uint32_t word = blockIdx.x * kFlatThreads + threadIdx.x;
  if (word >= words) return;
  std::uint32_t tile_roots = root_bits[word];
  std::uint32_t roots = 0;
  while (tile_roots) {
    const int bit = __ffs(tile_roots) - 1;
    tile_roots &= tile_roots - 1;
    const std::uint32_t p = word * 32 + bit;
    const std::uint32_t root = find(parent, p);
    if (root == p) {
      roots |= 1u << bit;
    } else {
      *static_cast<volatile std::uint32_t*>(parent + p) = root;
    }
  }
  root_bits[word] = roots;
  root_counts[word] = __popc(roots);
}

// ---- 5. Dense ids ---------------------------------------------------------------------------

// A thread takes kRelabelCols pixels of a row, 32 apart (each access coalesced across the warp),
// in kRelabelRows rows: its mask loads, then its parent loads, are all in flight at once, which
// a pass of little arithmetic per pixel needs to keep the memory busy.
constexpr int kRelabelCols = 4;
constexpr int kRelabelRows = 2;

__global__ void __launch_bounds__(kTile* kTileRows)
    relabel(Frame f, const std::uint32_t* __restrict__ parent,
            const std::uint32_t* __restrict__ root_bits,
            const std::uint32_t* __restrict__ roots_through, std::uint32_t words,
            std::uint32_t* __restrict__ labels, std::ptrdiff_t label_stride, std::uint32_t* count) {
  constexpr int kPixels = kRelabelCols * kRelabelRows;
  const int x0 = blockIdx.x * (kTile * kRelabelCols) + threadIdx.x;
  const int y0 = blockIdx.y * (kTileRows * kRelabelRows) + threadIdx.y;
  if (count && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0)
    *count = roots_through[words - 1];
  bool on[kPixels];
  std::uint32_t node[kPixels];
#pragma unroll
  for (int k = 0; k < kPixels; ++k) {
    const int x = x0 + (k % kRelabelCols) * kTile, y = y0 + (k / kRelabelCols) * kTileRows;
    on[k] = fg(f, x, y);
  }
#pragma unroll
  for (int k = 0; k < kPixels; ++k) {
    const int x = x0 + (k % kRelabelCols) * kTile, y = y0 + (k / kRelabelCols) * kTileRows;
    node[k] = on[k] ? parent[static_cast<std::uint32_t>(y) * f.pitch + x] : 0;
  }
#pragma unroll
  for (int k = 0; k < kPixels; ++k) node[k] = on[k] ? parent[node[k]] : 0;
#pragma unroll
  for (int k = 0; k < kPixels; ++k) {
    const int x = x0 + (k % kRelabelCols) * kTile, y = y0 + (k / kRelabelCols) * kTileRows;
    if (x >= f.width || y >= f.height) continue;
    std::uint32_t id = 0;
    if (on[k]) {
      // Roots up to and including the root's word, less those at or after the root in it.
      const std::uint32_t word = node[k] / 32;
      id = roots_through[word] - __popc(root_bits[word] >> (node[k] % 32)) + 1;
    }
    labels[y * label_stride + x] = id;
  }
}

// ---- Scratch --------------------------------------------------------------------------------

// The launcher's sub-buffers, carved from one allocation (each 256-byte aligned).
struct Scratch {
  std::uint32_t* parent = nullptr;         // pitch * height: each pixel's tree parent
  std::uint32_t* root_bits = nullptr;      // words: tile roots (pass 1), then roots (pass 3)
  std::uint32_t* root_counts = nullptr;    // words: roots per word
  std::uint32_t* roots_through = nullptr;  // words: inclusive scan of root_counts
  void* scan_temp = nullptr;               // CUB's temporary storage for that scan
  std::size_t scan_bytes = 0;
  std::size_t total = 0;  // bytes of all of it
};

constexpr std::size_t kAlign = 256;

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

int index_pitch(int width) {
  return static_cast<int>(round_up(width, kTile));
}

// The one size table: with base == nullptr only the sizes (and CUB's, from its size query).
cudaError_t carve(void* base, int width, int height, Scratch& s) {
  const std::size_t indices = static_cast<std::size_t>(index_pitch(width)) * height;
  const std::size_t words = indices / 32;
  cudaError_t status = cub::DeviceScan::InclusiveSum(
      nullptr, s.scan_bytes, static_cast<std::uint32_t*>(nullptr),
      static_cast<std::uint32_t*>(nullptr), static_cast<std::int64_t>(words));
  if (status != cudaSuccess) return status;
  const std::size_t sizes[] = {
      indices * 4,   // parent
      words * 4,     // root_bits
      words * 4,     // root_counts
      words * 4,     // roots_through
      s.scan_bytes,  // scan_temp
  };
  void** slots[] = {reinterpret_cast<void**>(&s.parent), reinterpret_cast<void**>(&s.root_bits),
                    reinterpret_cast<void**>(&s.root_counts),
                    reinterpret_cast<void**>(&s.roots_through), &s.scan_temp};
  std::size_t offset = 0;
  for (std::size_t k = 0; k < std::size(sizes); ++k) {
    *slots[k] = base ? static_cast<std::byte*>(base) + offset : nullptr;
    offset += round_up(sizes[k], kAlign);
  }
  s.total = offset;
  return cudaSuccess;
}

bool fits(int width, int height) {
  return width >= 0 && height >= 0 &&
         static_cast<std::uint64_t>(index_pitch(width)) * static_cast<std::uint64_t>(height) <=
             (std::uint64_t{1} << 31);
}

template <bool kEight>
cudaError_t launch_pixel(const Frame& f, std::uint32_t* labels, std::ptrdiff_t label_stride,
                         std::uint32_t* count, const Scratch& s, cudaStream_t stream) {
  const dim3 tiles((f.width + kTile - 1) / kTile, (f.height + kTile - 1) / kTile);
  tile_union<kEight><<<tiles, dim3(kTile, kTileRows), 0, stream>>>(f, s.parent, s.root_bits);
  cudaError_t status = cudaPeekAtLastError();
  if (status != cudaSuccess) return status;
  if (tiles.x > 1 || tiles.y > 1) {
    const dim3 grid((tiles.x + kBorderTiles - 1) / kBorderTiles, tiles.y);
    border_union<kEight><<<grid, dim3(kTile, kBorderTiles), 0, stream>>>(f, s.parent);
    if ((status = cudaPeekAtLastError()) != cudaSuccess) return status;
  }
  const std::uint32_t indices = static_cast<std::uint32_t>(f.pitch) * f.height;
  const std::uint32_t words = indices / 32;
  mark_roots<<<(words + kFlatThreads - 1) / kFlatThreads, kFlatThreads, 0, stream>>>(
      s.parent, s.root_bits, s.root_counts, words);
  if ((status = cudaPeekAtLastError()) != cudaSuccess) return status;
  std::size_t scan_bytes = s.scan_bytes;
  status = cub::DeviceScan::InclusiveSum(s.scan_temp, scan_bytes, s.root_counts, s.roots_through,
                                         static_cast<std::int64_t>(words), stream);
  if (status != cudaSuccess) return status;
  const int span_x = kTile * kRelabelCols, span_y = kTileRows * kRelabelRows;
  const dim3 grid((f.width + span_x - 1) / span_x, (f.height + span_y - 1) / span_y);
  relabel<<<grid, dim3(kTile, kTileRows), 0, stream>>>(f, s.parent, s.root_bits, s.roots_through,
                                                       words, labels, label_stride, count);
  return cudaPeekAtLastError();
}

}  // namespace

std::string_view to_string(LabelSchedule schedule) noexcept {
  switch (schedule) {
    case LabelSchedule::Auto:
      return "auto";
    case LabelSchedule::Pixel:
      return "pixel";
  }
  return "unknown";
}

bool label_schedule_supports(LabelSchedule schedule, Connectivity connectivity) noexcept {
  const bool known = connectivity == Connectivity::Four || connectivity == Connectivity::Eight;
  return known && (schedule == LabelSchedule::Auto || schedule == LabelSchedule::Pixel);
}

std::size_t label_scratch_bytes(int width, int height) {
  if (!fits(width, height)) return 0;
  Scratch s;
  if (carve(nullptr, width, height, s) != cudaSuccess) return 0;
  return s.total;
}

cudaError_t launch_labels(const std::uint8_t* mask, std::ptrdiff_t mask_stride, int width,
                          int height, Connectivity connectivity, std::uint32_t* labels,
                          std::ptrdiff_t label_stride, std::uint32_t* count, LabelScratch scratch,
                          cudaStream_t stream, LabelSchedule schedule) {
  if (!fits(width, height) || !label_schedule_supports(schedule, connectivity)) {
    return cudaErrorInvalidValue;
  }
  if (width == 0 || height == 0) {
    return count ? cudaMemsetAsync(count, 0, sizeof(std::uint32_t), stream) : cudaSuccess;
  }
  if (!mask || !labels || mask_stride < width || label_stride < width) {
    return cudaErrorInvalidValue;
  }
  Scratch s;
  cudaError_t status = carve(scratch.data, width, height, s);
  if (status != cudaSuccess) return status;
  if (!scratch.data || scratch.bytes < s.total) return cudaErrorInvalidValue;
  const Frame f{mask, mask_stride, width, height, index_pitch(width)};
  return connectivity == Connectivity::Eight
             ? launch_pixel<true>(f, labels, label_stride, count, s, stream)
             : launch_pixel<false>(f, labels, label_stride, count, s, stream);
}

}  // namespace starsift::cuda
