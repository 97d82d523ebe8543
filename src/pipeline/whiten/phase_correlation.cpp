// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/phase_correlation.hpp"

#include <fftw3.h>

#include <cmath>
#include <mutex>
#include <vector>

#include "pipeline/error.hpp"
#include "pipeline/whiten/phase_peak.hpp"

namespace starsift {

namespace {

// FFTW's planner is not thread-safe (only fftwf_execute is): stages configured on different
// threads make and destroy their plans one at a time.
std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

struct FftwFree {
  void operator()(void* p) const noexcept { fftwf_free(p); }
};
template <class T>
using FftwArray = std::unique_ptr<T[], FftwFree>;

template <class T>
FftwArray<T> fftw_array(std::size_t count) {
  auto* p = static_cast<T*>(fftwf_malloc(sizeof(T) * count));
  if (p == nullptr) throw Error("phase correlation: out of memory for the FFT buffers");
  return FftwArray<T>(p);
}

}  // namespace

struct PhaseCorrelator::Impl {
  int n = 0;
  int half = 0;                        // n / 2 + 1 complex columns of a real transform
  FftwArray<float> window;             // the windowed frame (transform input)
  FftwArray<float> correlation;        // the correlation surface (inverse transform output)
  FftwArray<fftwf_complex> spectrum;   // the last frame's transform
  FftwArray<fftwf_complex> reference;  // the reference's transform
  FftwArray<fftwf_complex> cross;      // the tapered, normalised cross-power spectrum
  std::vector<float> hann;             // n weights
  std::vector<float> taper;            // n x half weights
  double peak_scale = 1.0;             // the surface's peak for identical windows
  int peak_x = 0, peak_y = 0;          // the last estimate()'s peak sample (signed)
  fftwf_plan forward = nullptr;
  fftwf_plan backward = nullptr;

  // The correlation surface at a signed position (periodic).
  float at(int x, int y) const {
    return correlation[static_cast<std::ptrdiff_t>((y % n + n) % n) * n + (x % n + n) % n];
  }

  // The peak at signed position (ix, iy), refined per axis.
  ShiftEstimate refined(int ix, int iy) const {
    const double fx = refine_peak(at(ix - 1, iy), at(ix, iy), at(ix + 1, iy));
    const double fy = refine_peak(at(ix, iy - 1), at(ix, iy), at(ix, iy + 1));
    return {ix + fx, iy + fy, at(ix, iy) / peak_scale};
  }

  // The central window of `frame`, despiked (window_despike(): hot pixels out), less its
  // mean, times the Hann window, into `window`.
  // Non-finite samples count as the mean (they carry no position).
  void load(ConstImageView frame) {
    if (frame.format != PixelFormat::Gray32F || frame.width < n || frame.height < n) {
      throw Error("phase correlation: frame smaller than the " + std::to_string(n) + "x" +
                      std::to_string(n) + " window or not GRAY32F",
                  "GRAY32F frames of at least the window's size");
    }
    if (frame.stride % static_cast<std::ptrdiff_t>(sizeof(float)) != 0) {
      throw Error("phase correlation: a row stride of " + std::to_string(frame.stride) +
                      " bytes is not a whole number of samples",
                  "a stride that is a multiple of 4 bytes");
    }
    const int x0 = (frame.width - n) / 2;
    const int y0 = (frame.height - n) / 2;
    const float* origin = frame.row_as<float>(y0) + x0;
    const long long stride = frame.stride / static_cast<std::ptrdiff_t>(sizeof(float));
    double sum = 0.0;
    long long count = 0;
    for (int i = 0; i < n; ++i) {
      float* out = window.get() + static_cast<std::ptrdiff_t>(i) * n;
      for (int j = 0; j < n; ++j) {
        const float v = window_despike(origin, stride, j, i, n);
        out[j] = v;
        if (std::isfinite(v)) {
          sum += v;
          ++count;
        }
      }
    }
    const float mean = count > 0 ? static_cast<float>(sum / count) : 0.0f;
    for (int i = 0; i < n; ++i) {
      float* out = window.get() + static_cast<std::ptrdiff_t>(i) * n;
      for (int j = 0; j < n; ++j) {
        const float v = std::isfinite(out[j]) ? out[j] - mean : 0.0f;
        out[j] = v * hann[i] * hann[j];
      }
    }
  }
};

PhaseCorrelator::PhaseCorrelator(int window) : impl_(std::make_unique<Impl>()) {
  if (window < 2 || (window & (window - 1)) != 0) {
    throw Error("phase correlation window " + std::to_string(window), "a power of two >= 2");
  }
  Impl& m = *impl_;
  m.n = window;
  m.half = window / 2 + 1;
  const std::size_t reals = static_cast<std::size_t>(window) * window;
  const std::size_t complexes = static_cast<std::size_t>(window) * m.half;
  m.window = fftw_array<float>(reals);
  m.correlation = fftw_array<float>(reals);
  m.spectrum = fftw_array<fftwf_complex>(complexes);
  m.reference = fftw_array<fftwf_complex>(complexes);
  m.cross = fftw_array<fftwf_complex>(complexes);
  m.hann.resize(window);
  for (int i = 0; i < window; ++i) m.hann[i] = hann_weight(i, window);
  m.taper.resize(complexes);
  for (int ky = 0; ky < window; ++ky)
    for (int kx = 0; kx < m.half; ++kx) m.taper[ky * m.half + kx] = phase_taper(kx, ky, window);
  // The inverse transform of the taper alone (identical windows) at the origin: the sum over
  // the full spectrum.
  double scale = 0.0;
  for (int ky = 0; ky < window; ++ky)
    for (int kx = 0; kx < window; ++kx) scale += phase_taper(kx, ky, window);
  m.peak_scale = scale;
  std::lock_guard lock(planner_mutex());
  // FFTW_ESTIMATE: plans without timing runs, quick and reproducible; the arrays are untouched.
  m.forward =
      fftwf_plan_dft_r2c_2d(window, window, m.window.get(), m.spectrum.get(), FFTW_ESTIMATE);
  m.backward =
      fftwf_plan_dft_c2r_2d(window, window, m.cross.get(), m.correlation.get(), FFTW_ESTIMATE);
  if (m.forward == nullptr || m.backward == nullptr) {
    if (m.forward) fftwf_destroy_plan(m.forward);
    if (m.backward) fftwf_destroy_plan(m.backward);
    throw Error("phase correlation: FFTW could not plan a " + std::to_string(window) + "x" +
                std::to_string(window) + " transform");
  }
}

PhaseCorrelator::~PhaseCorrelator() {
  std::lock_guard lock(planner_mutex());
  fftwf_destroy_plan(impl_->forward);
  fftwf_destroy_plan(impl_->backward);
}

int PhaseCorrelator::window() const noexcept {
  return impl_->n;
}

void PhaseCorrelator::set_reference(ConstImageView frame) {
  Impl& m = *impl_;
  m.load(frame);
  fftwf_execute(m.forward);
  adopt_last_as_reference();
}

void PhaseCorrelator::adopt_last_as_reference() {
  Impl& m = *impl_;
  const std::size_t complexes = static_cast<std::size_t>(m.n) * m.half;
  for (std::size_t i = 0; i < complexes; ++i) {
    m.reference[i][0] = m.spectrum[i][0];
    m.reference[i][1] = m.spectrum[i][1];
  }
}

ShiftEstimate PhaseCorrelator::estimate(ConstImageView frame) {
  Impl& m = *impl_;
  m.load(frame);
  fftwf_execute(m.forward);
  const std::size_t complexes = static_cast<std::size_t>(m.n) * m.half;
  for (std::size_t i = 0; i < complexes; ++i) {
    // frame * conj(reference): a phase ramp exp(-2 pi i k.d / n) whose inverse peaks at d.
    const float a = m.spectrum[i][0], b = m.spectrum[i][1];
    const float c = m.reference[i][0], d = m.reference[i][1];
    const float re = a * c + b * d;
    const float im = b * c - a * d;
    const float magnitude = std::hypot(re, im);
    const float weight = magnitude > 0.0f ? m.taper[i] / magnitude : 0.0f;
    m.cross[i][0] = re * weight;
    m.cross[i][1] = im * weight;
  }
  fftwf_execute(m.backward);

  const int n = m.n;
  const float* c = m.correlation.get();
  int best = 0;
  for (int i = 1; i < n * n; ++i) {
    if (c[i] > c[best]) best = i;
  }
  // Indices past the middle are negative displacements (the surface is periodic).
  const int iy = best / n;
  const int ix = best % n;
  m.peak_x = ix > n / 2 ? ix - n : ix;
  m.peak_y = iy > n / 2 ? iy - n : iy;
  return m.refined(m.peak_x, m.peak_y);
}

std::optional<ShiftEstimate> PhaseCorrelator::estimate_near(double px, double py) const {
  const Impl& m = *impl_;
  int ix = 0, iy = 0;
  if (!shift_near_peak([&](int x, int y) { return m.at(x, y); }, px, py, ix, iy))
    return std::nullopt;
  return m.refined(ix, iy);
}

bool PhaseCorrelator::last_peak_far(double px, double py) const {
  return shift_peak_far(impl_->peak_x, impl_->peak_y, px, py);
}

}  // namespace starsift
