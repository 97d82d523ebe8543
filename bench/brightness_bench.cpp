// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-brightness: the CUDA brightness correction (launch_brightness, mode local)
// on a 4K colour frame and a 4096x4096 12-bit grey one, beside the copy roofline of the same
// frames and the share of its Gaussian blur. JSON on stdout (or --json FILE), progress on
// stderr. bench/README.md says what is measured and how to read it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_kernels.hpp"
#include "bench/frame_set.hpp"
#include "bench/json.hpp"
#include "bench/list_args.hpp"
#include "bench/report.hpp"
#include "bench/roofline.hpp"
#include "bench/timing.hpp"
#include "cuda/brightness/brightness.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_query.hpp"
#include "cuda/gauss/gauss.cuh"
#include "pipeline/brightness/luminance_blur.hpp"
#include "pipeline/brightness/params.hpp"
#include "pipeline/brightness/tent_axis.hpp"
#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"

#ifndef STARSIFT_VERSION
#define STARSIFT_VERSION "unknown"
#endif

namespace starsift::bench {
namespace {

// The spec's target: a 4K RGBA frame corrected at this fraction of the copy roofline or more.
constexpr double kTargetFraction = 0.30;

// The plane mode local blurs, as launch_brightness picks it: from sigma 8 LuminanceBlur's
// small plane (sigma_s on each axis; the exact sums, the recursion from sigma_s 25), below it
// the frame's luminance (Auto).
struct BlurPlane {
  int width;
  int height;
  GaussParams params;
  cuda::GaussPath path;
};

BlurPlane blur_plane(int width, int height, double sigma) {
  BlurPlane b{width, height, {}, cuda::GaussPath::Auto};
  b.params.sigma_x = b.params.sigma_y = sigma;
  b.params.border = BorderMode::Reflect101;
  const int factor = LuminanceBlur::downsample_factor(sigma);
  if (factor == 1) return b;
  b.width = LuminanceBlur::small_samples(width, factor);
  b.height = LuminanceBlur::small_samples(height, factor);
  b.params.sigma_x = LuminanceBlur::small_sigma(sigma, tent_axis::spacing(width, b.width));
  b.params.sigma_y = LuminanceBlur::small_sigma(sigma, tent_axis::spacing(height, b.height));
  b.path = std::max(b.params.sigma_x, b.params.sigma_y) >= GaussParams::kRecursiveFromSigma
               ? cuda::GaussPath::Recursive
               : cuda::GaussPath::Separable;
  return b;
}

struct FrameCase {
  Resolution size;
  PixelFormat format;
  int bit_depth;
};

struct Options {
  std::vector<FrameCase> frames{{{3840, 2160}, PixelFormat::Rgba, 8},
                                {{4096, 4096}, PixelFormat::Gray16, 12}};
  double sigma = 40.0;
  double strength = 1.0;
  std::vector<BrightnessMode> modes{BrightnessMode::Local};
  std::vector<BrightnessStretch> stretches{BrightnessStretch::Percentile, BrightnessStretch::None};
  std::string data = "random";
  TimingPlan plan;
  bool quick = false;
  int device = 0;
  std::uint64_t seed = 1;
  std::string json_path;
  std::string commit;
};

constexpr const char* kUsage = R"(usage: starsift-bench-brightness [options]

Times the CUDA brightness correction (mode local: luminance, Gaussian blur, power, stretch,
colour scaling) on frames rotated beyond the L2, next to the device's copy bandwidth on the
same frames (the memory roofline) and the Gaussian blur of the luminance alone (from sigma 8
on the small plane the correction blurs).

  --rgba-size WxH      the colour frames [3840x2160]; 0x0 to leave them out
  --gray-size WxH      the GRAY16_LE frames [4096x4096]; 0x0 to leave them out
  --bit-depth N        of the GRAY16_LE frames [12]
  --modes LIST         local, clahe (tiles 8x8, clip limit 2) [local]
  --sigma S            the blur of the luminance, px [40]
  --strength S         [1]
  --stretches LIST     percentile, fixed, none [percentile,none]
  --data KIND          random (uniform over the bit depth) or sky (a synthetic sky frame,
                       colour frames its grey in R, G and B) [random]
  --reps N             repetitions per measurement; the median is reported [5]
  --target-ms MS       GPU time per repetition [100]
  --quick              smoke run: 1 repetition of ~20 ms
  --device N           CUDA device [0]
  --seed N             seed of the random frames [1]
  --commit STR         recorded as "commit" in the JSON
  --json FILE          write the JSON there instead of stdout
)";

Options parse_options(int argc, char** argv) {
  Options o;
  bool reps_given = false;
  bool target_given = false;
  std::optional<Resolution> rgba, gray;
  int bit_depth = 12;
  for (OptionReader options(argc, argv); options.advance();) {
    const std::string& arg = options.arg();
    const auto next = [&] { return options.value(); };
    const auto size = [&]() -> Resolution {
      const std::string v = next();
      if (v == "0x0") return {0, 0};
      return parse_resolution(v, arg);
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--rgba-size") {
      rgba = size();
    } else if (arg == "--gray-size") {
      gray = size();
    } else if (arg == "--bit-depth") {
      bit_depth = parse_number<int>(next(), arg);
    } else if (arg == "--sigma") {
      o.sigma = parse_number<double>(next(), arg);
    } else if (arg == "--strength") {
      o.strength = parse_number<double>(next(), arg);
    } else if (arg == "--modes") {
      o.modes.clear();
      for (const std::string& m : split_nonempty(next()))
        o.modes.push_back(parse_brightness_mode(m));
    } else if (arg == "--stretches") {
      o.stretches.clear();
      for (const std::string& s : split_nonempty(next())) {
        o.stretches.push_back(parse_brightness_stretch(s));
      }
    } else if (arg == "--data") {
      o.data = next();
      if (o.data != "random" && o.data != "sky") throw Error("--data " + o.data, "random, sky");
    } else if (arg == "--reps") {
      o.plan.reps = std::max(1, parse_number<int>(next(), arg));
      reps_given = true;
    } else if (arg == "--target-ms") {
      o.plan.target_ms = std::max(0.01, parse_number<double>(next(), arg));
      target_given = true;
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--device") {
      o.device = parse_number<int>(next(), arg);
    } else if (arg == "--seed") {
      o.seed = parse_number<std::uint64_t>(next(), arg);
    } else if (arg == "--commit") {
      o.commit = next();
    } else if (arg == "--json") {
      o.json_path = next();
    } else {
      throw Error("unknown option '" + arg + "'", "see --help");
    }
  }
  if (o.quick) {
    if (!reps_given) o.plan.reps = 1;
    if (!target_given) o.plan.target_ms = 20.0;
  }
  o.frames[0].size = rgba.value_or(o.frames[0].size);
  o.frames[1].size = gray.value_or(o.frames[1].size);
  o.frames[1].bit_depth = bit_depth;
  std::erase_if(o.frames, [](const FrameCase& f) { return f.size.width == 0; });
  for (const FrameCase& f : o.frames) {
    FrameShape{f.size.width, f.size.height, f.format, f.bit_depth}.validate();
  }
  BrightnessParams p;
  p.sigma = o.sigma;
  p.strength = o.strength;
  p.validate();
  if (o.frames.empty() || o.stretches.empty() || o.modes.empty()) {
    throw Error("nothing to run: no frames, or an empty --modes or --stretches");
  }
  return o;
}

double gpix_per_s(double pixels, double ms) {
  return pixels / (ms * 1e-3) * 1e-9;
}

// Device bytes (cudaMalloc): the scratch.
class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes) {
    const cudaError_t s = cudaMalloc(&ptr_, bytes);
    if (s != cudaSuccess) {
      cudaGetLastError();
      ptr_ = nullptr;
      throw Error(cuda_error("cannot allocate " + std::to_string(bytes) + " bytes", s));
    }
    bytes_ = bytes;
  }
  ~DeviceBytes() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Replaces the random bits of every input frame with what the case's frames hold: samples
// within the bit depth (random), or a synthetic sky frame (sky). Before any timing.
void prepare_inputs(const FrameSet& fs, const FrameCase& c, const Options& o) {
  const std::size_t row = static_cast<std::size_t>(fs.width()) * fs.bpp();
  std::vector<std::byte> host(row * static_cast<std::size_t>(fs.height()));
  if (o.data == "sky") {
    SkyParams sky;
    sky.width = fs.width();
    sky.height = fs.height();
    sky.bit_depth = c.format == PixelFormat::Gray16 ? c.bit_depth : 8;
    sky.seed = o.seed;
    SkyGenerator generator(sky);
    SkyTruth truth;
    const PixelFormat grey =
        c.format == PixelFormat::Gray16 ? PixelFormat::Gray16 : PixelFormat::Gray8;
    std::vector<std::byte> plane(static_cast<std::size_t>(fs.width()) * bytes_per_pixel(grey) *
                                 static_cast<std::size_t>(fs.height()));
    generator.render(0,
                     {plane.data(), fs.width(), fs.height(),
                      static_cast<std::ptrdiff_t>(fs.width()) * bytes_per_pixel(grey), grey},
                     truth);
    if (grey == c.format) {
      host = std::move(plane);
    } else {
      for (std::size_t i = 0; i < plane.size(); ++i) {
        for (int ch = 0; ch < 3; ++ch) host[4 * i + ch] = plane[i];
        host[4 * i + 3] = std::byte{255};
      }
    }
  }
  for (int i = 0; i < fs.frames(); ++i) {
    const ConstImageView in = fs.in(i);
    auto* device = const_cast<std::byte*>(in.data);  // the inputs, set once before timing
    if (o.data == "random") {
      if (c.format != PixelFormat::Gray16 || c.bit_depth == 16) continue;
      cuda::check(
          cudaMemcpy2D(host.data(), row, device, in.stride, row, in.height, cudaMemcpyDeviceToHost),
          "download");
      const auto mask = static_cast<std::uint16_t>((1u << c.bit_depth) - 1);
      auto* samples = reinterpret_cast<std::uint16_t*>(host.data());
      for (std::size_t k = 0; k < host.size() / 2; ++k) samples[k] &= mask;
    }
    cuda::check(
        cudaMemcpy2D(device, in.stride, host.data(), row, row, in.height, cudaMemcpyHostToDevice),
        "upload");
  }
}

class Bench {
 public:
  Bench(const Options& o, std::size_t l2_bytes) : o_(o), l2_bytes_(l2_bytes) {}

  Json copy_bandwidth = Json::array();
  Json cases = Json::array();
  std::string aborted;
  int failures = 0;
  std::optional<double> target_fraction;  // the 4K colour percentile case's, when run

  void run() {
    for (const FrameCase& c : o_.frames) {
      std::cerr << "frames " << resolution_name(c.size.width, c.size.height) << " "
                << to_string(c.format) << ": allocating and filling\n";
      try {
        const FrameSet fs(c.size, c.format, l2_bytes_, o_.seed, stream_.get());
        prepare_inputs(fs, c, o_);
        run_frames(fs, c);
      } catch (const std::exception& e) {
        aborted = e.what();
      }
      if (!aborted.empty()) return;
    }
  }

 private:
  void run_frames(const FrameSet& fs, const FrameCase& c) {
    CopyBandwidth copy = measure_copy_bandwidth(fs, o_.plan, stream_.get());
    const double copy_bps = copy.bytes_per_s;
    copy_bandwidth.push(std::move(copy.json));
    if (const std::string lost = context_lost(); !lost.empty()) {
      aborted = lost;
      return;
    }
    const FrameShape shape{fs.width(), fs.height(), fs.format(), c.bit_depth};
    const double roofline_gpix = copy.roofline_pix_per_s(fs.bpp()) * 1e-9;
    // One scratch for every call (the most any mode needs): calls on one stream never overlap.
    std::size_t scratch_bytes = 0;
    for (const BrightnessMode mode : o_.modes) {
      scratch_bytes =
          std::max(scratch_bytes, cuda::brightness_scratch_bytes(params_for(mode), shape));
    }
    const DeviceBytes scratch(scratch_bytes);

    // The blur of the luminance alone (mode local's): launch_gauss on the float plane the
    // correction blurs (the small plane from sigma 8).
    double blur_ms = NAN;
    if (std::find(o_.modes.begin(), o_.modes.end(), BrightnessMode::Local) != o_.modes.end()) {
      const BlurPlane plane = blur_plane(fs.width(), fs.height(), o_.sigma);
      cuda::DeviceImage luma(static_cast<std::size_t>(plane.width) * 4, plane.height);
      cuda::DeviceImage blurred(static_cast<std::size_t>(plane.width) * 4, plane.height);
      const ImageView y{luma.data(), plane.width, plane.height,
                        static_cast<std::ptrdiff_t>(luma.pitch()), PixelFormat::Gray32F};
      const ImageView b{blurred.data(), plane.width, plane.height,
                        static_cast<std::ptrdiff_t>(blurred.pitch()), PixelFormat::Gray32F};
      cuda::check(fill_random(y, o_.seed, 7, stream_.get()), "fill_random");
      const DeviceBytes gauss_scratch(cuda::gauss_scratch_bytes(
          cuda::GaussPath::Auto, plane.width, plane.height, PixelFormat::Gray32F));
      const GaussParams& g = plane.params;
      const cuda::GaussPath path =
          plane.path == cuda::GaussPath::Auto ? cuda::gauss_auto_path(g) : plane.path;
      std::string error;
      const Launch launch = [&](int) -> const char* {
        const cudaError_t s = cuda::launch_gauss(g, const_view(y), b, gauss_scratch.data(),
                                                 gauss_scratch.size(), stream_.get(), path);
        if (s == cudaSuccess) return nullptr;
        error = cuda_error("launch_gauss", s);
        return error.c_str();
      };
      const Timing t = measure(stream_.get(), 1, o_.plan, launch);
      Json j = head(fs, c, "blur")
                   .set("gauss_path", cuda::to_string(path))
                   .set("plane_width", plane.width)
                   .set("plane_height", plane.height)
                   .set("sigma_x", g.sigma_x)
                   .set("sigma_y", g.sigma_y)
                   .set("frames", 1)
                   .set("cache", "one float plane in, one out (as inside the correction)");
      if (!t.error.empty()) {
        j.set("error", t.error);
        ++failures;
      } else {
        blur_ms = t.ms_median;
        j.set("ms_median", t.ms_median).set("timing", timing_json(t));
        std::fprintf(stderr, "%s %s blur of Y alone (sigma %g: %dx%d plane, %s): %.4f ms\n",
                     resolution_name(fs.width(), fs.height()).c_str(),
                     std::string(to_string(fs.format())).c_str(), o_.sigma, plane.width,
                     plane.height, std::string(cuda::to_string(path)).c_str(), t.ms_median);
      }
      cases.push(std::move(j));
      if (std::string lost = context_lost(); !lost.empty()) {
        aborted = std::move(lost);
        return;
      }
    }

    for (const BrightnessMode mode : o_.modes) {
      for (const BrightnessStretch stretch : o_.stretches) {
        run_case(fs, c, shape, mode, stretch, scratch, blur_ms, copy_bps, roofline_gpix);
        if (!aborted.empty()) return;
      }
    }
  }

  // The parameters timed: mode local at --sigma and --strength, or clahe on 8x8 tiles.
  BrightnessParams params_for(BrightnessMode mode) const {
    BrightnessParams p;
    p.mode = mode;
    p.sigma = o_.sigma;
    p.strength = o_.strength;
    return p;
  }

  void run_case(const FrameSet& fs, const FrameCase& c, const FrameShape& shape,
                BrightnessMode mode, BrightnessStretch stretch, const DeviceBytes& scratch,
                double blur_ms, double copy_bps, double roofline_gpix) {
    BrightnessParams p = params_for(mode);
    p.stretch = stretch;
    if (stretch == BrightnessStretch::Fixed) {
      p.stretch_min = 0.05 * brightness_sample_max(shape);
      p.stretch_max = 0.95 * brightness_sample_max(shape);
    }
    std::string error;
    // As the stage runs it: the tent tables built by the first call of a size and sigma.
    cuda::BrightnessTables tables;
    const Launch launch = [&](int i) -> const char* {
      const cudaError_t s =
          cuda::launch_brightness(p, shape, fs.in(i), fs.out(i), scratch.data(), scratch.size(),
                                  stream_.get(), cuda::GaussPath::Auto, &tables);
      if (s == cudaSuccess) return nullptr;
      error = cuda_error("launch_brightness", s);
      return error.c_str();
    };
    cudaGetLastError();
    const Timing t = measure(stream_.get(), fs.frames(), o_.plan, launch);
    const bool local = mode == BrightnessMode::Local;
    Json j = head(fs, c, "correction")
                 .set("mode", to_string(mode))
                 .set("stretch", to_string(stretch))
                 .set("frames", fs.frames())
                 .set("cache", "rotating")
                 .set("scratch_bytes", static_cast<unsigned long long>(scratch.size()));
    if (!local) {
      j.set("sigma", nullptr)
          .set("strength", nullptr)
          .set("tiles", "8x8")
          .set("clip_limit", p.clip_limit);
    }
    const std::string label =
        resolution_name(fs.width(), fs.height()) + " " + std::string(to_string(fs.format())) + " " +
        std::string(to_string(mode)) + " stretch " + std::string(to_string(stretch));
    if (!t.error.empty()) {
      j.set("error", t.error);
      cases.push(std::move(j));
      ++failures;
      std::cerr << label << ": FAILED: " << t.error << "\n";
      aborted = context_lost();
      return;
    }
    const double gpix = gpix_per_s(static_cast<double>(fs.width()) * fs.height(), t.ms_median);
    const double fraction = roofline_gpix > 0 ? gpix / roofline_gpix : NAN;
    const bool blur_known = local && std::isfinite(blur_ms);
    j.set("ms_median", t.ms_median)
        .set("gpix_per_s", gpix)
        .set("roofline_gpix_per_s", roofline_gpix)
        .set("copy_gbps", copy_bps * 1e-9)
        .set("fraction_of_roofline", fraction)
        .set("blur_ms", blur_known ? Json(blur_ms) : Json(nullptr))
        .set("blur_share", blur_known ? Json(blur_ms / t.ms_median) : Json(nullptr))
        .set("timing", timing_json(t));
    if (stretch == BrightnessStretch::Percentile) j.set("stretch_range", range_json(fs, shape, p));
    if (local && c.format == PixelFormat::Rgba && fs.width() == 3840 && fs.height() == 2160 &&
        stretch == BrightnessStretch::Percentile) {
      target_fraction = fraction;
      j.set("target_fraction", kTargetFraction).set("meets_target", fraction >= kTargetFraction);
    }
    cases.push(std::move(j));
    std::fprintf(stderr, "%s: %.4f ms, %.2f Gpix/s (%.1f%% of the copy roofline, %.2f Gpix/s)\n",
                 label.c_str(), t.ms_median, gpix, 100.0 * fraction, roofline_gpix);
  }

  Json head(const FrameSet& fs, const FrameCase& c, const char* what) const {
    return Json::object()
        .set("filter", "brightness")
        .set("what", what)
        .set("mode", "local")
        .set("format", to_string(fs.format()))
        .set("bit_depth", c.bit_depth)
        .set("width", fs.width())
        .set("height", fs.height())
        .set("bytes_per_pixel", fs.bpp())
        .set("sigma", o_.sigma)
        .set("strength", o_.strength)
        .set("data", o_.data);
  }

  // The percentile's lo and hi on frame 0, after one more call: a sanity value.
  Json range_json(const FrameSet& fs, const FrameShape& shape, const BrightnessParams& p) {
    const DeviceBytes scratch(cuda::brightness_scratch_bytes(p, shape));
    cuda::BrightnessStretchRange range;
    cudaError_t s = cuda::launch_brightness(p, shape, fs.in(0), fs.out(0), scratch.data(),
                                            scratch.size(), stream_.get());
    if (s == cudaSuccess) {
      s = cudaMemcpyAsync(&range, cuda::brightness_stretch_range(scratch.data()), sizeof range,
                          cudaMemcpyDeviceToHost, stream_.get());
    }
    if (s == cudaSuccess) s = cudaStreamSynchronize(stream_.get());
    if (s != cudaSuccess) return Json(cuda_error("stretch range", s));
    return Json::object().set("low", range.low).set("high", range.high).set("scale", range.scale);
  }

  const Options& o_;
  std::size_t l2_bytes_;
  cuda::Stream stream_;
};

int run(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "starsift-bench-brightness: " << e.what() << "\n";
    return 2;
  }
  const std::optional<Device> opened = open_device(o.device, "starsift-bench-brightness");
  if (!opened) return 1;
  const Device& device = *opened;

  Json stretches = Json::array();
  for (const BrightnessStretch s : o.stretches) stretches.push(to_string(s));
  Json modes = Json::array();
  for (const BrightnessMode m : o.modes) modes.push(to_string(m));
  Json method =
      rotating_method(o.plan)
          .set("data", o.data == "random" ? "uniform random samples within the bit depth"
                                          : "a synthetic sky frame (SkyGenerator, frame 0)")
          .set("seed", static_cast<unsigned long long>(o.seed))
          .set("modes", std::move(modes))
          .set("clahe", "tiles 8x8, clip limit 2 (BrightnessParams' defaults)")
          .set("stretches", std::move(stretches))
          .set("blur",
               "the blur of Y alone: launch_gauss, reflect-101, on the float plane mode local "
               "blurs (from sigma 8 LuminanceBlur's small plane at sigma_s, Separable, "
               "Recursive from sigma_s 50; below, the luminance plane, Auto); inside the "
               "correction the small plane's blur is one kernel up to radius 32")
          .set("scratch", "brightness_scratch_bytes (the most of the modes), once per frame set")
          .set("roofline",
               "max(copy kernel, cudaMemcpy2DAsync) over the same frames, bytes read+written "
               "per second; a correction reads and writes each pixel at least once")
          .set("target",
               "3840x2160 RGBA at >= 30 % of the roofline with stretch none (the default); the "
               "percentile stretch reads the frame once more, for its histogram")
          .set("quick", o.quick);

  Json out = Json::object()
                 .set("benchmark", "brightness")
                 .set("tool", "starsift-bench-brightness")
                 .set("starsift_version", STARSIFT_VERSION)
                 .set("date_utc", utc_now())
                 .set("device", device.json)
                 .set("method", std::move(method));
  if (!o.commit.empty()) out.set("commit", o.commit);

  Bench bench(o, static_cast<std::size_t>(device.prop.l2CacheSize));
  bench.run();
  out.set("copy_bandwidth", std::move(bench.copy_bandwidth)).set("cases", std::move(bench.cases));
  if (bench.target_fraction) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "target: 3840x2160 RGBA at %.1f%% of the copy roofline (%s 30%%)\n",
                  100.0 * *bench.target_fraction,
                  *bench.target_fraction >= kTargetFraction ? "meets" : "below");
    std::cerr << line;
  }
  return finish_run(out, o.json_path, "starsift-bench-brightness", bench.aborted, bench.failures,
                    "case(s) failed");
}

}  // namespace
}  // namespace starsift::bench

int main(int argc, char** argv) {
  return starsift::bench::guarded_main("starsift-bench-brightness", starsift::bench::run, argc,
                                       argv);
}
