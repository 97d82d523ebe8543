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
//   1. tile_union: a warp unites a 32x32 tile in shared memory, a lane a row: two 16-byte loads
//      give the row's mask bits, each run of set bits is one node (the row's horizontal edges
//      without an atomic), and the edges to the row above, found by bit operations, are united
//      between run starts with shared atomicMin. Writes each foreground pixel's tile root, and a
//      bit per tile root.
//   2. border_union: the edges that cross tile borders, united in global memory, the finds
//      halving the paths they walk.
//   3. mark_roots: a thread per word of 32 indices; only tile roots can be roots. Each tile root
//      finds its root, keeps its bit if it is its own root, and otherwise points straight at
//      it. Writes the root count per word.
//   4. cub::DeviceScan::InclusiveSum over the counts: roots before each word.
//   5. relabel: each foreground pixel's root (parent of its parent), its dense id from the root
//      bits and the scan; 4 neighbouring pixels in each of 4 rows a thread, a word of mask
//      bytes and a 16-byte store of labels a row, so that enough loads are in flight.
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

#include "cuda/common/rows_aligned.hpp"
#include "cuda/detect/labels.cuh"

namespace starsift::cuda {

namespace {

constexpr int kTile = 32;        // tile side: a lane a tile row, a warp a tile, one word a row
constexpr int kTileWarps = 4;    // tiles of a tile_union block, side by side
constexpr int kBorderTiles = 4;  // tiles per border_union block (one warp each)
constexpr int kFlatThreads = 256;

struct Frame {
  const std::uint8_t* mask;
  std::ptrdiff_t mask_stride;
  int width;
  int height;
  int pitch;   // index rows: width rounded up to kTile
  bool words;  // mask rows 16-byte aligned: tile rows read as two 16-byte words
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

// The 32 mask bytes of a tile row as bits (bit c: pixel x0 + c), 0 past the frame. Read as two
// 16-byte words where the row allows it (f.words: the rows 16-byte aligned, and the tile inside
// the stride), else a byte at a time.
__device__ __forceinline__ std::uint32_t row_bits(const Frame& f, int x0, int y) {
  if (y >= f.height) return 0u;
  const std::uint8_t* row = f.mask + y * f.mask_stride + x0;
  std::uint32_t bits = 0;
  if (f.words && x0 + kTile <= f.mask_stride) {
    const uint4 lo = __ldg(reinterpret_cast<const uint4*>(row));
    const uint4 hi = __ldg(reinterpret_cast<const uint4*>(row) + 1);
    // Each word's 4 bytes as 4 bits: 0x01 for a non-zero byte, gathered into the top byte by one
    // multiplication (the lower bytes' partial sums stay below 16, so nothing carries).
    const auto nibble = [](unsigned int w) {
      return ((__vcmpne4(w, 0u) & 0x01010101u) * 0x01020408u) >> 24;
    };
    bits = nibble(lo.x) | nibble(lo.y) << 4 | nibble(lo.z) << 8 | nibble(lo.w) << 12 |
           nibble(hi.x) << 16 | nibble(hi.y) << 20 | nibble(hi.z) << 24 | nibble(hi.w) << 28;
  } else {
    for (int c = 0; c < kTile && x0 + c < f.width; ++c) bits |= (row[c] != 0 ? 1u : 0u) << c;
  }
  const int inside = f.width - x0;
  return inside < kTile ? bits & ((1u << inside) - 1u) : bits;
}

// The first column of the run of set bits that holds column c.
__device__ __forceinline__ int run_start(std::uint32_t bits, int c) {
  const std::uint32_t gaps = ~bits & ((1u << c) - 1u);
  return gaps ? 32 - __clz(gaps) : 0;
}

// A warp a 32x32 tile, lane r its row r. The row's mask bits come from two 16-byte loads; each
// run of set bits is one node, at its first pixel. The edges to the row above are the unions
// the pixel-by-pixel rules ask for (an edge implied by a left and an upper-left neighbour is
// skipped), found for the whole row by bit operations and united between run starts with
// shared atomicMin. Then each run start points at its root, and the warp writes each foreground
// pixel's root a tile row at a time (coalesced), and each row's word of root bits.
template <bool kEight>
__global__ void __launch_bounds__(kTile* kTileWarps)
    tile_union(Frame f, std::uint32_t* parent, std::uint32_t* tile_root_bits) {
  __shared__ std::uint32_t nodes[kTileWarps][kTile * kTile];  // index r * kTile + column
  std::uint32_t* node = nodes[threadIdx.y];
  const int lane = static_cast<int>(threadIdx.x);
  const int x0 =
      (static_cast<int>(blockIdx.x) * kTileWarps + static_cast<int>(threadIdx.y)) * kTile;
  const int y0 = static_cast<int>(blockIdx.y) * kTile;
  if (x0 >= f.width) return;  // the whole warp
  const std::uint32_t b = row_bits(f, x0, y0 + lane);
  const std::uint32_t up_row = __shfl_up_sync(~0u, b, 1);
  const std::uint32_t a = lane > 0 ? up_row : 0u;
  const std::uint32_t base = static_cast<std::uint32_t>(lane) * kTile;
  for (std::uint32_t starts = b & ~(b << 1); starts; starts &= starts - 1) {
    const std::uint32_t c = __ffs(starts) - 1;
    node[base + c] = base + c;
  }
  __syncwarp();
  // Pixel c of this row joins the pixel above unless its left and upper-left neighbours are
  // both on (then the row above's run already reaches it through them): the first pixel of
  // each stretch where both rows are on. With 8 connectivity, where the pixel above is off:
  // the upper-left one unless the left one is on, and the upper-right one.
  const std::uint32_t both = b & a;
  const auto join = [&](std::uint32_t edges, int dx) {
    for (; edges; edges &= edges - 1) {
      const int c = __ffs(edges) - 1;
      unite<false>(node, base + run_start(b, c), base - kTile + run_start(a, c + dx));
    }
  };
  join(both & ~(both << 1), 0);
  if (kEight) {
    join(b & ~a & (a << 1) & ~(b << 1), -1);
    join(b & ~a & (a >> 1), 1);
  }
  __syncwarp();
  // Each run start points at its root: a find that lands on itself is a tile root.
  std::uint32_t roots = 0;
  for (std::uint32_t starts = b & ~(b << 1); starts; starts &= starts - 1) {
    const std::uint32_t c = __ffs(starts) - 1;
    const std::uint32_t root = find(node, base + c);
    if (root == base + c) roots |= 1u << c;
    // Lowers the parent to an ancestor, so other lanes' finds still end; an atomic, as the
    // unions' writes, beside those finds' reads.
    atomicMin(node + base + c, root);
  }
  __syncwarp();
  const int y = y0 + lane;
  if (y < f.height) {
    tile_root_bits[(static_cast<std::uint32_t>(y) * f.pitch + x0) / 32] = roots;
  }
  for (int r = 0; r < kTile && y0 + r < f.height; ++r) {
    const std::uint32_t bits = __shfl_sync(~0u, b, r);
    if (!(bits >> lane & 1u)) continue;
    const std::uint32_t root = node[r * kTile + run_start(bits, lane)];
    parent[static_cast<std::uint32_t>(y0 + r) * f.pitch + x0 + lane] =
        static_cast<std::uint32_t>(y0 + root / kTile) * f.pitch + x0 + root % kTile;
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

// A thread takes 4 neighbouring pixels of a row in each of kRelabelRows rows: their mask bytes
// are one 4-byte load and their labels one 16-byte store where the rows allow it (f.words,
// labels_words), and the loads of all its rows (mask words, then parents, then their parents)
// are in flight together, which a pass of little arithmetic per pixel needs to keep the memory
// busy.
constexpr int kRelabelRows = 4;
constexpr int kRelabelWarps = 8;

__global__ void __launch_bounds__(32 * kRelabelWarps)
    relabel(Frame f, const std::uint32_t* __restrict__ parent,
            const std::uint32_t* __restrict__ root_bits,
            const std::uint32_t* __restrict__ roots_through, std::uint32_t words,
            std::uint32_t* __restrict__ labels, std::ptrdiff_t label_stride, bool labels_words,
            bool zero_background, std::uint32_t* count) {
  const int x0 = (static_cast<int>(blockIdx.x) * 32 + static_cast<int>(threadIdx.x)) * 4;
  const int y0 =
      (static_cast<int>(blockIdx.y) * kRelabelWarps + static_cast<int>(threadIdx.y)) * kRelabelRows;
  if (count && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0)
    *count = roots_through[words - 1];
  if (x0 >= f.width) return;
  const int n = min(f.width - x0, 4);  // pixels of the 4 in the frame
  std::uint32_t on[kRelabelRows];      // byte k: pixel x0 + k is foreground
#pragma unroll
  for (int r = 0; r < kRelabelRows; ++r) {
    const int y = y0 + r;
    on[r] = 0;
    if (y >= f.height) continue;
    const std::uint8_t* row = f.mask + y * f.mask_stride + x0;
    if (f.words && n == 4) {
      on[r] = __vcmpne4(__ldg(reinterpret_cast<const unsigned int*>(row)), 0u);
    } else {
      for (int k = 0; k < n; ++k) on[r] |= (row[k] != 0 ? 0xffu : 0u) << (8 * k);
    }
  }
  std::uint32_t node[kRelabelRows][4];
#pragma unroll
  for (int r = 0; r < kRelabelRows; ++r) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      node[r][k] = on[r] >> (8 * k) & 1u
                       ? parent[static_cast<std::uint32_t>(y0 + r) * f.pitch + x0 + k]
                       : 0u;
    }
  }
#pragma unroll
  for (int r = 0; r < kRelabelRows; ++r) {
#pragma unroll
    for (int k = 0; k < 4; ++k) node[r][k] = on[r] >> (8 * k) & 1u ? parent[node[r][k]] : 0u;
  }
#pragma unroll
  for (int r = 0; r < kRelabelRows; ++r) {
    const int y = y0 + r;
    if (y >= f.height) break;
    if (!zero_background && on[r] == 0) continue;  // LabelBackground::Keep: nothing to write
    std::uint32_t id[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      id[k] = 0;
      if (on[r] >> (8 * k) & 1u) {
        // Roots up to and including the root's word, less those at or after the root in it.
        const std::uint32_t word = node[r][k] / 32;
        id[k] = roots_through[word] - __popc(root_bits[word] >> (node[r][k] % 32)) + 1;
      }
    }
    std::uint32_t* out = labels + y * label_stride + x0;
    if (labels_words && n == 4) {
      *reinterpret_cast<uint4*>(out) = make_uint4(id[0], id[1], id[2], id[3]);
    } else {
      for (int k = 0; k < n; ++k) out[k] = id[k];
    }
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
                         bool zero_background, std::uint32_t* count, const Scratch& s,
                         cudaStream_t stream) {
  const dim3 tiles((f.width + kTile - 1) / kTile, (f.height + kTile - 1) / kTile);
  tile_union<kEight><<<dim3((tiles.x + kTileWarps - 1) / kTileWarps, tiles.y),
                       dim3(kTile, kTileWarps), 0, stream>>>(f, s.parent, s.root_bits);
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
  const int span_x = 32 * 4, span_y = kRelabelWarps * kRelabelRows;
  const dim3 grid((f.width + span_x - 1) / span_x, (f.height + span_y - 1) / span_y);
  const bool labels_words = rows_aligned(labels, label_stride * 4, 16);
  relabel<<<grid, dim3(32, kRelabelWarps), 0, stream>>>(f, s.parent, s.root_bits, s.roots_through,
                                                        words, labels, label_stride, labels_words,
                                                        zero_background, count);
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
                          cudaStream_t stream, LabelSchedule schedule, LabelBackground background) {
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
  const bool words = rows_aligned(mask, mask_stride, 16);
  const Frame f{mask, mask_stride, width, height, index_pitch(width), words};
  const bool zero = background == LabelBackground::Zero;
  return connectivity == Connectivity::Eight
             ? launch_pixel<true>(f, labels, label_stride, zero, count, s, stream)
             : launch_pixel<false>(f, labels, label_stride, zero, count, s, stream);
}

}  // namespace starsift::cuda
