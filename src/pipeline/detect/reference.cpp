// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "pipeline/detect/background_mesh.hpp"
#include "pipeline/detect/blend.hpp"
#include "pipeline/detect/labels.hpp"
#include "pipeline/error.hpp"

namespace starsift {

namespace {

float sample_at(ConstImageView in, int x, int y) {
  switch (in.format) {
    case PixelFormat::Gray8:
      return static_cast<float>(in.row_as<std::uint8_t>(y)[x]);
    case PixelFormat::Gray16:
      return static_cast<float>(in.row_as<std::uint16_t>(y)[x]);
    case PixelFormat::Gray32F: {
      const float v = in.row_as<float>(y)[x];
      return std::isfinite(v) ? v : 0.0f;
    }
    default:
      return 0.0f;
  }
}

}  // namespace

DetectKernel detect_kernel(const DetectParams& params) {
  DetectKernel k;
  if (params.filter == DetectFilter::None) return k;
  if (params.filter == DetectFilter::Default) {
    k.radius = 1;
    k.taps = {1, 2, 1, 2, 4, 2, 1, 2, 1};
  } else {
    k.radius =
        std::min(DetectParams::kMaxFilterRadius, static_cast<int>(std::ceil(1.5 * params.fwhm)));
    const double s = params.fwhm / 2.354820045;
    for (int dy = -k.radius; dy <= k.radius; ++dy) {
      for (int dx = -k.radius; dx <= k.radius; ++dx) {
        k.taps.push_back(static_cast<float>(std::exp(-(dx * dx + dy * dy) / (2.0 * s * s))));
      }
    }
  }
  double sum = 0.0;
  for (float t : k.taps) sum += t;
  double sum2 = 0.0;
  for (float& t : k.taps) {
    t = static_cast<float>(t / sum);
    sum2 += static_cast<double>(t) * t;
  }
  k.norm = std::sqrt(sum2);
  return k;
}

double detect_sigma_floor(std::span<const ClippedStats> grid) {
  double floor = 0.0;
  for (const ClippedStats& s : grid) floor = std::max(floor, s.sigma);
  return floor > 0.0 ? floor * 1e-3 : 1e-6;
}

ClippedStats clipped_stats(std::vector<float>& values) {
  ClippedStats s;
  double lo = -HUGE_VAL, hi = HUGE_VAL;
  std::size_t previous = 0;
  for (int round = 0; round < DetectParams::kClipRounds; ++round) {
    double sum = 0.0, sum2 = 0.0;
    std::size_t n = 0;
    for (const float v : values) {
      if (v < lo || v > hi) continue;
      sum += v;
      sum2 += static_cast<double>(v) * v;
      ++n;
    }
    if (n == 0) break;
    s.mean = sum / n;
    s.sigma = std::sqrt(std::max(0.0, sum2 / n - s.mean * s.mean));
    if (n == previous) break;  // nothing more was clipped
    previous = n;
    lo = s.mean - DetectParams::kClipSigma * s.sigma;
    hi = s.mean + DetectParams::kClipSigma * s.sigma;
  }
  return s;
}

DetectState::DetectState(const DetectParams& params, const FrameShape& shape)
    : params_(params), shape_(shape) {
  params.validate_for(shape);
  kernel_ = detect_kernel(params);
  lines_ = LineChannel(params.line_length, kernel_);
  const int w = shape.width, h = shape.height;
  value_ = Plane(w, h);
  background_ = Plane(w, h);
  sigma_ = Plane(w, h);
  significance_ = Plane(w, h);
  residual_ = Plane(w, h);
  const std::size_t n = static_cast<std::size_t>(w) * h;
  mask_.assign(n, 0);
  labels_.assign(n, 0);
  parent_.reserve(n);
  sums_.reserve(1024);
  dense_.reserve(1024);
  tile_values_.reserve(static_cast<std::size_t>(params.mesh) * params.mesh);
}

void DetectState::set_params(const DetectParams& params) {
  params.validate_for(shape_);
  if (!detect_live_change(params_, params)) {
    throw Error("detect: output and max-objects need a new stage", "other parameters live");
  }
  const bool new_bank = line_bank_changes(params_, params);
  params_ = params;
  kernel_ = detect_kernel(params);
  if (new_bank) lines_ = LineChannel(params.line_length, kernel_);
}

void DetectState::load(ConstImageView in, ThreadPool& pool) {
  pool.parallel_for(shape_.height, [&](int begin, int end) {
    for (int y = begin; y < end; ++y) {
      float* row = value_.row(y);
      for (int x = 0; x < shape_.width; ++x) row[x] = sample_at(in, x, y);
    }
  });
}

void DetectState::estimate_background(ThreadPool& pool) {
  const int w = shape_.width, h = shape_.height;
  const DetectBackgroundPlan plan = detect_background_plan(params_, shape_);
  if (plan.background == DetectBackground::None) {
    background_.fill(plan.level);
    sigma_.fill(plan.noise);
    return;
  }
  const bool mesh = plan.background == DetectBackground::Mesh;
  const MeshAxis tx = mesh_axis(w, mesh ? params_.mesh : w);
  const MeshAxis ty = mesh_axis(h, mesh ? params_.mesh : h);
  grid_.resize(static_cast<std::size_t>(tx.count) * ty.count);
  for (int j = 0; j < ty.count; ++j) {
    for (int i = 0; i < tx.count; ++i) {
      tile_values_.clear();
      for (int y = ty.begin(j); y < ty.end(j); ++y) {
        const float* row = value_.row(y);
        tile_values_.insert(tile_values_.end(), row + tx.begin(i), row + tx.end(i));
      }
      grid_[static_cast<std::size_t>(j) * tx.count + i] = clipped_stats(tile_values_);
    }
  }
  // The blend in float from float tile values, as the CUDA kernels do it (see mesh_blend()).
  const auto floor = static_cast<float>(detect_sigma_floor(grid_));
  tile_mean_.resize(grid_.size());
  tile_sigma_.resize(grid_.size());
  for (std::size_t k = 0; k < grid_.size(); ++k) {
    tile_mean_[k] = static_cast<float>(grid_[k].mean);
    tile_sigma_[k] = static_cast<float>(grid_[k].sigma);
  }
  col_tile_.resize(w);
  col_weight_.resize(w);
  for (int x = 0; x < w; ++x) mesh_locate(tx, x, col_tile_[x], col_weight_[x]);
  pool.parallel_for(h, [&](int begin, int end) {
    for (int y = begin; y < end; ++y) {
      int j = 0;
      float wy = 0.0f;
      mesh_locate(ty, y, j, wy);
      float* bg = background_.row(y);
      float* sg = sigma_.row(y);
      for (int x = 0; x < w; ++x) {
        const int i = col_tile_[x];
        const float wx = col_weight_[x];
        bg[x] = mesh_blend(tx, ty, i, wx, j, wy, [&](int k) { return tile_mean_[k]; });
        const float s = mesh_blend(tx, ty, i, wx, j, wy, [&](int k) { return tile_sigma_[k]; });
        sg[x] = s > floor ? s : floor;
      }
    }
  });
}

void DetectState::filter_and_threshold(ThreadPool& pool) {
  const int w = shape_.width, h = shape_.height, r = kernel_.radius;
  const bool sigma_units = params_.threshold_mode == DetectThreshold::Sigma;
  const auto threshold = static_cast<float>(params_.threshold);
  const auto norm = static_cast<float>(kernel_.norm);
  const int side = 2 * r + 1;
  // value - background once a pixel: the filter reads each (2r + 1)^2 times, the same float.
  pool.parallel_for(h, [&](int begin, int end) {
    for (int y = begin; y < end; ++y) {
      const float* v = value_.row(y);
      const float* b = background_.row(y);
      float* d = residual_.row(y);
      for (int x = 0; x < w; ++x) d[x] = v[x] - b[x];
    }
  });
  pool.parallel_for(h, [&](int begin, int end) {
    for (int y = begin; y < end; ++y) {
      float* out = significance_.row(y);
      std::uint8_t* m = mask_.data() + static_cast<std::size_t>(y) * w;
      if (kernel_.taps.empty()) {
        std::copy_n(residual_.row(y), w, out);
      } else {
        // Float arithmetic in the CUDA kernel's order: each pixel's sum from 0, tap by tap row
        // by row, the taps outside the frame left out (they count as background, 0 above it).
        // Taken a tap at a time over the row, each pixel still adds the same terms in the same
        // order, and the loop over the row vectorises.
        std::fill_n(out, w, 0.0f);
        for (int dy = -r; dy <= r; ++dy) {
          const int yy = y + dy;
          if (yy < 0 || yy >= h) continue;
          const float* src = residual_.row(yy);
          for (int dx = -r; dx <= r; ++dx) {
            const float tap = kernel_.taps[static_cast<std::size_t>(dy + r) * side + dx + r];
            const int first = std::max(0, -dx), last = std::min(w, w - dx);
            for (int x = first; x < last; ++x) out[x] += tap * src[x + dx];
          }
        }
      }
      const float* sg = sigma_.row(y);
      for (int x = 0; x < w; ++x) {
        const float s = sigma_units ? out[x] / (sg[x] * norm) : out[x];
        out[x] = s;
        m[x] = s > threshold ? 1 : 0;
      }
    }
  });
}

DetectCounts DetectState::measure(std::span<DetectedObject> records) {
  const int w = shape_.width, h = shape_.height;
  const std::uint32_t components =
      label_reference(mask_.data(), w, w, h, params_.connectivity, labels_.data(), w, parent_);
  sums_.assign(components + 1, ObjectSums{});
  blend_peaks_.clear();
  const auto threshold = static_cast<float>(params_.threshold);
  const auto z_at = [this](int x, int y) { return blend_z(x, y); };
  for (int y = 0; y < h; ++y) {
    const std::uint32_t* l = labels_.data() + static_cast<std::size_t>(y) * w;
    for (int x = 0; x < w; ++x) {
      const std::uint32_t c = l[x];
      if (c == 0) continue;
      const float s = sigma_.at(x, y);
      add_pixel(sums_[c], x, y, residual_.at(x, y), s * s);
      // The merged flag's peaks (blend.hpp), kept whatever the object's size: known only at
      // the end.
      const float z = z_at(x, y);
      if (!blend::may_peak(z, threshold)) continue;
      const auto inside = [&](int nx, int ny) {
        return labels_[static_cast<std::size_t>(ny) * w + nx] == c;
      };
      if (blend::is_peak(x, y, z, w, h, z_at, inside)) blend_peaks_.push_back({c, x, y, z});
    }
  }
  mark_blends(components);
  // Objects below min-area are dropped; the others keep their raster order, numbered anew.
  dense_.assign(components + 1, 0);
  DetectCounts counts;
  std::uint32_t kept = 0;
  for (std::uint32_t c = 1; c <= components; ++c) {
    if (sums_[c].npix < static_cast<std::uint32_t>(params_.min_area)) continue;
    dense_[c] = ++kept;
    if (kept <= records.size()) {
      records[kept - 1] = finalize_object(sums_[c], kept, w, h);
      if (blend_merged_[c]) records[kept - 1].flags |= kObjectMerged;
      ++counts.objects;
    } else {
      ++counts.overflow;
    }
  }
  for (std::uint32_t& l : labels_) l = dense_[l];
  return counts;
}

float DetectState::blend_z(int x, int y) const {
  const float r = residual_.at(x, y);
  return params_.threshold_mode == DetectThreshold::Sigma ? r / sigma_.at(x, y) : r;
}

void DetectState::mark_blends(std::uint32_t components) {
  const auto threshold = static_cast<float>(params_.threshold);
  const auto min_area = static_cast<std::uint32_t>(params_.min_area);
  const int w = shape_.width;
  const auto z_at = [this](int x, int y) { return blend_z(x, y); };
  blend_merged_.assign(components + 1, 0);
  // Each peak of an examined object against the object's top: its peak pixel.
  for (const BlendPeak& p : blend_peaks_) {
    const ObjectSums& object = sums_[p.component];
    if (object.npix < min_area || object.npix > blend::kMaxArea) continue;
    if (blend_merged_[p.component] || (p.x == object.xpeak && p.y == object.ypeak)) continue;
    const auto inside = [&](int nx, int ny) {
      return labels_[static_cast<std::size_t>(ny) * w + nx] == p.component;
    };
    if (blend::separated(p.x, p.y, object.xpeak, object.ypeak,
                         blend::separating_level(p.z, threshold), z_at, inside)) {
      blend_merged_[p.component] = 1;
    }
  }
}

void DetectState::write_output(ConstImageView in, ImageView out,
                               std::span<const DetectedObject> records) {
  const int w = shape_.width, h = shape_.height;
  switch (params_.output) {
    case DetectOutput::Input:  // engines pass the input itself as `out` (keeps_frame())
      if (out.data == in.data) return;
      for (int y = 0; y < h; ++y) std::memcpy(out.row(y), in.row(y), in.row_bytes());
      return;
    case DetectOutput::Labels:
      for (int y = 0; y < h; ++y) {
        auto* row = out.row_as<std::uint16_t>(y);
        const std::uint32_t* l = labels_.data() + static_cast<std::size_t>(y) * w;
        for (int x = 0; x < w; ++x) row[x] = static_cast<std::uint16_t>(std::min(l[x], 65535u));
      }
      return;
    case DetectOutput::Overlay:
      // The significance from -2 to +10 sigma on 0..254; boxes at 255.
      for (int y = 0; y < h; ++y) {
        auto* row = out.row_as<std::uint8_t>(y);
        for (int x = 0; x < w; ++x) {
          const float r = residual_.at(x, y) / sigma_.at(x, y);
          const float v = std::clamp((r + 2.0f) * (254.0f / 12.0f), 0.0f, 254.0f);
          row[x] = static_cast<std::uint8_t>(std::lround(v));
        }
      }
      for (const DetectedObject& o : records) {
        for (int x = o.xmin; x <= o.xmax; ++x) {
          out.row_as<std::uint8_t>(o.ymin)[x] = 255;
          out.row_as<std::uint8_t>(o.ymax)[x] = 255;
        }
        for (int y = o.ymin; y <= o.ymax; ++y) {
          out.row_as<std::uint8_t>(y)[o.xmin] = 255;
          out.row_as<std::uint8_t>(y)[o.xmax] = 255;
        }
      }
      return;
  }
}

DetectCounts DetectState::process(ConstImageView in, ImageView out,
                                  std::span<DetectedObject> records, ThreadPool& pool) {
  if (in.width != shape_.width || in.height != shape_.height || in.format != shape_.format) {
    throw Error("detect: a frame of another shape than configured");
  }
  load(in, pool);
  estimate_background(pool);
  filter_and_threshold(pool);
  if (lines_.enabled()) {
    lines_.add_detections(significance_, static_cast<float>(params_.line_threshold), mask_.data(),
                          pool);
  }
  const DetectCounts counts = measure(records);
  write_output(in, out, records.first(counts.objects));
  return counts;
}

}  // namespace starsift
