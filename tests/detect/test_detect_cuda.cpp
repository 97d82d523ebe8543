// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection on CUDA against the CPU reference: with background: none the mask, labels,
// npix, boxes and peaks bit for bit and the sums to their rounding; with a background mesh
// the same catalogue on a synthetic sky; capacity overflow, a frame-filling object, the
// output modes, 4- and 8-connectivity, the catalogue through the engine at depth 3, and the
// line channel bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "detect/streak_profile.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/detect_stage.hpp"
#include "pipeline/detect/reference.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "sky/sky_test_support.hpp"
#include "support/device_copy.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

const BackendChoice kCpu{Backend::Cpu, 0, "test"};
BackendChoice gpu() {
  return resolve_backend(Backend::Cuda, 0);
}

struct Run {
  TestImage out;
  ResultHeader header;
  std::vector<DetectedObject> records;
};

struct Catalogue {
  ResultHeader header;
  std::vector<DetectedObject> records;
};

// The catalogue a result area holds: its header and the records it counts.
Catalogue catalogue_in(const std::vector<std::byte>& area) {
  Catalogue c;
  c.header = *reinterpret_cast<const ResultHeader*>(area.data());
  const auto* rec = reinterpret_cast<const DetectedObject*>(area.data() + kResultRecordsOffset);
  c.records.assign(rec, rec + c.header.count);
  return c;
}

// The catalogue of the frame `stage` processed last.
Catalogue catalogue_of(const DetectStage& stage) {
  const ResultLayout layout = *stage.result_layout();
  std::vector<std::byte> area(layout.bytes());
  stage.write_result({area.data(), area.size()});
  return catalogue_in(area);
}

// The shape a stage is configured with for `in` (GRAY16 with all 16 bits).
FrameShape shape_of(const TestImage& in, const SignificanceScale& significance) {
  return {in.width, in.height, in.format,
          in.format == PixelFormat::Gray16 ? 16 : default_bit_depth(in.format), significance};
}

Run run_stage(const DetectParams& p, const BackendChoice& choice, const TestImage& in,
              const SignificanceScale& significance = {}) {
  auto stage = make_detect_stage(p, choice);
  const FrameShape shape = shape_of(in, significance);
  stage->configure(shape);
  const FrameShape os = stage->output_shape(shape);
  Run r{TestImage(os.width, os.height, os.format, 8), {}, {}};
  stage->process(in.cview(), r.out.view());
  Catalogue c = catalogue_of(*stage);
  r.header = c.header;
  r.records = std::move(c.records);
  return r;
}

// Records of one object from both backends: exact where the arithmetic is, else to the sums'
// rounding (relative 1e-5 of float values, 1e-4 px of positions).
void compare(const DetectedObject& a, const DetectedObject& b) {
  INFO("object " << a.id);
  CHECK(a.id == b.id);
  CHECK(a.npix == b.npix);
  CHECK(a.xmin == b.xmin);
  CHECK(a.xmax == b.xmax);
  CHECK(a.ymin == b.ymin);
  CHECK(a.ymax == b.ymax);
  CHECK(a.peak == b.peak);
  CHECK(a.xpeak == b.xpeak);
  CHECK(a.ypeak == b.ypeak);
  CHECK(a.flags == b.flags);
  CHECK(a.flux == Approx(b.flux).epsilon(1e-5));
  CHECK(a.flux_err == Approx(b.flux_err).epsilon(1e-5));
  CHECK(a.x == Approx(b.x).margin(1e-4));
  CHECK(a.y == Approx(b.y).margin(1e-4));
  CHECK(a.x2 == Approx(b.x2).epsilon(1e-4).margin(1e-5));
  CHECK(a.y2 == Approx(b.y2).epsilon(1e-4).margin(1e-5));
  CHECK(a.xy == Approx(b.xy).epsilon(1e-4).margin(1e-5));
  CHECK(a.a == Approx(b.a).epsilon(1e-4));
  // An axis at +pi/2 is the one at -pi/2: where the moments say "vertical", the sign of a
  // cross moment that is 0 up to rounding picks either end.
  const double turn = std::remainder(static_cast<double>(a.theta) - b.theta, M_PI);
  CHECK(std::abs(turn) < 1e-3);
  // Centroid errors: to 1e-4, or 1e-6 px where both are rounding of 0 (a one-pixel-wide object).
  CHECK(a.x_err == Approx(b.x_err).epsilon(1e-4).margin(1e-6));
}

void compare_runs(const Run& cpu, const Run& cuda) {
  CHECK(cpu.header.count == cuda.header.count);
  CHECK(cpu.header.overflow == cuda.header.overflow);
  REQUIRE(cpu.records.size() == cuda.records.size());
  for (std::size_t i = 0; i < cpu.records.size(); ++i) compare(cpu.records[i], cuda.records[i]);
}

TestImage significance_frame(int w, int h, std::uint32_t seed, double density) {
  TestImage img(w, h, PixelFormat::Gray32F, 12);
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::array<double, 4>> blobs;
  const int n = static_cast<int>(density * w * h / 100.0);
  for (int i = 0; i < n; ++i)
    blobs.push_back({u(rng) * w, u(rng) * h, 0.8 + u(rng) * 2, 4 + 40 * u(rng)});
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      double v = noise(rng);
      for (const auto& b : blobs) {
        const double dx = x - b[0], dy = y - b[1];
        if (std::abs(dx) > 8 || std::abs(dy) > 8) continue;
        v += b[3] * std::exp(-(dx * dx + dy * dy) / (2 * b[2] * b[2]));
      }
      img.view().row_as<float>(y)[x] = static_cast<float>(v);
    }
  }
  return img;
}

// offset + gain z for each sample of the GRAY32F frame `z`, in `format`: integers rounded half
// to even and clamped to the format's range, as siftwhiten writes its significance.
TestImage scaled_frame(const TestImage& z, PixelFormat format, float offset, float gain) {
  TestImage out(z.width, z.height, format);
  for (int y = 0; y < z.height; ++y) {
    for (int x = 0; x < z.width; ++x) {
      const float v = offset + gain * z.cview().row_as<float>(y)[x];
      if (format == PixelFormat::Gray32F) {
        out.view().row_as<float>(y)[x] = v;
      } else if (format == PixelFormat::Gray16) {
        out.view().row_as<std::uint16_t>(y)[x] =
            static_cast<std::uint16_t>(std::clamp(std::rint(v), 0.0f, 65535.0f));
      } else {
        out.view().row_as<std::uint8_t>(y)[x] =
            static_cast<std::uint8_t>(std::clamp(std::rint(v), 0.0f, 255.0f));
      }
    }
  }
  return out;
}

// Adds a streak (streak_profile.hpp) to a GRAY32F frame.
void add_streak(TestImage& img, const Streak& s) {
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      img.view().row_as<float>(y)[x] += static_cast<float>(streak_at(s, x, y));
    }
  }
}

// A synthetic sky for the background mesh: stars of density 2e-3 per px, `movers`, and a
// gradient of 0.3 across it, rendered by `threads` threads.
SkyGenerator gradient_sky(int w, int h, int movers, unsigned threads) {
  SkyParams sp = flat_sky(w, h);
  sp.star_density = 2e-3;
  sp.movers = movers;
  sp.sky_gradient = 0.3;
  return SkyGenerator(sp, threads);
}

std::uint64_t pixels_of(const Run& r) {
  std::uint64_t n = 0;
  for (const DetectedObject& o : r.records) n += o.npix;
  return n;
}

// run_stage() through the stage's device form, as the engine drives it: the frame on the
// device with rows `pad_bytes` longer than its samples (a whole number of samples), so that a
// pad that is no multiple of 4 samples leaves the rows unaligned for word loads; the output
// padded by as many of its own samples.
Run run_device_form(const DetectParams& p, const TestImage& in, int pad_bytes,
                    const SignificanceScale& significance = {}) {
  auto stage = make_detect_stage(p, gpu());
  const FrameShape shape = shape_of(in, significance);
  stage->configure_device(shape);
  const FrameShape os = stage->output_shape(shape);
  DeviceCopy frame(in, pad_bytes);
  // The output's padding: as many samples of its own format as the frame's pad has.
  DeviceCopy out(TestImage(os.width, os.height, os.format, 8),
                 pad_bytes / bytes_per_pixel(in.format) * bytes_per_pixel(os.format));
  const std::size_t bytes = stage->result_layout()->bytes();
  cuda::DeviceImage area(bytes, 1);
  cuda::Stream stream;
  const ImageView fv = frame.view();
  stage->enqueue({fv.data, fv.width, fv.height, fv.stride, fv.format}, out.view(), stream.get());
  stage->enqueue_result({static_cast<std::byte*>(area.data()), bytes}, stream.get());
  std::vector<std::byte> host(bytes);
  cuda::check(
      cudaMemcpyAsync(host.data(), area.data(), bytes, cudaMemcpyDeviceToHost, stream.get()),
      "download");
  cuda::check(cudaStreamSynchronize(stream.get()), "sync");
  Catalogue c = catalogue_in(host);
  CHECK(out.padding_untouched());
  return {out.download(), c.header, std::move(c.records)};
}

}  // namespace

TEST_CASE("CUDA detection on a significance image equals the CPU reference", "[detect][cuda]") {
  for (const DetectFilter filter :
       {DetectFilter::None, DetectFilter::Default, DetectFilter::Gaussian}) {
    for (const Connectivity c : {Connectivity::Eight, Connectivity::Four}) {
      for (const auto& [w, h] : {std::pair{131, 77}, std::pair{512, 300}}) {
        INFO(to_string(filter) << " connectivity " << static_cast<int>(c) << " " << w << "x" << h);
        const TestImage in = significance_frame(w, h, 3u + w, 0.6);
        DetectParams p;
        p.background = DetectBackground::None;
        p.filter = filter;
        p.fwhm = 2.5;
        p.connectivity = c;
        p.threshold = 3.0;
        p.min_area = 2;
        p.output = DetectOutput::Labels;
        const Run cpu = run_stage(p, kCpu, in);
        const Run cuda = run_stage(p, gpu(), in);
        CHECK(cpu.records.size() > 5);
        compare_runs(cpu, cuda);
        CHECK(cpu.out.same_pixels(cuda.out));  // labels, bit for bit
        p.output = DetectOutput::Overlay;
        CHECK(run_stage(p, kCpu, in).out.same_pixels(run_stage(p, gpu(), in).out));
        p.output = DetectOutput::Input;
        CHECK(run_stage(p, gpu(), in).out.same_pixels(in));
      }
    }
  }
}

TEST_CASE("CUDA detection flags the CPU's merged objects", "[detect][cuda][blend]") {
  // Crowded frames: stars overlap, and a fraction of the objects hold two or more peaks.
  for (const DetectThreshold mode : {DetectThreshold::Sigma, DetectThreshold::Absolute}) {
    for (const auto& [w, h] : {std::pair{203, 131}, std::pair{640, 360}}) {
      INFO((mode == DetectThreshold::Sigma ? "sigma " : "absolute ") << w << "x" << h);
      const TestImage in = significance_frame(w, h, 7u + w, 0.6);
      DetectParams p;
      p.background = DetectBackground::None;
      p.threshold_mode = mode;
      p.threshold = 3.0;
      const Run cpu = run_stage(p, kCpu, in);
      const Run cuda = run_stage(p, gpu(), in);
      std::size_t merged = 0;
      for (const DetectedObject& o : cpu.records) merged += (o.flags & kObjectMerged) != 0;
      CHECK(merged >= 3);
      CHECK(merged < cpu.records.size());
      compare_runs(cpu, cuda);
    }
  }
  // With a background mesh on an integer frame: the z of each pixel from the blended
  // background and noise.
  SkyGenerator sky = gradient_sky(700, 450, 8, 2);
  SkyTruth truth;
  const TestImage in = render_frame(sky, 2, PixelFormat::Gray16, truth, 6);
  DetectParams p;
  p.background = DetectBackground::Mesh;
  p.mesh = 48;
  p.threshold = 2.0;
  compare_runs(run_stage(p, kCpu, in), run_stage(p, gpu(), in));
}

TEST_CASE("CUDA detection of whitening's integer significance (background auto) equals the CPU",
          "[detect][cuda]") {
  // siftwhiten output=significance on 16 bits: 32768 + 1024 snr, clamped at +-32 sigma.
  const TestImage in =
      scaled_frame(significance_frame(300, 211, 5, 0.6), PixelFormat::Gray16, 32768.0f, 1024.0f);
  const SignificanceScale scale{32768.0, 1024.0};
  for (const DetectFilter filter : {DetectFilter::None, DetectFilter::Default}) {
    INFO(to_string(filter));
    DetectParams p;  // background auto
    p.filter = filter;
    p.threshold = 3.0;
    p.output = DetectOutput::Labels;
    const Run cpu = run_stage(p, kCpu, in, scale);
    const Run cuda = run_stage(p, gpu(), in, scale);
    CHECK(cpu.records.size() > 5);
    compare_runs(cpu, cuda);
    CHECK(cpu.out.same_pixels(cuda.out));
    // The scale is what the threshold is in: twice the gain, half the significance, so fewer
    // pixels pass (its objects may be more: blobs that touched at 3 sigma come apart).
    const Run halved = run_stage(p, gpu(), in, {32768.0, 2048.0});
    CHECK(pixels_of(halved) < pixels_of(cpu));
  }
}

TEST_CASE("CUDA detection: the mask's side of the threshold is the IEEE quotient's",
          "[detect][cuda]") {
  // sigma units with a scale that is no power of two, so sum / (gain norm) rounds: isolated
  // pixels whose quotient lies within a few ulp of the threshold, on either side and on it,
  // where a quotient from the reciprocal alone would put some on the wrong side.
  const SignificanceScale scale{0.0, 0.7};
  for (const DetectFilter filter : {DetectFilter::None, DetectFilter::Default}) {
    INFO(to_string(filter));
    DetectParams p;
    p.filter = filter;
    p.threshold = 3.1;
    p.min_area = 1;
    p.output = DetectOutput::Labels;
    const DetectKernel k = detect_kernel(p);
    // A lone pixel's filtered sum is its value times the centre tap.
    const float centre = k.taps.empty() ? 1.0f : k.taps[k.taps.size() / 2];
    const float d = static_cast<float>(scale.gain) * static_cast<float>(k.norm);
    const float at = static_cast<float>(p.threshold) * d / centre;
    TestImage in(203, 61, PixelFormat::Gray32F);
    for (int y = 0; y < in.height; ++y) std::fill_n(in.view().row_as<float>(y), in.width, 0.0f);
    int step = -40, placed = 0;
    for (int y = 2; y + 2 < in.height; y += 4) {
      for (int x = 2; x + 2 < in.width; x += 4) {
        float v = at;
        for (int i = 0; i < std::abs(step); ++i) v = std::nextafter(v, step < 0 ? 0.0f : 1e9f);
        in.view().row_as<float>(y)[x] = v;
        step = step == 40 ? -40 : step + 1;
        ++placed;
      }
    }
    const Run cpu = run_stage(p, kCpu, in, scale);
    const Run cuda = run_stage(p, gpu(), in, scale);
    // About half above the threshold.
    CHECK(cpu.records.size() > static_cast<std::size_t>(placed) / 4);
    CHECK(cpu.records.size() < static_cast<std::size_t>(placed) * 3 / 4);
    compare_runs(cpu, cuda);
    CHECK(cpu.out.same_pixels(cuda.out));
  }
}

TEST_CASE("CUDA detection reads rows of any alignment", "[detect][cuda]") {
  // Rows whose length is no multiple of 4 samples are read a sample at a time; rows padded to
  // one are read a word at a time: the same mask, labels and catalogue as the CPU's either way,
  // for every format, with and without a filter and a background mesh.
  const TestImage z = significance_frame(211, 97, 9, 0.8);
  for (const PixelFormat format : {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F}) {
    const TestImage in = scaled_frame(z, format, 100.0f, 12.0f);
    for (const DetectFilter filter : {DetectFilter::None, DetectFilter::Default}) {
      for (const DetectBackground bg : {DetectBackground::None, DetectBackground::Mesh}) {
        DetectParams p;
        p.filter = filter;
        p.background = bg;
        p.mesh = 32;
        p.threshold = bg == DetectBackground::None ? 160.0 : 3.0;
        p.threshold_mode =
            bg == DetectBackground::None ? DetectThreshold::Absolute : DetectThreshold::Sigma;
        p.output = DetectOutput::Labels;
        const Run cpu = run_stage(p, kCpu, in);
        for (const int pad : {0, 1, 3, 16}) {
          INFO(to_string(format) << " " << to_string(filter) << " " << to_string(bg) << " pad "
                                 << pad);
          const int pad_bytes = pad * bytes_per_pixel(format);
          const Run cuda = run_device_form(p, in, pad_bytes);
          CHECK(cpu.records.size() > 5);
          compare_runs(cpu, cuda);
          CHECK(cpu.out.same_pixels(cuda.out));
        }
      }
    }
  }
}

TEST_CASE("CUDA detection with a background mesh finds the CPU's objects", "[detect][cuda]") {
  SkyGenerator sky = gradient_sky(700, 450, 8, 2);
  SkyTruth truth;
  const TestImage in = render_frame(sky, 2, PixelFormat::Gray16, truth, 6);
  for (const DetectBackground bg : {DetectBackground::Mesh, DetectBackground::Global}) {
    INFO(to_string(bg));
    DetectParams p;
    p.background = bg;
    p.mesh = 48;
    const Run cpu = run_stage(p, kCpu, in);
    const Run cuda = run_stage(p, gpu(), in);
    CHECK(cpu.records.size() >= 5);
    compare_runs(cpu, cuda);
  }
}

TEST_CASE("CUDA detection: capacity, empty frames and a frame-filling object", "[detect][cuda]") {
  DetectParams p;
  p.background = DetectBackground::None;
  p.filter = DetectFilter::None;
  p.threshold = 0.5;
  p.min_area = 1;
  p.max_objects = 50;
  TestImage dots(101, 64, PixelFormat::Gray32F);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 101; ++x) dots.view().row_as<float>(y)[x] = (x % 3 == 0 && y % 3 == 0);
  const Run cpu = run_stage(p, kCpu, dots);
  const Run cuda = run_stage(p, gpu(), dots);
  CHECK(cuda.header.count == 50);
  CHECK(cuda.header.overflow == 34 * 22 - 50);
  compare_runs(cpu, cuda);

  TestImage empty(64, 64, PixelFormat::Gray32F);
  CHECK(run_stage(p, gpu(), empty).header.count == 0);

  TestImage full(1024, 1024, PixelFormat::Gray32F);
  for (int y = 0; y < 1024; ++y)
    for (int x = 0; x < 1024; ++x) full.view().row_as<float>(y)[x] = 1.0f + (x + y) % 7;
  const Run f_cpu = run_stage(p, kCpu, full);
  const Run f_cuda = run_stage(p, gpu(), full);
  REQUIRE(f_cuda.header.count == 1);
  CHECK(f_cuda.records[0].npix == 1024u * 1024u);
  compare_runs(f_cpu, f_cuda);
}

TEST_CASE("CUDA detection of a noise mask: one percolating component among many small ones",
          "[detect][cuda]") {
  // Half the pixels on at random: with 8 connectivity one component takes most of them,
  // interleaved with small ones in every run of pixels (the large-object path of the sums, the
  // counts' eviction); with 4 connectivity, many mid-sized ones. Both equal the CPU's.
  TestImage noise(613, 411, PixelFormat::Gray32F);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int y = 0; y < noise.height; ++y)
    for (int x = 0; x < noise.width; ++x) noise.view().row_as<float>(y)[x] = u(rng);
  DetectParams p;
  p.background = DetectBackground::None;
  p.filter = DetectFilter::None;
  p.threshold_mode = DetectThreshold::Absolute;
  p.threshold = 0.5;
  p.min_area = 1;
  p.max_objects = 100000;
  for (const Connectivity c : {Connectivity::Eight, Connectivity::Four}) {
    INFO("connectivity " << static_cast<int>(c));
    p.connectivity = c;
    p.output = DetectOutput::Labels;
    const Run cpu = run_stage(p, kCpu, noise);
    const Run cuda = run_stage(p, gpu(), noise);
    REQUIRE(cpu.records.size() > 100);
    compare_runs(cpu, cuda);
    CHECK(cpu.out.same_pixels(cuda.out));
    std::uint32_t largest = 0;
    for (const DetectedObject& o : cuda.records) largest = std::max(largest, o.npix);
    if (c == Connectivity::Eight)
      CHECK(largest > static_cast<std::uint32_t>(noise.width * noise.height / 4));
  }
}

TEST_CASE("CUDA detection through the engine: each frame's catalogue with it",
          "[detect][cuda][engine]") {
  SkyParams sp = flat_sky(320, 240);
  sp.movers = 5;
  sp.mover_snr_min = 15;
  sp.mover_snr_max = 30;
  SkyGenerator sky(sp, 2);
  SkyTruth truth;
  std::vector<TestImage> frames;
  for (int i = 0; i < 8; ++i) frames.push_back(render_frame(sky, i, PixelFormat::Gray16, truth));
  DetectParams p;
  std::vector<Run> expected;
  for (const TestImage& f : frames) expected.push_back(run_stage(p, kCpu, f));
  for (int depth : {1, 3}) {
    std::vector<std::unique_ptr<FilterStage>> stages;
    stages.push_back(make_detect_stage(p, gpu()));
    auto engine = make_streaming_chain(std::move(stages), gpu(), depth);
    engine->configure({320, 240, PixelFormat::Gray16, 16});
    int out = 0;
    auto take = [&] {
      const FinishedFrame done = engine->wait_oldest();
      REQUIRE(done.results.size() == 1);
      const FrameResult& r = done.results[0];
      const Run& want = expected[done.tag];
      INFO("depth " << depth << " frame " << done.tag);
      REQUIRE(r.header().count == want.header.count);
      for (std::uint32_t k = 0; k < r.header().count; ++k) {
        compare(want.records[k], r.view.records<DetectedObject>()[k]);
      }
      engine->pop();
      ++out;
    };
    for (std::size_t i = 0; i < frames.size(); ++i) {
      if (engine->in_flight() == depth) take();
      engine->submit(frames[i].cview(), i);
    }
    while (engine->in_flight() > 0) take();
    CHECK(out == 8);
  }
}

TEST_CASE("CUDA detection: parameters changed between frames, connectivity included",
          "[detect][cuda]") {
  const TestImage in = significance_frame(160, 96, 21, 0.8);
  DetectParams p;
  p.background = DetectBackground::None;
  p.threshold = 2.5;
  auto cuda = make_detect_stage(p, gpu());
  cuda->configure({160, 96, PixelFormat::Gray32F, 32});
  TestImage out(160, 96, PixelFormat::Gray32F);
  cuda->process(in.cview(), out.view());
  for (const Connectivity c : {Connectivity::Four, Connectivity::Eight}) {
    p.connectivity = c;
    p.threshold = c == Connectivity::Four ? 2.0 : 3.0;
    cuda->set_params(p);
    cuda->process(in.cview(), out.view());
    const Catalogue got = catalogue_of(*cuda);
    const Run cpu = run_stage(p, kCpu, in);
    INFO("connectivity " << static_cast<int>(c));
    REQUIRE(got.header.count == cpu.header.count);
    for (std::size_t k = 0; k < got.records.size(); ++k) compare(cpu.records[k], got.records[k]);
  }
}

TEST_CASE("CUDA line channel: the CPU's mask, labels and catalogue, bit for bit",
          "[detect][cuda][lines]") {
  // Faint streaks (amplitude 1.6 sigma: under the point threshold) at several angles, on noise
  // with blobs; sizes that are not multiples of the 32 x 32 tile, and smaller than a line.
  for (const auto& [w, h] : {std::pair{300, 211}, std::pair{131, 77}, std::pair{45, 37}}) {
    TestImage in = significance_frame(w, h, 7u + w, 0.2);
    add_streak(in, {w * 0.5, h * 0.5, 0.35, w * 0.6, 1.6});
    add_streak(in, {w * 0.3, h * 0.4, 1.9, h * 0.7, 1.6});
    add_streak(in, {w * 0.9, h * 0.2, std::numbers::pi / 4, 60.0, 1.6});  // off the edge
    for (const DetectFilter filter :
         {DetectFilter::None, DetectFilter::Default, DetectFilter::Gaussian}) {
      for (const int length : {5, 15, 31, 63}) {
        INFO(w << "x" << h << ", " << to_string(filter) << ", line-length " << length);
        DetectParams p;
        p.background = DetectBackground::None;
        p.filter = filter;
        p.fwhm = 2.5;
        p.threshold = 4.0;
        p.line_length = length;
        p.line_threshold = 5.0;
        p.output = DetectOutput::Labels;
        const Run cpu = run_stage(p, kCpu, in);
        const Run cuda = run_stage(p, gpu(), in);
        compare_runs(cpu, cuda);
        CHECK(cpu.out.same_pixels(cuda.out));
        p.line_length = 0;
        if (w >= 131 && length >= 15) CHECK(pixels_of(cuda) > pixels_of(run_stage(p, gpu(), in)));
      }
    }
  }
}

TEST_CASE("CUDA line channel on integer frames with a background mesh equals the CPU",
          "[detect][cuda][lines]") {
  SkyGenerator sky = gradient_sky(400, 300, 6, 4);
  SkyTruth truth;
  for (const PixelFormat format : {PixelFormat::Gray16, PixelFormat::Gray8}) {
    const TestImage in = render_frame(sky, 3, format, truth, 6);
    INFO(to_string(format));
    DetectParams p;
    p.background = DetectBackground::Mesh;
    p.mesh = 48;
    p.line_length = 15;
    const Run cpu = run_stage(p, kCpu, in);
    const Run cuda = run_stage(p, gpu(), in);
    CHECK(cpu.records.size() >= 5);
    compare_runs(cpu, cuda);
  }
}

TEST_CASE("CUDA line channel switched on, resized and off between frames",
          "[detect][cuda][lines]") {
  TestImage in = significance_frame(160, 96, 33, 0.3);
  add_streak(in, {80.0, 48.0, 0.8, 90.0, 1.7});
  DetectParams p;
  p.background = DetectBackground::None;
  auto cuda = make_detect_stage(p, gpu());
  cuda->configure({160, 96, PixelFormat::Gray32F, 32});
  TestImage out(160, 96, PixelFormat::Gray32F);
  for (const int length : {15, 31, 0, 9}) {
    p.line_length = length;
    p.filter = length == 31 ? DetectFilter::Gaussian : DetectFilter::Default;
    cuda->set_params(p);
    cuda->process(in.cview(), out.view());
    const Catalogue got = catalogue_of(*cuda);
    const Run cpu = run_stage(p, kCpu, in);
    INFO("line-length " << length);
    REQUIRE(got.header.count == cpu.header.count);
    for (std::size_t k = 0; k < got.records.size(); ++k) compare(cpu.records[k], got.records[k]);
  }
}
