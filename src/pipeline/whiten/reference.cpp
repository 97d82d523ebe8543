// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "pipeline/error.hpp"
#include "pipeline/whiten/despike.hpp"
#include "pipeline/whiten/phase_peak.hpp"

namespace starsift {

namespace {

// A float plane held in a vector, seen as a GRAY32F image.
ImageView plane_view(std::vector<float>& plane, int width, int height) {
  return {reinterpret_cast<std::byte*>(plane.data()), width, height,
          static_cast<std::ptrdiff_t>(width * sizeof(float)), PixelFormat::Gray32F};
}

// Row y of `img` as floats: the format chosen once a row, so that each conversion loop
// vectorises.
void read_row(ConstImageView img, int y, float* out) {
  const std::byte* row = img.row(y);
  const int w = img.width;
  switch (img.format) {
    case PixelFormat::Gray8: {
      const auto* v = reinterpret_cast<const std::uint8_t*>(row);
      for (int i = 0; i < w; ++i) out[i] = static_cast<float>(v[i]);
      break;
    }
    case PixelFormat::Gray16:
      for (int i = 0; i < w; ++i) {
        std::uint16_t v;
        std::memcpy(&v, row + 2 * static_cast<std::ptrdiff_t>(i), sizeof v);
        out[i] = static_cast<float>(v);
      }
      break;
    default:
      std::memcpy(out, row, static_cast<std::size_t>(w) * sizeof(float));
  }
}

// despike_inner() (despike.hpp) of the samples 1 .. w - 2 of a row of an integer frame, whose
// row lies between two others (`row` - w and `row` + w): spikes' values into x, flags into
// `flags`. Its min/max are selects here, not fmaxf/fminf, which GCC does not vectorise; for the
// finite samples of integer frames (no NaN, no -0) they are the same values.
void despike_row_inner(const float* row, int w, float* x, unsigned char* flags) {
  const float* up = row - w;
  const float* down = row + w;
  auto larger = [](float a, float b) { return a > b ? a : b; };
  auto smaller = [](float a, float b) { return a < b ? a : b; };
  const int last = w - 1;
  for (int i = 1; i < last; ++i) {
    const float n[8] = {up[i - 1],  up[i],       up[i + 1], row[i - 1],
                        row[i + 1], down[i - 1], down[i],   down[i + 1]};
    const auto [hi1, hi2, lo1, lo2] = extremes_of_eight(n, larger, smaller);
    // despike_decide(), as selects.
    const float self = row[i];
    const bool high = self - hi2 > kDespikeRatio * (hi2 - lo1);
    const bool low = lo2 - self > kDespikeRatio * (hi1 - lo2);
    x[i] = high ? hi2 : (low ? lo2 : self);
    flags[i] = high | low;
  }
}

// Writes `value`, already rounded and clamped for integer formats.
void write_sample(ImageView img, int x, int y, float value) {
  std::byte* row = img.row(y);
  switch (img.format) {
    case PixelFormat::Gray8:
      row[x] = static_cast<std::byte>(static_cast<unsigned>(value));
      break;
    case PixelFormat::Gray16: {
      const auto v = static_cast<std::uint16_t>(value);
      std::memcpy(row + 2 * static_cast<std::ptrdiff_t>(x), &v, sizeof v);
      break;
    }
    default:
      std::memcpy(row + 4 * static_cast<std::ptrdiff_t>(x), &value, sizeof value);
  }
}

std::string shape_text(int width, int height, PixelFormat format) {
  return std::to_string(width) + "x" + std::to_string(height) + " " +
         std::string(to_string(format));
}

}  // namespace

// Every per-frame buffer, allocated once for the shape.
struct WhitenState::Buffers {
  std::vector<float> x;                       // the input as float (camera grid)
  std::vector<float> raw;                     // the same before despike (camera grid)
  std::vector<unsigned char> despiked;        // 1: the input sample was a spike (camera grid)
  std::vector<float> y;                       // the aligned frame (shift: resample; else x is used)
  std::vector<unsigned char> x_unusable;      // 1: x saturated or not finite (shift: resample)
  std::vector<float> b;                       // the prediction (aligned grid)
  std::vector<float> b_camera;                // the prediction on the camera grid (shift: resample)
  std::vector<float> var;                     // sigma^2 (camera grid)
  std::vector<unsigned char> run;             // consecutive rejections (camera grid)
  std::vector<unsigned char> rejected;        // this frame's outlier test (camera grid)
  std::vector<float> rho;                     // reject: objects: the residual (camera grid)
  std::vector<unsigned char> box;             // reject: objects: box sum significant (camera)
  std::vector<unsigned char> invalid;         // 1: left out of the fit sums (aligned grid)
  std::vector<unsigned char> outside;         // 1: sample point outside the camera's view (aligned)
  std::vector<unsigned char> window_invalid;  // stored frames invalid at each pixel (aligned)
  std::vector<double> row_sums;               // per row: its part of each dot product
  std::vector<std::uint64_t> row_rejected;
  std::vector<std::uint64_t> row_despiked;  // per row: input samples despiked
  std::vector<double> rhs, work, dots;
  std::vector<double> system;  // R of one fit, n x n
  std::vector<int> slots, identity;
};

WhitenState::WhitenState(const WhitenParams& params, const FrameShape& shape)
    : params_(params), shape_(shape), buf_(std::make_unique<Buffers>()) {
  params_.validate_for(shape_);
  saturation_ = whiten_saturation(shape_);
  history_scale_ = whiten_history_scale(params_, shape_);
  const std::size_t pixels = static_cast<std::size_t>(shape.width) * shape.height;
  const int capacity = params_.history + 1;
  Buffers& m = *buf_;
  m.x.assign(pixels, 0.0f);
  m.raw.assign(pixels, 0.0f);  // despike can be switched on at any frame
  m.despiked.assign(pixels, 0);
  if (params_.shift == WhitenShift::Resample) {
    m.y.assign(pixels, 0.0f);
    m.x_unusable.assign(pixels, 0);
    m.b_camera.assign(pixels, 0.0f);
    correlator_ = std::make_unique<PhaseCorrelator>(params_.effective_shift_window(shape_));
  }
  m.b.assign(pixels, 0.0f);
  m.var.assign(pixels, 0.0f);
  m.run.assign(pixels, 0);
  m.rejected.assign(pixels, 0);
  if (params_.reject == WhitenReject::Objects) {  // reject changes only with a new state
    m.rho.assign(pixels, 0.0f);
    m.box.assign(pixels, 0);
  }
  m.invalid.assign(pixels, 0);
  m.outside.assign(pixels, 0);
  m.window_invalid.assign(pixels, 0);
  m.row_sums.assign(static_cast<std::size_t>(shape.height) * capacity, 0.0);
  m.row_rejected.assign(shape.height, 0);
  m.row_despiked.assign(shape.height, 0);
  m.rhs.assign(capacity, 0.0);
  m.work.assign(static_cast<std::size_t>(capacity) * capacity, 0.0);
  m.dots.assign(capacity, 0.0);
  m.slots.assign(capacity, 0);
  m.identity.assign(capacity, 0);
  m.system.assign(static_cast<std::size_t>(capacity) * capacity, 0.0);
  history_.allocate(capacity, shape.width, shape.height);
  weights_.reserve(WhitenParams::kMaxHistory);  // assign() per fit then never allocates
  reset();
}

WhitenState::~WhitenState() = default;

bool WhitenState::can_update(const WhitenParams& params) const noexcept {
  return whiten_live_change(params_, params);
}

void WhitenState::update(const WhitenParams& params) {
  params.validate_for(shape_);
  if (!can_update(params)) {
    throw Error("whiten: these parameters need a new history",
                "changes of gamma, refit-interval, shift-max, shift-noise, reject-sigma, "
                "reject-object-sigma, warmup, offset, gain, despike");
  }
  params_ = params;
}

void WhitenState::reset() noexcept {
  history_.clear();
  frame_ = 0;
  noise_updates_ = 0;
  frames_since_fit_ = 0;
  reference_x_ = reference_y_ = 0.0;
  previous_x_ = previous_y_ = 0.0;
  candidate_ = false;
  candidate_x_ = candidate_y_ = 0.0;
  weights_.clear();
  solve_ = {};
  to_grid_ = make_shift_kernel(0.0, 0.0);
  to_camera_ = to_grid_;
  std::fill(buf_->var.begin(), buf_->var.end(), 0.0f);
  std::fill(buf_->run.begin(), buf_->run.end(), 0);
  std::fill(buf_->window_invalid.begin(), buf_->window_invalid.end(), 0);
  stats_ = {};
}

ConstImageView WhitenState::noise_variance() const noexcept {
  return const_view(plane_view(buf_->var, shape_.width, shape_.height));
}

const float* WhitenState::aligned_plane() const noexcept {
  return params_.shift == WhitenShift::Resample ? buf_->y.data() : buf_->x.data();
}

int whiten_history_in_use(const WhitenParams& params, int stored) noexcept {
  const int available = params.fit == WhitenFit::Past ? stored - 1 : stored;
  return std::clamp(available, 0, params.history);
}

bool whiten_weights_due(const WhitenParams& params, int n, int last_n,
                        int frames_since_fit) noexcept {
  return n >= 1 && (n != last_n || frames_since_fit >= params.refit_interval);
}

void WhitenState::process(ConstImageView in, ImageView out, ThreadPool& pool) {
  if (in.width != shape_.width || in.height != shape_.height || in.format != shape_.format) {
    throw Error("whiten: frame " + shape_text(in.width, in.height, in.format) +
                    " differs from the configured shape",
                shape_text(shape_.width, shape_.height, shape_.format));
  }
  const FrameShape out_shape = output_shape();
  if (out.width != out_shape.width || out.height != out_shape.height ||
      out.format != out_shape.format) {
    throw Error("whiten: output frame " + shape_text(out.width, out.height, out.format) +
                    " differs from the output shape",
                shape_text(out_shape.width, out_shape.height, out_shape.format));
  }
  stats_ = {};
  stats_.frame = frame_;
  const int n = whiten_history_in_use(params_, history_.size());
  load_input(in, pool);
  if (params_.shift == WhitenShift::Resample) {
    estimate_shift();
    align(pool);
  }
  stats_.history_used = n;
  stats_.warmup = n < params_.history;
  fit(n, pool);
  predict(n, pool);
  residual_and_output(n, in, out, pool);
  store(n, pool);
  if (n >= 1) ++noise_updates_;
  ++frames_since_fit_;
  ++frame_;
}

void WhitenState::load_input(ConstImageView in, ThreadPool& pool) {
  Buffers& m = *buf_;
  const int w = shape_.width;
  const int h = shape_.height;
  const bool unshifted = params_.shift == WhitenShift::None;
  const bool despike = params_.despike;
  // The spike test reads the input, never x: which samples are spikes does not depend on
  // which have been replaced already. A spike takes the value despike_sample() gives it, its
  // neighbours' level, in x: what the shift estimate, the alignment and the history see, so
  // a hot pixel leaves no hole (as a missing sample it would spoil the 4 x 4 bicubic
  // footprint of 16 aligned pixels in every frame, all of them then left out of the fit);
  // and it is flagged, so it is no measurement: no residual, no noise update.
  // First pass: x, and with despike the input as float (the samples read_row() gives, read
  // once: the test reads each nine times).
  float* raw = despike ? m.raw.data() : m.x.data();
  pool.parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      float* row = raw + static_cast<std::ptrdiff_t>(y) * w;
      read_row(in, y, row);
      if (despike)
        std::memcpy(m.x.data() + static_cast<std::ptrdiff_t>(y) * w, row, w * sizeof(float));
    }
  });
  if (despike) {
    auto read = [&](int cx, int cy) { return raw[static_cast<std::ptrdiff_t>(cy) * w + cx]; };
    // Integer frames: every sample finite, so an inner one has its eight neighbours.
    const bool integer = in.format != PixelFormat::Gray32F;
    pool.parallel_for(h, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        float* x = m.x.data() + static_cast<std::ptrdiff_t>(y) * w;
        unsigned char* flags = m.despiked.data() + static_cast<std::ptrdiff_t>(y) * w;
        auto general = [&](int i) {
          const DespikedSample d = despike_sample(read, i, y, w, h);
          flags[i] = d.spike;
          if (d.spike) x[i] = d.value;
        };
        if (integer && y > 0 && y < h - 1 && w >= 3) {
          general(0);
          despike_row_inner(raw + static_cast<std::ptrdiff_t>(y) * w, w, x, flags);
          general(w - 1);
        } else {
          for (int i = 0; i < w; ++i) general(i);
        }
        std::uint64_t despiked = 0;
        for (int i = 0; i < w; ++i) despiked += flags[i];
        m.row_despiked[y] = despiked;
      }
    });
    for (int y = 0; y < h; ++y) stats_.despiked += m.row_despiked[y];
  } else {
    std::fill(m.despiked.begin(), m.despiked.end(), 0);
  }
  if (unshifted) {
    for (std::size_t p = 0; p < m.x.size(); ++p) m.invalid[p] = unusable(m.x[p], saturation_);
  }
}

void WhitenState::estimate_shift() {
  const ConstImageView x = const_view(plane_view(buf_->x, shape_.width, shape_.height));
  double sx = 0.0, sy = 0.0;
  if (frame_ == 0) {
    correlator_->set_reference(x);
    reference_x_ = reference_y_ = 0.0;
    candidate_ = false;
    stats_.shift_peak = 1.0;
    stats_.reference_changed = true;
  } else {
    ShiftEstimate d = correlator_->estimate(x);
    // The previous frame's displacement against the current reference (phase_peak.hpp: which
    // peak is the shift).
    const double px = previous_x_ - reference_x_;
    const double py = previous_y_ - reference_y_;
    bool far_candidate = false;
    double far_x = 0.0, far_y = 0.0;
    if (correlator_->last_peak_far(px, py)) {
      const std::optional<ShiftEstimate> near = correlator_->estimate_near(px, py);
      far_x = reference_x_ + d.dx;
      far_y = reference_y_ + d.dy;
      const bool confirmed =
          shift_far_peak_confirmed(candidate_, far_x, far_y, candidate_x_, candidate_y_);
      if (near && !shift_far_peak_taken(d.peak, near->peak, confirmed)) {
        far_candidate = true;
        d = *near;
        stats_.shift_rejected = true;
      }
    }
    candidate_ = far_candidate;
    candidate_x_ = far_x;
    candidate_y_ = far_y;
    sx = reference_x_ + d.dx;
    sy = reference_y_ + d.dy;
    stats_.shift_peak = d.peak;
    if (std::hypot(d.dx, d.dy) > params_.shift_max) {
      // The field has moved far from the reference: this frame becomes it, and its shift the
      // reference's offset, so later shifts stay on the first frame's grid.
      correlator_->adopt_last_as_reference();
      reference_x_ = sx;
      reference_y_ = sy;
      stats_.reference_changed = true;
    }
  }
  previous_x_ = sx;
  previous_y_ = sy;
  stats_.shift_x = sx;
  stats_.shift_y = sy;
  to_grid_ = make_shift_kernel(sx, sy);
  to_camera_ = make_shift_kernel(-sx, -sy);
}

void WhitenState::align(ThreadPool& pool) {
  Buffers& m = *buf_;
  const int w = shape_.width;
  const int h = shape_.height;
  const float* x = m.x.data();
  const ShiftKernel& k = to_grid_;
  auto read = [&](int ix, int iy) { return x[static_cast<std::ptrdiff_t>(iy) * w + ix]; };
  auto saturated = [&](int ix, int iy) {
    return m.x_unusable[static_cast<std::ptrdiff_t>(iy) * w + ix] != 0;
  };
  // Whether each input sample is unusable, once: each is a tap of 16 aligned pixels.
  pool.parallel_for(h, [&](int y0, int y1) {
    const std::size_t end = static_cast<std::size_t>(y1) * w;
    for (std::size_t p = static_cast<std::size_t>(y0) * w; p < end; ++p)
      m.x_unusable[p] = unusable(x[p], saturation_);
  });
  // Pixels whose 4 x 4 taps all lie on the plane, the inner columns: shift_row_inner() gives
  // sample_shifted()'s values without its clamps, and the flags below are any_tap()'s test on
  // the unusable flags, unclamped likewise (the clamps kept the per-pixel loop scalar).
  const InnerColumns inner = shift_inner_columns(k, w);
  pool.parallel_for(h, [&](int y0, int y1) {
    for (int q_y = y0; q_y < y1; ++q_y) {
      const std::size_t row = static_cast<std::size_t>(q_y) * w;
      auto general = [&](int q_x) {
        const float v = sample_shifted(k, q_x, q_y, w, h, read);
        m.y[row + q_x] = v;
        m.invalid[row + q_x] = any_tap(k, q_x, q_y, w, h, saturated) || !finite_float(v);
        m.outside[row + q_x] = !shifted_source_inside(k, q_x, q_y, w, h);
      };
      for (int q_x = 0; q_x < inner.begin; ++q_x) general(q_x);
      const float* src[4];
      const unsigned char* bad[4];
      for (int j = 0; j < 4; ++j) {
        const std::ptrdiff_t iy = clamp_index(q_y + k.oy - 1 + j, h);
        src[j] = x + iy * w;
        bad[j] = m.x_unusable.data() + iy * w + k.ox - 1;
      }
      float* out = m.y.data() + row;
      shift_row_inner(k, src, inner, out);
      unsigned char* invalid = m.invalid.data() + row;
      unsigned char* outside = m.outside.data() + row;
      // An inner pixel's sample point lies within the columns: only its row can be off the plane.
      const unsigned char row_outside = !shifted_source_inside(k, inner.begin, q_y, w, h);
      auto any_bad = [](const unsigned char* u) { return u[0] | u[1] | u[2] | u[3]; };
      // Locals: the stores could alias the captured ones, which would keep the loop scalar.
      const int begin = inner.begin, end = inner.end;
      const unsigned char *u0 = bad[0], *u1 = bad[1], *u2 = bad[2], *u3 = bad[3];
      for (int q_x = begin; q_x < end; ++q_x) {
        const int any =
            any_bad(u0 + q_x) | any_bad(u1 + q_x) | any_bad(u2 + q_x) | any_bad(u3 + q_x);
        invalid[q_x] = static_cast<unsigned char>(any | !finite_float(out[q_x]));
        outside[q_x] = row_outside;
      }
      for (int q_x = inner.end; q_x < w; ++q_x) general(q_x);
    }
  });
}

namespace {

// One row's part of a dot product: the sum over i of load(a[i]) * b[i] in double. Eight
// partial sums (lane i % 8), added in a fixed order at the end: the loop vectorises (one running
// sum is a chain of dependent adds, ~4 cycles a pixel), and the total is the same on every run,
// whatever the threads.
template <class Load>
double row_dot(const float* a, const float* b, int n, Load load) {
  constexpr int kLanes = 8;
  double lane[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane[l] += load(a[i + l]) * static_cast<double>(b[i + l]);
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] += load(a[i]) * static_cast<double>(b[i]);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// The rows the fit sums read.
bool fit_row(int y, int subsample) {
  return y % subsample == 0;
}

// sums[k] = sum over the fit rows of row_sums[row * ld + k] for the `count` indices `keys`,
// rows in order: the same total whatever the number of threads.
void add_rows(const std::vector<double>& row_sums, int ld, int height, int subsample,
              const int* keys, int count, double* sums) {
  for (int k = 0; k < count; ++k) sums[keys[k]] = 0.0;
  for (int y = 0; y < height; y += subsample) {
    const double* row = row_sums.data() + static_cast<std::size_t>(y) * ld;
    for (int k = 0; k < count; ++k) sums[keys[k]] += row[keys[k]];
  }
}

}  // namespace

void WhitenState::fit(int n, ThreadPool& pool) {
  Buffers& m = *buf_;
  const bool due =
      whiten_weights_due(params_, n, static_cast<int>(weights_.size()), frames_since_fit_);
  if (n == 0) {
    weights_.clear();
    solve_ = {};
  } else if (due) {
    const bool past = params_.fit == WhitenFit::Past;
    // History frame k is lag k + 1 (current) or k + 2 (past: lag 1 is the target).
    const int first_lag = past ? 2 : 1;
    for (int k = 0; k < n; ++k) m.slots[k] = history_.slot_of_lag(first_lag + k);
    // Sums over every pixel of the fit rows: R from the Gram matrix, r from it (past) or
    // from the current frame (current).
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) m.system[i * n + j] = history_.gram_at(m.slots[i], m.slots[j]);
    if (past) {
      const int target = history_.slot_of_lag(1);
      for (int k = 0; k < n; ++k) m.rhs[k] = history_.gram_at(target, m.slots[k]);
    } else {
      current_products(n, pool);
    }
    leave_out_excluded(n);
    for (int k = 0; k < n; ++k) m.identity[k] = k;
    weights_.assign(n, 0.0);
    solve_ = solve_whiten_weights(m.system.data(), n, m.identity.data(), n, m.rhs.data(),
                                  params_.gamma, m.work.data(), weights_.data());
    frames_since_fit_ = 0;
    stats_.refit = true;
  }
  stats_.weight_sq_sum = solve_.sum_sq;
  stats_.noise_floor = std::sqrt(1.0 + solve_.sum_sq);
  stats_.gamma = solve_.gamma;
}

void WhitenState::current_products(int n, ThreadPool& pool) {
  Buffers& m = *buf_;
  const int w = shape_.width;
  const int capacity = history_.capacity();
  const float* y_plane = aligned_plane();
  pool.parallel_for(shape_.height, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      if (!fit_row(y, params_.effective_fit_subsample(shape_))) continue;
      const float* target = y_plane + static_cast<std::size_t>(y) * w;
      for (int k = 0; k < n; ++k) {
        const float* h = history_.frame(m.slots[k]).row_as<float>(y);
        m.row_sums[static_cast<std::size_t>(y) * capacity + m.slots[k]] =
            row_dot(target, h, w, fit_value);
      }
    }
  });
  add_rows(m.row_sums, capacity, shape_.height, params_.effective_fit_subsample(shape_),
           m.slots.data(), n, m.dots.data());
  for (int k = 0; k < n; ++k) m.rhs[k] = m.dots[m.slots[k]];
}

void WhitenState::leave_out_excluded(int n) {
  // The pixels invalid in the current frame or in any stored frame leave every sum of this
  // fit: their products are subtracted, so R and r are sums over one common set of pixels
  // (R stays a Gram matrix) and a clipped star neither pulls the weights nor, by being
  // clipped in some frames only, gives each frame a different hole to fit.
  Buffers& m = *buf_;
  const int w = shape_.width;
  const bool past = params_.fit == WhitenFit::Past;
  const float* target =
      past ? history_.frame(history_.slot_of_lag(1)).row_as<float>(0) : aligned_plane();
  const float* planes[WhitenParams::kMaxHistory];
  for (int k = 0; k < n; ++k) planes[k] = history_.frame(m.slots[k]).row_as<float>(0);
  double values[WhitenParams::kMaxHistory];
  std::uint64_t excluded = 0;
  for (int y = 0; y < shape_.height; y += params_.effective_fit_subsample(shape_)) {
    for (int i = 0; i < w; ++i) {
      const std::size_t p = static_cast<std::size_t>(y) * w + i;
      if (m.window_invalid[p] == 0 && m.invalid[p] == 0) continue;
      ++excluded;
      for (int k = 0; k < n; ++k) values[k] = planes[k][p];
      const double t = fit_value(target[p]);
      for (int r = 0; r < n; ++r) {
        m.rhs[r] -= t * values[r];
        for (int c = 0; c < n; ++c) m.system[r * n + c] -= values[r] * values[c];
      }
    }
  }
  stats_.excluded = excluded;
}

void WhitenState::predict(int n, ThreadPool& pool) {
  Buffers& m = *buf_;
  const int w = shape_.width;
  // The prediction reads lags 1..n whichever frame the weights were fitted to.
  int slots[WhitenParams::kMaxHistory];
  float a[WhitenParams::kMaxHistory];
  for (int k = 0; k < n; ++k) {
    slots[k] = history_.slot_of_lag(k + 1);
    a[k] = static_cast<float>(weights_[k]);
  }
  pool.parallel_for(shape_.height, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      float* b = m.b.data() + static_cast<std::size_t>(y) * w;
      std::fill(b, b + w, 0.0f);
      for (int k = 0; k < n; ++k) {
        const float* h = history_.frame(slots[k]).row_as<float>(y);
        for (int i = 0; i < w; ++i) b[i] += a[k] * h[i];
      }
    }
  });
}

double whiten_sigma_dof(std::uint64_t noise_updates, double noise_frames) noexcept {
  if (noise_updates == 0) return 0.0;
  // sigma^2 after k updates, var_k = (1 - a_k) var_{k-1} + a_k rho_k^2 with a_k = max(1/k, 1/T):
  // in units of one rho^2's variance its variance is v_k = (1 - a_k)^2 v_{k-1} + a_k^2, which is
  // 1/k while a_k = 1/k (a plain mean), then tends to a / (2 - a) at a = 1/T; chi-square
  // degrees of freedom 1 / v_k.
  const double k = static_cast<double>(noise_updates);
  const double mean_updates = std::floor(noise_frames);  // the last update with a_k = 1/k
  if (k <= mean_updates) return k;
  const double a = 1.0 / noise_frames;
  const double v_inf = a / (2.0 - a);
  const double v_mean = 1.0 / mean_updates;
  const double v = v_inf + (v_mean - v_inf) * std::pow(1.0 - a, 2.0 * (k - mean_updates));
  return 1.0 / v;
}

WhitenNoiseConstants whiten_noise_constants(const WhitenParams& params, std::uint64_t noise_updates,
                                            int n) noexcept {
  WhitenNoiseConstants c;
  c.have_sigma = noise_updates >= 1;
  if (n >= 1) {
    // The running mean of the residuals seen so far until it is longer than the time
    // constant, then an exponential average: sigma starts from the first whitened frame.
    const double mean_weight = 1.0 / static_cast<double>(noise_updates + 1);
    c.alpha = static_cast<float>(std::max(mean_weight, 1.0 / params.effective_noise_frames()));
    c.reject_active = params.reject != WhitenReject::None &&
                      noise_updates >= static_cast<std::uint64_t>(kWhitenRejectAfterFrames);
    c.objects = c.reject_active && params.reject == WhitenReject::Objects;
  }
  c.sigma_dof =
      static_cast<float>(whiten_sigma_dof(noise_updates, params.effective_noise_frames()));
  c.significance_factor = wallace_factor(c.sigma_dof);
  if (params.shift == WhitenShift::Resample) {
    c.shift_noise2 = static_cast<float>(params.shift_noise * params.shift_noise);
  }
  c.reject_k2 = static_cast<float>(params.reject_sigma * params.reject_sigma);
  c.object_k2 = static_cast<float>(params.reject_object_sigma * params.reject_object_sigma);
  c.reject_run_limit = params.history;
  return c;
}

void WhitenState::residual_and_output(int n, ConstImageView in, ImageView out, ThreadPool& pool) {
  Buffers& m = *buf_;
  const int w = shape_.width;
  const int h = shape_.height;
  const bool resampled = params_.shift == WhitenShift::Resample;
  if (resampled && n >= 1) {
    resample_shifted(const_view(plane_view(m.b, w, h)), plane_view(m.b_camera, w, h), to_camera_,
                     pool);
  }
  const float* prediction = resampled ? m.b_camera.data() : m.b.data();
  const WhitenNoiseConstants c = whiten_noise_constants(params_, noise_updates_, n);
  const bool integer_out = out.format != PixelFormat::Gray32F;
  const float offset = static_cast<float>(params_.effective_offset(shape_));
  const float gain = static_cast<float>(params_.effective_gain(shape_));
  const float max = saturation_;  // the largest integer sample
  const bool warm = n < params_.history;
  const bool zeros = warm && params_.warmup == WhitenWarmup::Zeros;
  const bool passthrough = warm && params_.warmup == WhitenWarmup::Passthrough;
  const WhitenOutput kind = params_.output;
  // reject: objects decides after every residual of the frame is known (the object test reads
  // the neighbours'), so this pass keeps the residuals and leaves sigma as it is; the outputs
  // read only sigma_{t-1} and need nothing of the decision.
  const bool objects = params_.reject == WhitenReject::Objects;
  // The input as float, as load_input() read it (before despike): what output: float passes
  // through while warming up.
  const float* input = params_.despike ? m.raw.data() : m.x.data();

  pool.parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      std::uint64_t rejected_count = 0;
      if (passthrough && kind == WhitenOutput::Residual) {
        std::memcpy(out.row(y), in.row(y), in.row_bytes());
      }
      for (int i = 0; i < w; ++i) {
        const std::size_t p = static_cast<std::size_t>(y) * w + i;
        const bool usable = measured(m.x[p], m.despiked[p], saturation_);
        const float rho = pixel_residual(m.x[p], prediction[p], n >= 1, usable);
        const float var_before = m.var[p];
        if (objects) {
          m.rho[p] = rho;
        } else {
          const bool rejected = update_pixel_noise(rho, usable, c, m.var[p], m.run[p]);
          m.rejected[p] = rejected;
          rejected_count += rejected;
        }
        const float sigma = pixel_sigma(var_before, c);
        // The significance outputs add the registration's error at this pixel (shift-noise),
        // from the aligned prediction around the pixel's place on that grid (as the CUDA
        // camera pass reads it from its tile).
        const auto z = [&] {
          float registration = 0.0f;
          if (c.shift_noise2 > 0.0f && resampled && n >= 1) {
            const int bx = i + to_camera_.ox, by = y + to_camera_.oy;
            const auto b_at = [&](int xx, int yy) {
              return m.b[static_cast<std::size_t>(clamp_index(yy, h)) * w + clamp_index(xx, w)];
            };
            registration =
                registration_variance(b_at(bx, by), b_at(bx - 1, by), b_at(bx + 1, by),
                                      b_at(bx, by - 1), b_at(bx, by + 1), c.shift_noise2);
          }
          return pixel_significance(rho, significance_sigma(var_before, registration, c), c);
        };
        float value = 0.0f;  // float, snr and sigma write 0 for zeros and passthrough
        switch (kind) {
          case WhitenOutput::Residual:
            if (passthrough) continue;  // copied above
            value = integer_out ? integer_output(zeros ? 0.0f : rho, offset, gain, max)
                                : offset + gain * (zeros ? 0.0f : rho);
            break;
          case WhitenOutput::Significance: {
            // Warming up without a fit (zeros, passthrough): significance 0.
            const float snr = passthrough || zeros ? 0.0f : z();
            value = integer_out ? integer_output(snr, offset, gain, max) : offset + gain * snr;
            break;
          }
          case WhitenOutput::Float:
            // The input as it came, despiked samples included.
            value = passthrough ? input[p] : (zeros ? 0.0f : rho);
            break;
          case WhitenOutput::Snr:
            value = passthrough || zeros ? 0.0f : z();
            break;
          case WhitenOutput::Sigma:
            value = passthrough || zeros ? 0.0f : sigma;
            break;
        }
        write_sample(out, i, y, value);
      }
      m.row_rejected[y] = rejected_count;
    }
  });
  if (objects) reject_objects(c, pool);
  for (int y = 0; y < h; ++y) stats_.rejected += m.row_rejected[y];
}

void WhitenState::reject_objects(const WhitenNoiseConstants& c, ThreadPool& pool) {
  Buffers& m = *buf_;
  const int w = shape_.width;
  const int h = shape_.height;
  // The box test: the sums of this frame's residuals and of sigma_{t-1}^2 over each pixel's
  // 3 x 3 box (the neighbours inside the frame; a pixel without a usable input has residual 0
  // and adds its sigma^2 like any other). sigma is still sigma_{t-1} everywhere here.
  pool.parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      unsigned char* box = m.box.data() + static_cast<std::size_t>(y) * w;
      auto general = [&](int i) {
        float rho_sum = 0.0f, var_sum = 0.0f;
        for (int dy = -1; dy <= 1; ++dy) {
          const int cy = y + dy;
          if (cy < 0 || cy >= h) continue;
          for (int dx = -1; dx <= 1; ++dx) {
            const int cx = i + dx;
            if (cx < 0 || cx >= w) continue;
            const std::size_t q = static_cast<std::size_t>(cy) * w + cx;
            rho_sum += m.rho[q];
            var_sum += m.var[q];
          }
        }
        box[i] = pixel_box_significant(rho_sum, var_sum, c);
      };
      if (y == 0 || y == h - 1 || w < 3) {
        for (int i = 0; i < w; ++i) general(i);
        continue;
      }
      // Inside the frame every box has its nine pixels: the same sums in the same order,
      // written out, and pixel_box_significant() with & for && (no branch: the loop vectorises).
      general(0);
      const std::size_t above = static_cast<std::size_t>(y - 1) * w;
      const float* r0 = m.rho.data() + above;
      const float* r1 = r0 + w;
      const float* r2 = r1 + w;
      const float* v0 = m.var.data() + above;
      const float* v1 = v0 + w;
      const float* v2 = v1 + w;
      const int on = c.objects;
      const float k2 = c.object_k2;
      const int last = w - 1;  // a local bound: the stores could alias the captured w
      // The box at column i, summed from 0 in general()'s order: rows, then columns.
      auto box_sum = [](const float* a, const float* b, const float* c, int i) {
        float sum = 0.0f;
        for (const float* row : {a, b, c}) {
          sum += row[i - 1];
          sum += row[i];
          sum += row[i + 1];
        }
        return sum;
      };
      for (int i = 1; i < last; ++i) {
        const float rho_sum = box_sum(r0, r1, r2, i);
        const float var_sum = box_sum(v0, v1, v2, i);
        box[i] = static_cast<unsigned char>(on & finite_float(rho_sum) &
                                            (rho_sum * rho_sum > k2 * var_sum));
      }
      general(w - 1);
    }
  });
  // A pixel is on an object when a box test in its 3 x 3 neighbourhood passed: a blob's box
  // sums pass over its core, and the dilation takes its flanks too, whose residuals would
  // otherwise enter the history. Then the per-pixel test and sigma's update, as for mask.
  // The dilation goes to `rejected` first (a loop of its own, which vectorises), which the
  // update then overwrites pixel by pixel with the outlier test.
  pool.parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const std::size_t row = static_cast<std::size_t>(y) * w;
      unsigned char* object = m.rejected.data() + row;
      const unsigned char* b1 = m.box.data() + row;
      const unsigned char* b0 = y > 0 ? b1 - w : b1;  // a missing row repeats this one
      const unsigned char* b2 = y < h - 1 ? b1 + w : b1;
      auto column = [&](int i) { return b0[i] | b1[i] | b2[i]; };
      if (w == 1) {
        object[0] = column(0);
      } else {
        object[0] = column(0) | column(1);
        const int last = w - 1;  // a local bound: the stores could alias the captured w
        for (int i = 1; i < last; ++i) {
          object[i] = (b0[i - 1] | b1[i - 1] | b2[i - 1]) | (b0[i] | b1[i] | b2[i]) |
                      (b0[i + 1] | b1[i + 1] | b2[i + 1]);
        }
        object[w - 1] = column(w - 2) | column(w - 1);
      }
      std::uint64_t rejected_count = 0;
      for (int i = 0; i < w; ++i) {
        const std::size_t p = row + i;
        const bool usable = measured(m.x[p], m.despiked[p], saturation_);
        const bool rejected =
            update_pixel_noise(m.rho[p], usable, c, m.var[p], m.run[p], object[i] != 0);
        m.rejected[p] = rejected;
        rejected_count += rejected;
      }
      m.row_rejected[y] = rejected_count;
    }
  });
}

void WhitenState::store(int n, ThreadPool& pool) {
  Buffers& m = *buf_;
  const int w = shape_.width;
  const int h = shape_.height;
  const int capacity = history_.capacity();
  const bool resampled = params_.shift == WhitenShift::Resample;
  const float* aligned = aligned_plane();
  // An aligned pixel q takes the outlier test of the camera pixel nearest to q + s_t.
  const int to_camera_x = resampled ? static_cast<int>(std::floor(stats_.shift_x + 0.5)) : 0;
  const int to_camera_y = resampled ? static_cast<int>(std::floor(stats_.shift_y + 0.5)) : 0;
  const int slot = history_.next_slot();
  const int kept = std::min(history_.size(), capacity - 1);
  int keys[WhitenParams::kMaxHistory + 1];
  for (int lag = 1; lag <= kept; ++lag) keys[lag - 1] = history_.slot_of_lag(lag);
  keys[kept] = slot;
  const ImageView stored = history_.frame(slot);
  unsigned char* stored_invalid = history_.mask(slot);
  const bool evicting = history_.size() == capacity;

  pool.parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const std::size_t row = static_cast<std::size_t>(y) * w;
      float* s = stored.row_as<float>(y);
      const int cy = y + to_camera_y;
      // The camera row and the columns [begin, end) whose camera pixel is on the plane; the
      // loops below are stored_value() for each range, the test on finite_float().
      const unsigned char* camera_rejected =
          cy >= 0 && cy < h ? m.rejected.data() + static_cast<std::size_t>(cy) * w : nullptr;
      const int begin = camera_rejected ? std::clamp(-to_camera_x, 0, w) : w;
      const int end = camera_rejected ? std::clamp(w - to_camera_x, begin, w) : w;
      const float* a = aligned + row;
      const float* b = m.b.data() + row;
      const unsigned char* outside = m.outside.data() + row;
      // Flags combined with | and &, not || and &&, and both values loaded before the select:
      // a branch, or a load only on one side, would keep the loops scalar.
      const int fitted = n >= 1;
      auto pick = [](int excluded, float aligned_value, float prediction) {
        return excluded | !finite_float(aligned_value) ? prediction : aligned_value;
      };
      auto store_range = [&](int i0, int i1, const unsigned char* rejected) {
        if (rejected) {
          for (int i = i0; i < i1; ++i)
            s[i] = pick(fitted & (outside[i] | rejected[i + to_camera_x]), a[i], b[i]);
        } else {
          for (int i = i0; i < i1; ++i) s[i] = pick(fitted & outside[i], a[i], b[i]);
        }
      };
      store_range(0, begin, nullptr);
      store_range(begin, end, camera_rejected);
      store_range(end, w, nullptr);
      if (history_scale_ != 0.0f) {
        for (int i = 0; i < w; ++i) s[i] = half_history_value(s[i], history_scale_);
      }
      // The window's count of frames invalid at each pixel: the evicted frame leaves it,
      // this one joins.
      unsigned char* mask = stored_invalid + row;
      unsigned char* count = m.window_invalid.data() + row;
      if (evicting) {
        for (int i = 0; i < w; ++i) count[i] -= mask[i];
      }
      std::memcpy(mask, m.invalid.data() + row, w);
      for (int i = 0; i < w; ++i) count[i] += mask[i];
      if (!fit_row(y, params_.effective_fit_subsample(shape_))) continue;
      // The new frame's Gram row, from the values actually stored, over every pixel of the
      // row (a fit leaves out its excluded pixels by subtraction: leave_out_excluded()).
      for (int k = 0; k <= kept; ++k) {
        const float* other = history_.frame(keys[k]).row_as<float>(y);
        m.row_sums[static_cast<std::size_t>(y) * capacity + keys[k]] =
            row_dot(s, other, w, [](float v) { return static_cast<double>(v); });
      }
    }
  });
  add_rows(m.row_sums, capacity, h, params_.effective_fit_subsample(shape_), keys, kept + 1,
           m.dots.data());
  history_.commit(m.dots.data());
}

}  // namespace starsift
