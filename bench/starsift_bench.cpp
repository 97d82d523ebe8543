// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench: the CUDA median against the memory roofline and NPP, measured in one run on
// the same frames. JSON on stdout (or --json FILE), progress on stderr. bench/README.md says
// what is measured and how to read it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
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
#include "bench/peers/npp_loader.hpp"
#include "bench/report.hpp"
#include "bench/roofline.hpp"
#include "bench/timing.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_query.hpp"
#include "cuda/median/median.cuh"
#include "pipeline/border.hpp"
#include "pipeline/error.hpp"
#include "pipeline/median/params.hpp"

#ifndef STARSIFT_VERSION
#define STARSIFT_VERSION "unknown"
#endif

namespace starsift::bench {
namespace {

using cuda::MedianSchedule;

constexpr std::array kSchedules{MedianSchedule::Auto, MedianSchedule::Network,
                                MedianSchedule::NetworkUnpacked, MedianSchedule::Tracking};

struct Options {
  std::vector<int> sizes{3, 5, 7, 9, 11, 13, 15};
  std::vector<PixelFormat> formats{PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F,
                                   PixelFormat::Rgba};
  std::vector<Resolution> resolutions{{1920, 1080}, {4096, 4096}};
  std::vector<MedianSchedule> schedules{MedianSchedule::Auto};
  bool all_schedules = false;  // every schedule that supports the case
  BorderMode border = BorderMode::Reflect101;
  TimingPlan plan;
  bool check = false;
  bool quick = false;
  bool npp = true;
  int device = 0;
  std::uint64_t seed = 1;
  std::string json_path;
  std::string commit;
};

constexpr const char* kUsage = R"(usage: starsift-bench [options]

Times the CUDA median filter on frames rotated beyond the L2, next to the device's copy
bandwidth (the memory roofline) and NPP's nppiFilterMedian on the same frames.

  --sizes LIST         odd window sides [3,5,7,9,11,13,15]
  --formats LIST       GRAY8,GRAY16_LE,GRAY32F,RGBA (also BGRA, RGBx, BGRx) [all four]
  --resolutions LIST   WxH,... [1920x1080,4096x4096]
  --schedules S        auto, all (every schedule that supports the case), or a list of
                       schedule names [auto]
  --border NAME        reflect-101, replicate, constant [reflect-101]
  --reps N             repetitions per measurement; the median is reported [5]
  --target-ms MS       GPU time per repetition [100]
  --check              also compare the interior of each output with NPP's
  --quick              smoke run: sizes 3,7,15 (unless --sizes), 1 repetition of ~20 ms
  --no-npp             do not load NPP
  --device N           CUDA device [0]
  --seed N             seed of the random frames [1]
  --commit STR         recorded as "commit" in the JSON
  --json FILE          write the JSON there instead of stdout
)";

// ---- Option parsing --------------------------------------------------------------------

MedianSchedule parse_schedule(std::string_view name) {
  return parse_named(
      name, kSchedules, [](MedianSchedule s) { return cuda::to_string(s); }, "--schedules",
      "schedule");
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool sizes_given = false;
  bool reps_given = false;
  bool target_given = false;
  for (OptionReader options(argc, argv); options.advance();) {
    const std::string& arg = options.arg();
    const auto next = [&] { return options.value(); };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--sizes") {
      o.sizes.clear();
      for (const std::string& s : split_nonempty(next())) {
        o.sizes.push_back(parse_number<int>(s, arg));
      }
      sizes_given = true;
    } else if (arg == "--formats") {
      o.formats.clear();
      for (const std::string& s : split_nonempty(next())) {
        o.formats.push_back(parse_pixel_format(s));
      }
    } else if (arg == "--resolutions") {
      o.resolutions.clear();
      for (const std::string& s : split_nonempty(next())) {
        o.resolutions.push_back(parse_resolution(s, arg));
      }
    } else if (arg == "--schedules") {
      const std::string v = next();
      o.schedules.clear();
      o.all_schedules = normalized_name(v) == "all";
      if (o.all_schedules) {
        o.schedules.assign(kSchedules.begin(), kSchedules.end());
      } else {
        for (const std::string& s : split_nonempty(v)) o.schedules.push_back(parse_schedule(s));
      }
    } else if (arg == "--border") {
      o.border = parse_border_mode(next());
    } else if (arg == "--reps") {
      o.plan.reps = std::max(1, parse_number<int>(next(), arg));
      reps_given = true;
    } else if (arg == "--target-ms") {
      o.plan.target_ms = std::max(0.01, parse_number<double>(next(), arg));
      target_given = true;
    } else if (arg == "--check") {
      o.check = true;
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--no-npp") {
      o.npp = false;
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
    if (!sizes_given) o.sizes = {3, 7, 15};
    if (!reps_given) o.plan.reps = 1;
    if (!target_given) o.plan.target_ms = 20.0;
  }
  for (const int size : o.sizes) MedianParams{size, o.border, 0.0}.validate();
  if (o.sizes.empty() || o.formats.empty() || o.resolutions.empty() || o.schedules.empty()) {
    throw Error("nothing to run: an empty --sizes, --formats, --resolutions or --schedules");
  }
  return o;
}

// ---- The benchmark ---------------------------------------------------------------------------

class Bench {
 public:
  Bench(const Options& o, const npp::Library& lib, std::size_t l2_bytes)
      : o_(o), npp_(lib), l2_bytes_(l2_bytes), result_(2 * sizeof(unsigned long long), 1) {}

  Json copy_bandwidth = Json::array();
  Json cases = Json::array();
  std::string aborted;  // not empty: the run stopped early, and why
  int failures = 0;     // cases with an error, or whose check found differences

  void run() {
    for (const Resolution r : o_.resolutions) {
      for (const PixelFormat f : o_.formats) {
        std::cerr << "frames " << resolution_name(r.width, r.height) << " " << to_string(f)
                  << ": allocating and filling\n";
        std::optional<FrameSet> frames;
        try {
          frames.emplace(r, f, l2_bytes_, o_.seed, stream_.get());
        } catch (const std::exception& e) {
          aborted = e.what();
          return;
        }
        run_format(*frames);
        if (!aborted.empty()) return;
      }
    }
  }

 private:
  void run_format(const FrameSet& fs) {
    // The roofline for these frames: a copy kernel and cudaMemcpy2DAsync, the faster one.
    CopyBandwidth copy = measure_copy_bandwidth(fs, o_.plan, stream_.get());
    copy_bps_ = copy.bytes_per_s;
    copy_bandwidth.push(std::move(copy.json));
    if (const std::string lost = context_lost(); !lost.empty()) {
      aborted = lost;
      return;
    }
    std::optional<cuda::DeviceImage> npp_reference;
    if (o_.check && npp_.available()) {
      npp_reference.emplace(static_cast<std::size_t>(fs.width()) * fs.bpp(), fs.height());
    }
    for (const int size : o_.sizes) {
      const NppResult peer = run_npp(fs, size, npp_reference ? &*npp_reference : nullptr);
      if (!aborted.empty()) return;
      for (const MedianSchedule schedule : o_.schedules) {
        if (!cuda::median_schedule_supports(schedule, size, fs.format())) {
          if (!o_.all_schedules) {
            std::cerr << "skip " << cuda::to_string(schedule) << " " << size << "x" << size << " "
                      << to_string(fs.format()) << ": not supported\n";
          }
          continue;
        }
        run_case(fs, size, schedule, peer, npp_reference ? &*npp_reference : nullptr);
        if (!aborted.empty()) return;
      }
    }
  }

  struct NppResult {
    Json json = Json::object();  // npp_* fields of the case
    double gpix_per_s = NAN;
    int compare_bytes = 0;  // 0: no reference for --check
    std::string check_skipped;
  };

  NppResult run_npp(const FrameSet& fs, int size, cuda::DeviceImage* reference) {
    NppResult res;
    const int r = size / 2;
    const npp::MedianEntry* entry = npp_.available() ? npp_.median(fs.format()) : nullptr;
    const auto unavailable = [&](std::string why) {
      res.json.set("npp_gpix_per_s", nullptr).set("npp_error", why);
      res.check_skipped = std::move(why);
      return res;
    };
    if (!npp_.available()) return unavailable("NPP not loaded");
    if (!entry) return unavailable("NPP has no median for " + std::string(to_string(fs.format())));
    if (fs.width() <= 2 * r || fs.height() <= 2 * r) return unavailable("frame smaller than mask");

    const npp::NppiSize roi{fs.width() - 2 * r, fs.height() - 2 * r};
    const npp::NppiSize mask{size, size};
    const npp::NppiPoint anchor{r, r};
    npp::NppStreamContext ctx{};
    std::size_t scratch_bytes = 0;
    try {
      ctx = npp::Library::context(stream_.get());
    } catch (const std::exception& e) {
      return unavailable(e.what());
    }
    if (const int st = entry->buffer_size(roi, mask, &scratch_bytes, ctx); st < npp::kSuccess) {
      return unavailable(std::string(entry->buffer_size_name) + " returned NPP status " +
                         std::to_string(st));
    }
    cuda::DeviceImage scratch;
    try {
      scratch.allocate(std::max<std::size_t>(scratch_bytes, 256), 1);
    } catch (const std::exception& e) {
      return unavailable(e.what());
    }
    std::string error;
    const auto call = [&](ConstImageView in, ImageView out) -> const char* {
      const int st =
          entry->run(in.data, static_cast<int>(in.stride), out.data, static_cast<int>(out.stride),
                     roi, mask, anchor, reinterpret_cast<unsigned char*>(scratch.data()), ctx);
      if (st >= npp::kSuccess) return nullptr;
      error = std::string(entry->name) + " returned NPP status " + std::to_string(st);
      return error.c_str();
    };
    const Launch launch = [&](int i) {
      return call(interior(fs.in(i), r), interior(fs.out(i), r));
    };
    cudaGetLastError();
    const Timing t =
        measure(stream_.get(), fs.frames(), o_.plan, launch, cudaStreamCaptureModeRelaxed);
    if (!t.error.empty()) {
      res.json.set("npp_gpix_per_s", nullptr).set("npp_error", t.error);
      res.check_skipped = "NPP failed";
      if (std::string lost = context_lost(); !lost.empty()) aborted = std::move(lost);
      return res;
    }
    const double pixels = static_cast<double>(roi.width) * roi.height;
    res.gpix_per_s = pixels / (t.ms_median * 1e-3) * 1e-9;
    res.json.set("npp_function", entry->name)
        .set("npp_roi", "interior")
        .set("npp_scratch_bytes", static_cast<unsigned long long>(scratch_bytes))
        .set("npp_ms_median", t.ms_median)
        .set("npp_gpix_per_s", res.gpix_per_s)
        .set("npp_timing", timing_json(t));
    if (reference) {
      const ImageView ref{reference->data(), fs.width(), fs.height(),
                          static_cast<std::ptrdiff_t>(reference->pitch()), fs.format()};
      const char* e = call(interior(fs.in(0), r), interior(ref, r));
      const cudaError_t s = cudaStreamSynchronize(stream_.get());
      if (e || s != cudaSuccess) {
        res.check_skipped = e ? e : cuda_error("NPP reference", s);
      } else {
        res.compare_bytes = entry->compare_bytes;
      }
    }
    return res;
  }

  struct CheckResult {
    Json json;
    std::string note;  // for the progress line: "ok", "skipped", "error", "DIFFERS from NPP"
    bool failed = false;
  };

  // Compares the interiors of starsift's output of frame 0 and NPP's.
  CheckResult check(const FrameSet& fs, int size, MedianSchedule schedule, const NppResult& peer,
                    const cuda::DeviceImage* reference) {
    if (peer.compare_bytes == 0 || !reference) {
      const std::string why = peer.check_skipped.empty() ? "no NPP reference" : peer.check_skipped;
      return {Json::object().set("skipped", why), "skipped (" + why + ")", false};
    }
    const int r = size / 2;
    const MedianParams params{size, o_.border, 0.0};
    const ConstImageView ref{reference->data(), fs.width(), fs.height(),
                             static_cast<std::ptrdiff_t>(reference->pitch()), fs.format()};
    const ConstImageView ours = starsift::const_view(fs.out(0));
    unsigned long long result[2] = {0, 0};
    cudaError_t s = cuda::launch_median(params, fs.in(0), fs.out(0), stream_.get(), schedule);
    if (s == cudaSuccess) {
      s = count_mismatches(interior(ours, r), interior(ref, r), peer.compare_bytes,
                           reinterpret_cast<unsigned long long*>(result_.data()), stream_.get());
    }
    if (s == cudaSuccess) {
      s = cudaMemcpyAsync(result, result_.data(), sizeof result, cudaMemcpyDeviceToHost,
                          stream_.get());
    }
    if (s == cudaSuccess) s = cudaStreamSynchronize(stream_.get());
    if (s != cudaSuccess) {
      return {Json::object().set("error", cuda_error("check", s)), "error", true};
    }
    const long long compared = static_cast<long long>(fs.width() - 2 * r) * (fs.height() - 2 * r);
    Json j = Json::object()
                 .set("against", "npp")
                 .set("region", "interior")
                 .set("compared_pixels", compared)
                 .set("compared_bytes_per_pixel", peer.compare_bytes)
                 .set("mismatches", result[0]);
    if (result[0] != 0) {
      const int iw = fs.width() - 2 * r;
      const int x = static_cast<int>(result[1] % iw) + r;
      const int y = static_cast<int>(result[1] / iw) + r;
      j.set("first_mismatch", Json::object()
                                  .set("x", x)
                                  .set("y", y)
                                  .set("starsift", pixel_json(ours, x, y, peer.compare_bytes))
                                  .set("npp", pixel_json(ref, x, y, peer.compare_bytes)));
      return {std::move(j), "DIFFERS from NPP in " + std::to_string(result[0]) + " pixels", true};
    }
    return {std::move(j), "ok", false};
  }

  void run_case(const FrameSet& fs, int size, MedianSchedule schedule, const NppResult& peer,
                const cuda::DeviceImage* reference) {
    const MedianParams params{size, o_.border, 0.0};
    std::string error;
    const Launch launch = [&](int i) -> const char* {
      const cudaError_t s =
          cuda::launch_median(params, fs.in(i), fs.out(i), stream_.get(), schedule);
      if (s == cudaSuccess) return nullptr;
      error = cuda_error("launch_median", s);
      return error.c_str();
    };
    cudaGetLastError();
    const Timing t = measure(stream_.get(), fs.frames(), o_.plan, launch);

    const int bpp = fs.bpp();
    const double pixels = static_cast<double>(fs.width()) * fs.height();
    Json c = Json::object()
                 .set("filter", "median")
                 .set("peer", "starsift")
                 .set("size", size)
                 .set("format", to_string(fs.format()))
                 .set("width", fs.width())
                 .set("height", fs.height())
                 .set("schedule", cuda::to_string(schedule))
                 .set("border", to_string(o_.border))
                 .set("bytes_per_pixel", bpp)
                 .set("frames", fs.frames())
                 .set("cache", "rotating");
    const std::string label = resolution_name(fs.width(), fs.height()) + " " +
                              std::string(to_string(fs.format())) + " " + std::to_string(size) +
                              "x" + std::to_string(size) + " " +
                              std::string(cuda::to_string(schedule));
    if (!t.error.empty()) {
      c.set("error", t.error);
      cases.push(std::move(c));
      ++failures;
      std::cerr << label << ": FAILED: " << t.error << "\n";
      aborted = context_lost();
      return;
    }
    const double gpix = pixels / (t.ms_median * 1e-3) * 1e-9;
    const double roofline_gpix = copy_bps_ / (2.0 * bpp) * 1e-9;
    const double achieved_bps = 2.0 * bpp * pixels / (t.ms_median * 1e-3);
    c.set("ms_median", t.ms_median)
        .set("gpix_per_s", gpix)
        .set("roofline_gpix_per_s", roofline_gpix)
        .set("copy_gbps", copy_bps_ * 1e-9)
        .set("fraction_of_roofline", copy_bps_ > 0 ? achieved_bps / copy_bps_ : NAN)
        .set("timing", timing_json(t));
    c.update(peer.json).set("speedup_vs_npp", gpix / peer.gpix_per_s);

    std::string check_note;
    if (o_.check) {
      CheckResult r = check(fs, size, schedule, peer, reference);
      check_note = std::move(r.note);
      failures += r.failed;
      c.set("check", std::move(r.json));
    }
    cases.push(std::move(c));

    char line[256];
    std::snprintf(line, sizeof line, "%s: %.4f ms, %.1f Gpix/s (%.1f%% of roofline)", label.c_str(),
                  t.ms_median, gpix, 100.0 * achieved_bps / copy_bps_);
    std::cerr << line;
    if (std::isfinite(peer.gpix_per_s)) {
      std::snprintf(line, sizeof line, ", NPP %.2f Gpix/s (x%.1f)", peer.gpix_per_s,
                    gpix / peer.gpix_per_s);
      std::cerr << line;
    }
    if (!check_note.empty()) std::cerr << ", check " << check_note;
    std::cerr << "\n";
  }

  const Options& o_;
  const npp::Library& npp_;
  std::size_t l2_bytes_;
  cuda::Stream stream_;
  cuda::DeviceImage result_;  // two words for count_mismatches
  double copy_bps_ = 0.0;     // roofline of the current frame set, bytes/s read+write
};

int run(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "starsift-bench: " << e.what() << "\n";
    return 2;
  }
  const std::optional<Device> opened = open_device(o.device, "starsift-bench");
  if (!opened) return 1;
  const Device& device = *opened;

  const npp::Library lib =
      o.npp ? npp::Library::load() : npp::Library::unavailable("disabled by --no-npp");
  Json npp_json = nullptr;
  if (lib.available()) {
    lib.use_device(o.device);
    npp_json = Json::object().set("library", lib.path()).set("version", lib.version());
    std::cerr << "NPP " << lib.version() << " from " << lib.path() << "\n";
  } else {
    std::cerr << "NPP unavailable: " << lib.reason() << "\n";
  }

  Json schedules = Json::array();
  for (const MedianSchedule s : o.schedules) schedules.push(cuda::to_string(s));
  Json method = rotating_method(o.plan)
                    .set("border", to_string(o.border))
                    .set("data", "uniform random samples (GRAY32F: [-1000, 1000))")
                    .set("seed", static_cast<unsigned long long>(o.seed))
                    .set("schedules", o.all_schedules ? Json("all") : std::move(schedules))
                    .set("roofline",
                         "max(copy kernel, cudaMemcpy2DAsync) over the same frames, "
                         "bytes read+written per second")
                    .set("npp_roi", "interior")
                    .set("check", o.check)
                    .set("quick", o.quick);

  Json out = Json::object()
                 .set("benchmark", "median")
                 .set("tool", "starsift-bench")
                 .set("starsift_version", STARSIFT_VERSION)
                 .set("date_utc", utc_now())
                 .set("device", device.json)
                 .set("method", std::move(method))
                 .set("npp", std::move(npp_json));
  if (!o.commit.empty()) out.set("commit", o.commit);
  if (!lib.available()) out.set("npp_reason", lib.reason());

  Bench bench(o, lib, static_cast<std::size_t>(device.prop.l2CacheSize));
  bench.run();
  out.set("copy_bandwidth", std::move(bench.copy_bandwidth)).set("cases", std::move(bench.cases));
  return finish_run(out, o.json_path, "starsift-bench", bench.aborted, bench.failures,
                    "case(s) failed or differ from NPP");
}

}  // namespace
}  // namespace starsift::bench

int main(int argc, char** argv) {
  return starsift::bench::guarded_main("starsift-bench", starsift::bench::run, argc, argv);
}
