// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/demo.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "app/cli.hpp"
#include "app/frame_compare.hpp"
#include "app/host_image.hpp"
#include "app/montage.hpp"
#include "app/png_writer.hpp"
#include "app/synthetic.hpp"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/median/params.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift::app {

namespace {

constexpr int kMinSide = 16;
constexpr int kMaxSide = 16384;
constexpr int kMaxFrames = 100000;
// A pixel further than this many noise sigmas from the truth counts as an impulse.
constexpr double kImpulseSigma = 5.0;
constexpr const char* kPictureName = "median_before_after.png";

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int parse_median_size(std::string_view flag, std::string_view text) {
  const int size = parse_int(flag, text, MedianParams::kMinSize, MedianParams::kMaxSize);
  if (size % 2 == 0) {
    throw UsageError(std::string(flag) + " '" + std::string(text) + "' is even",
                     "odd values " + std::to_string(MedianParams::kMinSize) + ".." +
                         std::to_string(MedianParams::kMaxSize));
  }
  return size;
}

std::string window_name(int size) {
  return std::to_string(size) + "x" + std::to_string(size);
}

}  // namespace

void print_demo_help() {
  std::printf(
      "usage: starsift demo [options]\n"
      "\n"
      "Generates a noisy synthetic star field (GRAY16: Gaussian stars with power-law\n"
      "fluxes on a sky gradient, read and photon noise, salt-and-pepper and hot pixels),\n"
      "median-filters every frame, prints timings and how many impulse pixels (more than\n"
      "5 sigma from the clean sky) remain, and writes DIR/%s:\n"
      "the last frame before | after filtering.\n"
      "\n"
      "options:\n"
      "  --out DIR            where the picture goes (created if missing) [out]\n"
      "  --size N             median window side, odd %d..%d [5]\n"
      "  --border MODE        %s [reflect-101]\n"
      "  --frames N           frames to generate and filter, 1..%d [8]\n"
      "  --width W            frame width, %d..%d [1024]\n"
      "  --height H           frame height, %d..%d [1024]\n"
      "  --backend B          auto, cuda, cpu [auto: CUDA when usable, else CPU]\n"
      "  --device-id N        CUDA device, 0..%d [0]\n"
      "  --seed S             random seed; equal seeds give equal frames [1]\n"
      "  -h, --help           this text\n",
      kPictureName, MedianParams::kMinSize, MedianParams::kMaxSize, border_mode_names().c_str(),
      kMaxFrames, kMinSide, kMaxSide, kMinSide, kMaxSide, kMaxDeviceId);
}

DemoOptions parse_demo_options(std::span<char* const> args, bool& help) {
  DemoOptions o;
  help = false;
  ArgReader reader(args);
  while (!reader.done()) {
    const std::string_view flag = reader.next_flag();
    if (flag == "-h" || flag == "--help") {
      help = true;
    } else if (flag == "--out") {
      o.out_dir = reader.path_value();
    } else if (flag == "--size") {
      o.size = parse_median_size(flag, reader.value());
    } else if (flag == "--border") {
      const std::string_view text = reader.value();
      try {
        o.border = parse_border_mode(text);
      } catch (const Error&) {
        throw UsageError("--border '" + std::string(text) + "' is not allowed",
                         border_mode_names());
      }
    } else if (flag == "--frames") {
      o.frames = parse_int(flag, reader.value(), 1, kMaxFrames);
    } else if (flag == "--width") {
      o.width = parse_int(flag, reader.value(), kMinSide, kMaxSide);
    } else if (flag == "--height") {
      o.height = parse_int(flag, reader.value(), kMinSide, kMaxSide);
    } else if (flag == "--backend") {
      o.backend = parse_backend_flag(flag, reader.value());
    } else if (flag == "--device-id") {
      o.device_id = parse_int(flag, reader.value(), 0, kMaxDeviceId);
    } else if (flag == "--seed") {
      o.seed = parse_u64(flag, reader.value());
    } else {
      throw UsageError("unknown option '" + std::string(flag) + "'",
                       "--out, --size, --border, --frames, --width, --height, --backend, "
                       "--device-id, --seed, --help");
    }
  }
  return o;
}

int run_demo(const DemoOptions& o) {
  MedianParams params;
  params.size = o.size;
  params.border = o.border;
  params.validate();

  SkyParams sky_params;
  sky_params.width = o.width;
  sky_params.height = o.height;
  sky_params.seed = o.seed;

  std::printf("starsift demo: %d frame%s of %dx%d GRAY16 synthetic sky, seed %llu\n", o.frames,
              o.frames == 1 ? "" : "s", o.width, o.height, static_cast<unsigned long long>(o.seed));
  std::fflush(stdout);

  // The output directory and the backend first: what cannot work stops before any work.
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) {
    throw Error("--out: cannot create directory '" + o.out_dir.string() + "': " + ec.message(),
                "a directory that can be created and written");
  }
  const std::filesystem::path picture_path = o.out_dir / kPictureName;
  const BackendChoice choice = resolve_backend(o.backend, o.device_id);
  auto stage = make_median_stage(params, choice);
  stage->configure(FrameShape{o.width, o.height, PixelFormat::Gray16, 16});

  const auto sky_start = Clock::now();
  const SyntheticSky sky(sky_params);
  std::printf(
      "  sky:    %d stars (Gaussian PSF, sigma %.1f px, power-law peaks from %.0f ADU), "
      "background %.0f..%.0f ADU\n"
      "          read noise %.0f ADU + photon noise, %.2f%% salt-and-pepper per frame, "
      "%.2f%% hot pixels\n",
      sky.star_count(), sky_params.psf_sigma, sky_params.min_peak, sky_params.sky_level,
      sky_params.sky_level + sky_params.gradient_x + sky_params.gradient_y, sky_params.read_noise,
      100.0 * sky_params.salt_pepper, 100.0 * sky_params.hot_pixels);
  std::printf("  median: %s, border %s, backend %s: %s\n", window_name(o.size).c_str(),
              std::string(to_string(o.border)).c_str(),
              std::string(to_string(choice.backend)).c_str(), choice.reason.c_str());

  // The truth for each side: the clean sky before, the clean sky filtered the same way
  // after (a median also reshapes star cores; only what the noise left behind should count).
  HostImage clean(o.width, o.height, PixelFormat::Gray16);
  HostImage clean_filtered(o.width, o.height, PixelFormat::Gray16);
  sky.render_clean(clean.view());
  stage->process(clean.cview(), clean_filtered.view());
  std::printf("  ready in %.0f ms\n", ms_since(sky_start));
  std::fflush(stdout);

  HostImage noisy(o.width, o.height, PixelFormat::Gray16);
  HostImage filtered(o.width, o.height, PixelFormat::Gray16);
  ThreadPool pool;
  std::vector<double> times_ms;
  std::int64_t impulses_before = 0;
  std::int64_t impulses_after = 0;
  double rms_before = 0.0;
  double rms_after = 0.0;
  for (int i = 0; i < o.frames; ++i) {
    sky.render_noisy(i, noisy.view(), pool);
    const auto start = Clock::now();
    stage->process(noisy.cview(), filtered.view());
    const double ms = ms_since(start);
    times_ms.push_back(ms);

    const FrameComparison before =
        compare_to_truth(noisy.cview(), clean.cview(), sky, kImpulseSigma);
    const FrameComparison after =
        compare_to_truth(filtered.cview(), clean_filtered.cview(), sky, kImpulseSigma);
    impulses_before += before.outliers;
    impulses_after += after.outliers;
    rms_before += before.rms / o.frames;
    rms_after += after.rms / o.frames;
    std::printf(
        "frame %*d/%d: median %8.2f ms | impulse pixels %7lld -> %lld | rms %.1f -> %.1f ADU\n",
        static_cast<int>(std::to_string(o.frames).size()), i + 1, o.frames, ms,
        static_cast<long long>(before.outliers), static_cast<long long>(after.outliers), before.rms,
        after.rms);
    std::fflush(stdout);
  }

  const std::string after_label =
      "after: median " + window_name(o.size) + " (" + std::string(to_string(choice.backend)) + ")";
  const HostImage picture =
      make_before_after(noisy.cview(), filtered.cview(), "before", after_label);
  write_png_gray8(picture_path, picture.cview());

  double total_ms = 0.0;
  for (double t : times_ms) total_ms += t;
  const double mean_ms = total_ms / static_cast<double>(times_ms.size());
  const auto [min_it, max_it] = std::minmax_element(times_ms.begin(), times_ms.end());
  const double megapixels = static_cast<double>(o.width) * o.height / 1.0e6;
  std::printf(
      "\nsummary\n"
      "  backend   %s\n"
      "  why       %s\n"
      "  frames    %d x %dx%d GRAY16\n"
      "  median    %s %s: %.2f ms/frame (min %.2f, max %.2f), %.1f Mpixel/s, host memory in "
      "and out\n"
      "  impulses  %lld pixels more than %.0f sigma from the clean sky before filtering, "
      "%lld after\n"
      "  noise     rms %.1f ADU before, %.1f ADU after (impulse pixels left out; after is "
      "measured against the clean sky filtered the same way)\n"
      "  picture   %s (last frame: before | after)\n",
      std::string(to_string(choice.backend)).c_str(), choice.reason.c_str(), o.frames, o.width,
      o.height, window_name(o.size).c_str(), std::string(to_string(o.border)).c_str(), mean_ms,
      *min_it, *max_it, megapixels * 1000.0 / mean_ms, static_cast<long long>(impulses_before),
      kImpulseSigma, static_cast<long long>(impulses_after), rms_before, rms_after,
      picture_path.string().c_str());
  return 0;
}

}  // namespace starsift::app
