// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-gauss: the CUDA Gaussian blur against the memory roofline and NPP's Gaussians,
// measured in one run on the same frames. JSON on stdout (or --json FILE), progress on stderr.
// bench/README.md says what is measured and how to read it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
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
#include "cuda/gauss/gauss.cuh"
#include "pipeline/border.hpp"
#include "pipeline/error.hpp"
#include "pipeline/gauss/params.hpp"

#ifndef STARSIFT_VERSION
#define STARSIFT_VERSION "unknown"
#endif

namespace starsift::bench {
namespace {

using cuda::GaussPath;

constexpr std::array kPaths{GaussPath::Auto, GaussPath::Fused, GaussPath::Separable,
                            GaussPath::Decimated, GaussPath::Recursive};
// The paths --check compares: every one Auto may pick.
constexpr std::array kConcretePaths{GaussPath::Fused, GaussPath::Separable, GaussPath::Decimated,
                                    GaussPath::Recursive};

struct Options {
  std::vector<double> sigmas{0.5, 1, 2, 3, 5, 10, 25, 50};
  std::vector<PixelFormat> formats{PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F,
                                   PixelFormat::Rgba};
  std::vector<Resolution> sizes{{4096, 4096}};
  std::vector<GaussPath> paths{GaussPath::Auto};
  bool all_paths = false;  // every path that accepts the case
  // The separable path's cost grows with sigma: beyond this it is not timed (Auto takes the
  // recursion from GaussParams::kRecursiveFromSigma anyway).
  double separable_max_sigma = GaussParams::kRecursiveFromSigma;
  std::vector<int> npp_masks{3, 5, 7, 9, 11, 13, 15};  // NPP's fixed masks timed per frame set
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

constexpr const char* kUsage = R"(usage: starsift-bench-gauss [options]

Times the CUDA Gaussian blur on frames rotated beyond the L2, next to the device's copy
bandwidth (the memory roofline) and NPP's Gaussians on the same frames: the fixed mask of the
same width (nppiFilterGaussBorder, 3x3..15x15) and the same weights (nppiFilterGaussAdvanced-
Border, any width).

  --sigmas LIST        sigmas in px, the same along both axes; radius ceil(4 sigma)
                       [0.5,1,2,3,5,10,25,50]
  --sizes LIST         frame sizes WxH,... [4096x4096] (also --resolutions)
  --formats LIST       GRAY8,GRAY16_LE,GRAY32F,RGBA (also BGRA, RGBx, BGRx) [all four]
  --paths P            auto, all (every path that accepts the case: fused up to radius 16,
                       separable up to --separable-max-sigma, decimated from sigma 4,
                       recursive), or a list of auto, fused, separable, decimated,
                       recursive [auto]
  --separable-max-sigma S  the separable path is timed up to this sigma [25]
  --npp-masks LIST     NPP's fixed masks timed per frame set [3,5,7,9,11,13,15]
  --border NAME        reflect-101, replicate, constant [reflect-101]
  --reps N             repetitions per measurement; the median is reported [5]
  --target-ms MS       GPU time per repetition [100]
  --check              for each case, blur frame 0 by every path that takes it and print the
                       largest difference between each two (and with NPP's same weights on
                       the interior)
  --quick              smoke run: sigmas 1,3,25 (unless --sigmas), 1 repetition of ~20 ms
  --no-npp             do not load NPP
  --device N           CUDA device [0]
  --seed N             seed of the random frames [1]
  --commit STR         recorded as "commit" in the JSON
  --json FILE          write the JSON there instead of stdout
)";

// ---- Option parsing --------------------------------------------------------------------

GaussPath parse_path(std::string_view name) {
  return parse_named(
      name, kPaths, [](GaussPath p) { return cuda::to_string(p); }, "--paths", "path");
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool sigmas_given = false;
  bool reps_given = false;
  bool target_given = false;
  for (OptionReader options(argc, argv); options.advance();) {
    const std::string& arg = options.arg();
    const auto next = [&] { return options.value(); };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--sigmas") {
      o.sigmas.clear();
      for (const std::string& s : split_nonempty(next())) {
        o.sigmas.push_back(parse_number<double>(s, arg));
      }
      sigmas_given = true;
    } else if (arg == "--sizes" || arg == "--resolutions") {
      o.sizes.clear();
      for (const std::string& s : split_nonempty(next()))
        o.sizes.push_back(parse_resolution(s, arg));
    } else if (arg == "--formats") {
      o.formats.clear();
      for (const std::string& s : split_nonempty(next())) {
        o.formats.push_back(parse_pixel_format(s));
      }
    } else if (arg == "--paths") {
      const std::string v = next();
      o.paths.clear();
      o.all_paths = normalized_name(v) == "all";
      if (o.all_paths) {
        o.paths.assign(kPaths.begin(), kPaths.end());
      } else {
        for (const std::string& s : split_nonempty(v)) o.paths.push_back(parse_path(s));
      }
    } else if (arg == "--separable-max-sigma") {
      o.separable_max_sigma = parse_number<double>(next(), arg);
    } else if (arg == "--npp-masks") {
      o.npp_masks.clear();
      for (const std::string& s : split_nonempty(next())) {
        const int width = parse_number<int>(s, arg);
        if (npp::square_mask_size(width) < 0) {
          throw Error(arg + ": NPP has no fixed " + s + "x" + s + " Gaussian", "3,5,7,9,11,13,15");
        }
        o.npp_masks.push_back(width);
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
    if (!sigmas_given) o.sigmas = {1, 3, 25};
    if (!reps_given) o.plan.reps = 1;
    if (!target_given) o.plan.target_ms = 20.0;
  }
  for (const double sigma : o.sigmas) {
    GaussParams p;
    p.sigma_x = p.sigma_y = sigma;
    p.border = o.border;
    p.validate();
  }
  for (const PixelFormat f : o.formats) {
    if (!gauss_supports(f)) {
      throw Error("--formats: the blur does not take " + std::string(to_string(f)),
                  "GRAY8, GRAY16_LE, GRAY32F and the 4-channel formats");
    }
  }
  if (o.sigmas.empty() || o.formats.empty() || o.sizes.empty() || o.paths.empty()) {
    throw Error("nothing to run: an empty --sigmas, --formats, --sizes or --paths");
  }
  return o;
}

// ---- Small helpers -------------------------------------------------------------------------

GaussParams params_for(double sigma, const Options& o) {
  GaussParams p;
  p.sigma_x = p.sigma_y = sigma;
  p.border = o.border;
  return p;
}

int radius_of(const GaussParams& p) {
  return std::max(p.effective_radius_x(), p.effective_radius_y());
}

// Why `path` is not timed on `p`, or empty when it is. `for_check`: the separable cap, a
// bound on time, does not apply to the single call of --check.
std::string path_refusal(GaussPath path, const GaussParams& p, PixelFormat format, const Options& o,
                         bool for_check) {
  const int r = radius_of(p);
  const int fused_max = cuda::gauss_max_fused_radius(format);
  if (path == GaussPath::Fused && r > fused_max) {
    return "radius " + std::to_string(r) + " > " + std::to_string(fused_max) +
           " (gauss_max_fused_radius)";
  }
  if (path == GaussPath::Decimated && std::min(p.sigma_x, p.sigma_y) < cuda::kDecimatedMinSigma) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "sigma < %g (kDecimatedMinSigma)", cuda::kDecimatedMinSigma);
    return buf;
  }
  if (path == GaussPath::Separable && !for_check &&
      std::max(p.sigma_x, p.sigma_y) > o.separable_max_sigma) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "sigma > %g (--separable-max-sigma)", o.separable_max_sigma);
    return buf;
  }
  return {};
}

std::string sigma_text(double sigma) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", sigma);
  return buf;
}

std::string mask_name(int width) {
  return std::to_string(width) + "x" + std::to_string(width);
}

double gpix_per_s(double pixels, double ms) {
  return pixels / (ms * 1e-3) * 1e-9;
}

// Device bytes (cudaMalloc): the launcher's scratch, NPP's weights.
class DeviceBytes {
 public:
  DeviceBytes() = default;
  explicit DeviceBytes(std::size_t bytes) {
    if (bytes == 0) return;
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

ImageView view_of(const cuda::DeviceImage& d, const FrameSet& fs) {
  return {d.data(), fs.width(), fs.height(), static_cast<std::ptrdiff_t>(d.pitch()), fs.format()};
}

// ---- The benchmark ---------------------------------------------------------------------------

class Bench {
 public:
  Bench(const Options& o, const npp::Library& lib, std::size_t l2_bytes)
      : o_(o), npp_(lib), l2_bytes_(l2_bytes), result_(2 * sizeof(unsigned long long), 1) {}

  Json copy_bandwidth = Json::array();
  Json npp_masks = Json::array();
  Json cases = Json::array();
  Json checks = Json::array();
  std::string aborted;  // not empty: the run stopped early, and why
  int failures = 0;     // cases (or checks) that could not be measured

  void run() {
    for (const Resolution r : o_.sizes) {
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
  // The NPP numbers of one case, merged into its JSON.
  struct NppResult {
    bool present = false;  // NPP was asked (the numbers may still be an error)
    Json json = Json::object();
    double gpix_per_s = NAN;
  };

  void run_format(const FrameSet& fs) {
    CopyBandwidth copy = measure_copy_bandwidth(fs, o_.plan, stream_.get());
    copy_bps_ = copy.bytes_per_s;
    copy_bandwidth.push(std::move(copy.json));
    if (const std::string lost = context_lost(); !lost.empty()) {
      aborted = lost;
      return;
    }
    // One scratch for every sigma and path of this frame set: Auto's size is the largest any
    // path needs. Calls on one stream never overlap, so every frame shares it.
    try {
      scratch_.emplace(
          cuda::gauss_scratch_bytes(GaussPath::Auto, fs.width(), fs.height(), fs.format()));
      check_outputs_.clear();
      if (o_.check) {
        const std::size_t row_bytes = static_cast<std::size_t>(fs.width()) * fs.bpp();
        for (std::size_t k = 0; k < kConcretePaths.size() + 1; ++k) {
          check_outputs_.emplace_back(row_bytes, fs.height());
        }
      }
    } catch (const std::exception& e) {
      aborted = e.what();
      return;
    }

    std::map<int, NppResult> fixed = run_npp_masks(fs);
    if (!aborted.empty()) return;
    for (const double sigma : o_.sigmas) {
      const GaussParams params = params_for(sigma, o_);
      const int r = radius_of(params);
      NppResult same_width;
      if (const auto it = fixed.find(2 * r + 1); it != fixed.end()) same_width = it->second;
      const NppResult advanced = run_npp_advanced(fs, params);
      if (!aborted.empty()) return;
      for (const GaussPath path : o_.paths) {
        if (const std::string why = path_refusal(path, params, fs.format(), o_, false);
            !why.empty()) {
          if (!o_.all_paths || path == GaussPath::Separable) {
            std::cerr << "skip " << cuda::to_string(path) << " sigma " << sigma_text(sigma) << " "
                      << to_string(fs.format()) << ": " << why << "\n";
            cases.push(case_head(fs, params, path).set("skipped", why));
          }
          continue;
        }
        run_case(fs, params, path, same_width, advanced);
        if (!aborted.empty()) return;
      }
      if (o_.check) {
        check(fs, params);
        if (!aborted.empty()) return;
      }
    }
  }

  // Sets up a call of NPP: the context, or why there is none.
  std::optional<npp::NppStreamContext> npp_context(std::string& why) {
    try {
      return npp::Library::context(stream_.get());
    } catch (const std::exception& e) {
      why = e.what();
      return std::nullopt;
    }
  }

  // Times `call` (one NPP call on frame i, returning its status) over the frames. Returns the
  // Gpix/s of the whole frame (NaN on failure) and fills `json` with the fields named `prefix`.
  double time_npp(const FrameSet& fs, const char* function, const std::function<int(int)>& call,
                  Json& json, const std::string& prefix) {
    std::string error;
    const Launch launch = [&](int i) -> const char* {
      const int st = call(i);
      if (st >= npp::kSuccess) return nullptr;
      error = std::string(function) + " returned NPP status " + std::to_string(st);
      return error.c_str();
    };
    cudaGetLastError();
    const Timing t =
        measure(stream_.get(), fs.frames(), o_.plan, launch, cudaStreamCaptureModeRelaxed);
    json.set(prefix + "function", function);
    if (!t.error.empty()) {
      json.set(prefix + "gpix_per_s", nullptr).set(prefix + "error", t.error);
      if (std::string lost = context_lost(); !lost.empty()) aborted = std::move(lost);
      return NAN;
    }
    const double gpix = gpix_per_s(static_cast<double>(fs.width()) * fs.height(), t.ms_median);
    json.set(prefix + "ms_median", t.ms_median)
        .set(prefix + "gpix_per_s", gpix)
        .set(prefix + "timing", timing_json(t));
    return gpix;
  }

  // NPP's fixed Gaussian masks on the whole frame (border replicate, its only one): one entry
  // of npp_masks each, and their Gpix/s by mask width for the cases of the same width.
  std::map<int, NppResult> run_npp_masks(const FrameSet& fs) {
    std::map<int, NppResult> by_width;
    const npp::GaussEntry* entry = npp_.available() ? npp_.gauss(fs.format()) : nullptr;
    if (!entry || !entry->run) return by_width;
    std::string why;
    const std::optional<npp::NppStreamContext> ctx = npp_context(why);
    const npp::NppiSize size{fs.width(), fs.height()};
    for (const int width : o_.npp_masks) {
      Json j = Json::object()
                   .set("filter", "gauss")
                   .set("peer", "npp")
                   .set("mask", mask_name(width))
                   .set("mask_width", width)
                   .set("format", to_string(fs.format()))
                   .set("width", fs.width())
                   .set("height", fs.height())
                   .set("border", "replicate")
                   .set("bytes_per_pixel", fs.bpp())
                   .set("frames", fs.frames());
      NppResult res;
      if (!ctx) {
        j.set("function", entry->name).set("gpix_per_s", nullptr).set("error", why);
      } else {
        const auto call = [&](int i) {
          const ConstImageView in = fs.in(i);
          const ImageView out = fs.out(i);
          return entry->run(in.data, static_cast<int>(in.stride), size, npp::NppiPoint{0, 0},
                            out.data, static_cast<int>(out.stride), size,
                            npp::square_mask_size(width), npp::kBorderReplicate, *ctx);
        };
        res.gpix_per_s = time_npp(fs, entry->name, call, j, "");
        if (!aborted.empty()) return by_width;
        const double roofline = copy_bps_ / (2.0 * fs.bpp()) * 1e-9;
        j.set("roofline_gpix_per_s", roofline)
            .set("fraction_of_roofline", res.gpix_per_s / roofline);
      }
      res.present = true;
      res.json.set("npp_mask", mask_name(width))
          .set("npp_function", entry->name)
          .set("npp_gpix_per_s", res.gpix_per_s);
      if (!std::isfinite(res.gpix_per_s)) res.json.set("npp_error", "see npp_masks");
      char line[160];
      std::snprintf(line, sizeof line, "NPP %s %s %s: %.1f Gpix/s\n",
                    resolution_name(fs.width(), fs.height()).c_str(),
                    std::string(to_string(fs.format())).c_str(), mask_name(width).c_str(),
                    res.gpix_per_s);
      std::cerr << line;
      npp_masks.push(std::move(j));
      by_width[width] = std::move(res);
    }
    return by_width;
  }

  // NPP's separable Gaussian with starsift's own 2r+1 weights (border replicate), whole frame.
  NppResult run_npp_advanced(const FrameSet& fs, const GaussParams& params) {
    NppResult res;
    const int r = radius_of(params);
    const auto unavailable = [&](std::string why) {
      res.json.set("npp_advanced_gpix_per_s", nullptr).set("npp_advanced_error", std::move(why));
      return res;
    };
    const npp::GaussEntry* entry = npp_.available() ? npp_.gauss(fs.format()) : nullptr;
    if (!npp_.available()) return unavailable("NPP not loaded");
    if (!entry || !entry->advanced) {
      return unavailable("NPP has no advanced Gaussian for " + std::string(to_string(fs.format())));
    }
    if (!set_weights(params, res.json)) return unavailable(weights_error_);
    std::string why;
    const std::optional<npp::NppStreamContext> ctx = npp_context(why);
    if (!ctx) return unavailable(why);
    const npp::NppiSize size{fs.width(), fs.height()};
    const int taps = 2 * r + 1;
    const float* weights = static_cast<const float*>(weights_->data());
    const auto call = [&](int i) {
      const ConstImageView in = fs.in(i);
      const ImageView out = fs.out(i);
      return entry->advanced(in.data, static_cast<int>(in.stride), size, npp::NppiPoint{0, 0},
                             out.data, static_cast<int>(out.stride), size, taps, weights,
                             npp::kBorderReplicate, *ctx);
    };
    res.json.set("npp_advanced_taps", taps);
    res.gpix_per_s = time_npp(fs, entry->advanced_name, call, res.json, "npp_advanced_");
    return res;
  }

  // Copies the weights of `params` into the device buffer NPP reads them from (it reads them
  // on the GPU: a host pointer faults), once no call of the previous sigma is in flight.
  bool set_weights(const GaussParams& params, Json& json) {
    const std::vector<float> w = gauss_weights(params.sigma_x, params.effective_radius_x());
    const std::size_t bytes = w.size() * sizeof(float);
    try {
      cuda::check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize");
      if (!weights_ || weights_->size() < bytes) {
        weights_.reset();
        weights_.emplace(std::max<std::size_t>(bytes, 256));
      }
      cuda::check(cudaMemcpy(weights_->data(), w.data(), bytes, cudaMemcpyHostToDevice),
                  "cudaMemcpy (NPP weights)");
    } catch (const std::exception& e) {
      weights_error_ = e.what();
      return false;
    }
    json.set("npp_advanced_weights", "starsift's (gauss_weights)");
    return true;
  }

  Json case_head(const FrameSet& fs, const GaussParams& params, GaussPath path) const {
    const int r = radius_of(params);
    return Json::object()
        .set("filter", "gauss")
        .set("peer", "starsift")
        .set("sigma", params.sigma_x)
        .set("radius", r)
        .set("taps", 2 * r + 1)
        .set("format", to_string(fs.format()))
        .set("width", fs.width())
        .set("height", fs.height())
        .set("path", cuda::to_string(path))
        .set("auto_path", cuda::to_string(cuda::gauss_auto_path(params, fs.in(0), fs.out(0))))
        .set("border", to_string(o_.border))
        .set("bytes_per_pixel", fs.bpp())
        .set("frames", fs.frames())
        .set("cache", "rotating");
  }

  void run_case(const FrameSet& fs, const GaussParams& params, GaussPath path,
                const NppResult& same_width, const NppResult& advanced) {
    std::string error;
    void* scratch = scratch_->data();
    const std::size_t scratch_bytes = scratch_->size();
    const Launch launch = [&](int i) -> const char* {
      const cudaError_t s = cuda::launch_gauss(params, fs.in(i), fs.out(i), scratch, scratch_bytes,
                                               stream_.get(), path);
      if (s == cudaSuccess) return nullptr;
      error = cuda_error("launch_gauss", s);
      return error.c_str();
    };
    cudaGetLastError();
    const Timing t = measure(stream_.get(), fs.frames(), o_.plan, launch);

    Json c = case_head(fs, params, path);
    c.set("scratch_bytes", static_cast<unsigned long long>(scratch_bytes));
    const std::string label =
        resolution_name(fs.width(), fs.height()) + " " + std::string(to_string(fs.format())) +
        " sigma " + sigma_text(params.sigma_x) + " (r " + std::to_string(radius_of(params)) + ") " +
        std::string(cuda::to_string(path));
    if (!t.error.empty()) {
      c.set("error", t.error);
      cases.push(std::move(c));
      ++failures;
      std::cerr << label << ": FAILED: " << t.error << "\n";
      aborted = context_lost();
      return;
    }
    const int bpp = fs.bpp();
    const double pixels = static_cast<double>(fs.width()) * fs.height();
    const double gpix = gpix_per_s(pixels, t.ms_median);
    const double roofline_gpix = copy_bps_ / (2.0 * bpp) * 1e-9;
    const double fraction = copy_bps_ > 0 ? gpix / roofline_gpix : NAN;
    c.set("ms_median", t.ms_median)
        .set("gpix_per_s", gpix)
        .set("roofline_gpix_per_s", roofline_gpix)
        .set("copy_gbps", copy_bps_ * 1e-9)
        .set("fraction_of_roofline", fraction)
        .set("timing", timing_json(t));
    if (same_width.present) {
      c.update(same_width.json).set("speedup_vs_npp", gpix / same_width.gpix_per_s);
    } else {
      c.set("npp_mask", nullptr).set("npp_gpix_per_s", nullptr).set("speedup_vs_npp", nullptr);
    }
    c.update(advanced.json).set("speedup_vs_npp_advanced", gpix / advanced.gpix_per_s);
    cases.push(std::move(c));

    char line[320];
    std::snprintf(line, sizeof line, "%s: %.4f ms, %.1f Gpix/s (%.1f%% of roofline)", label.c_str(),
                  t.ms_median, gpix, 100.0 * fraction);
    std::cerr << line;
    if (std::isfinite(same_width.gpix_per_s)) {
      std::snprintf(line, sizeof line, ", NPP %s %.1f Gpix/s (x%.2f)",
                    mask_name(2 * radius_of(params) + 1).c_str(), same_width.gpix_per_s,
                    gpix / same_width.gpix_per_s);
      std::cerr << line;
    }
    if (std::isfinite(advanced.gpix_per_s)) {
      std::snprintf(line, sizeof line, ", NPP advanced %.1f Gpix/s (x%.2f)", advanced.gpix_per_s,
                    gpix / advanced.gpix_per_s);
      std::cerr << line;
    }
    std::cerr << "\n";
  }

  // The largest difference between two outputs (the first `samples` samples of each pixel).
  struct Difference {
    double max_abs = NAN;
    unsigned long long differing = 0;
    std::string error;
  };

  Difference difference(ConstImageView a, ConstImageView b, int samples) {
    Difference d;
    unsigned long long result[2] = {0, 0};
    auto* device_result = reinterpret_cast<unsigned long long*>(result_.data());
    cudaError_t s = max_difference(a, b, samples, device_result, stream_.get());
    if (s == cudaSuccess) {
      s = cudaMemcpyAsync(result, device_result, sizeof result, cudaMemcpyDeviceToHost,
                          stream_.get());
    }
    if (s == cudaSuccess) s = cudaStreamSynchronize(stream_.get());
    if (s != cudaSuccess) {
      d.error = cuda_error("max_difference", s);
      return d;
    }
    const auto bits = static_cast<std::uint32_t>(result[0]);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    d.max_abs = f;
    d.differing = result[1];
    return d;
  }

  // Frame 0 through every path that takes `params`, each output against the others, and
  // Auto's against NPP's same weights on the interior (where no border mode matters; colour
  // samples only: NPP's 8u_C4R blurs the fourth byte, starsift copies it).
  void check(const FrameSet& fs, const GaussParams& params) {
    const int r = radius_of(params);
    const int samples = format_info(fs.format()).channels;
    const int colour_samples = format_info(fs.format()).color_channels;
    Json j = Json::object()
                 .set("sigma", params.sigma_x)
                 .set("radius", r)
                 .set("format", to_string(fs.format()))
                 .set("width", fs.width())
                 .set("height", fs.height())
                 .set("frame", 0)
                 .set("units", format_info(fs.format()).is_float ? "sample value" : "counts");
    std::vector<std::pair<std::string, ConstImageView>> outputs;
    Json errors = Json::array();
    bool any_error = false;
    for (std::size_t k = 0; k < kConcretePaths.size(); ++k) {
      const GaussPath path = kConcretePaths[k];
      if (!path_refusal(path, params, fs.format(), o_, true).empty()) continue;
      const ImageView out = view_of(check_outputs_[k], fs);
      cudaError_t s = cuda::launch_gauss(params, fs.in(0), out, scratch_->data(), scratch_->size(),
                                         stream_.get(), path);
      if (s == cudaSuccess) s = cudaStreamSynchronize(stream_.get());
      if (s != cudaSuccess) {
        errors.push(std::string(cuda::to_string(path)) + ": " + cuda_error("launch_gauss", s));
        any_error = true;
        ++failures;
        if (std::string lost = context_lost(); !lost.empty()) {
          aborted = std::move(lost);
          return;
        }
        continue;
      }
      outputs.emplace_back(cuda::to_string(path), starsift::const_view(out));
    }
    Json paths = Json::array();
    for (const auto& [name, view] : outputs) paths.push(name);
    j.set("paths", std::move(paths));

    Json pairs = Json::array();
    double worst = 0.0;
    std::string summary;
    const auto add_pair = [&](const std::string& a, ConstImageView va, const std::string& b,
                              ConstImageView vb, int inset, int compared_samples) {
      const Difference d = difference(interior(va, inset), interior(vb, inset), compared_samples);
      Json p = Json::object()
                   .set("a", a)
                   .set("b", b)
                   .set("region", inset ? "interior" : "whole frame")
                   .set("samples_per_pixel", compared_samples);
      char text[96];
      if (!d.error.empty()) {
        p.set("error", d.error);
        ++failures;
        std::snprintf(text, sizeof text, "%s~%s error", a.c_str(), b.c_str());
      } else {
        p.set("max_abs_diff", d.max_abs).set("differing_samples", d.differing);
        worst = std::max(worst, d.max_abs);
        std::snprintf(text, sizeof text, "%s~%s %g", a.c_str(), b.c_str(), d.max_abs);
      }
      pairs.push(std::move(p));
      summary += (summary.empty() ? "" : ", ") + std::string(text);
    };
    for (std::size_t a = 0; a < outputs.size(); ++a) {
      for (std::size_t b = a + 1; b < outputs.size(); ++b) {
        add_pair(outputs[a].first, outputs[a].second, outputs[b].first, outputs[b].second, 0,
                 samples);
      }
    }
    // NPP's same weights, on the interior: the sums are the same, only rounding and the
    // border differ.
    const npp::GaussEntry* entry = npp_.available() ? npp_.gauss(fs.format()) : nullptr;
    const std::string auto_name(
        cuda::to_string(cuda::gauss_auto_path(params, fs.in(0), fs.out(0))));
    const auto auto_output = std::find_if(outputs.begin(), outputs.end(),
                                          [&](const auto& o) { return o.first == auto_name; });
    if (entry && entry->advanced && auto_output != outputs.end() && fs.width() > 2 * r &&
        fs.height() > 2 * r) {
      Json ignored = Json::object();
      std::string why;
      const std::optional<npp::NppStreamContext> ctx = npp_context(why);
      if (ctx && set_weights(params, ignored)) {
        const ImageView ref = view_of(check_outputs_.back(), fs);
        const npp::NppiSize size{fs.width(), fs.height()};
        const int st = entry->advanced(fs.in(0).data, static_cast<int>(fs.in(0).stride), size,
                                       npp::NppiPoint{0, 0}, ref.data, static_cast<int>(ref.stride),
                                       size, 2 * r + 1, static_cast<const float*>(weights_->data()),
                                       npp::kBorderReplicate, *ctx);
        if (st >= npp::kSuccess && cudaStreamSynchronize(stream_.get()) == cudaSuccess) {
          add_pair(auto_name, auto_output->second, "npp-advanced", starsift::const_view(ref), r,
                   colour_samples);
        } else {
          cudaGetLastError();
          j.set("npp_error",
                std::string(entry->advanced_name) + " returned NPP status " + std::to_string(st));
        }
      }
    }
    j.set("pairs", std::move(pairs)).set("max_abs_diff", worst);
    if (any_error) j.set("errors", std::move(errors));
    checks.push(std::move(j));
    std::cerr << "check " << resolution_name(fs.width(), fs.height()) << " "
              << to_string(fs.format()) << " sigma " << sigma_text(params.sigma_x)
              << ": max |difference| " << summary << "\n";
  }

  const Options& o_;
  const npp::Library& npp_;
  std::size_t l2_bytes_;
  cuda::Stream stream_;
  cuda::DeviceImage result_;            // two words for max_difference
  double copy_bps_ = 0.0;               // roofline of the current frame set, bytes/s read+write
  std::optional<DeviceBytes> scratch_;  // launch_gauss's, per frame set
  std::optional<DeviceBytes> weights_;  // NPP's coefficients
  std::string weights_error_;           // why weights_ could not be allocated
  std::vector<cuda::DeviceImage> check_outputs_;  // one per concrete path, then NPP's
};

int run(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "starsift-bench-gauss: " << e.what() << "\n";
    return 2;
  }
  const std::optional<Device> opened = open_device(o.device, "starsift-bench-gauss");
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

  Json paths = Json::array();
  for (const GaussPath p : o.paths) paths.push(cuda::to_string(p));
  Json masks = Json::array();
  for (const int m : o.npp_masks) masks.push(mask_name(m));
  Json method =
      rotating_method(o.plan)
          .set("border", to_string(o.border))
          .set("radius", "ceil(4 sigma), both axes")
          .set("data", "uniform random samples (GRAY32F: [-1000, 1000))")
          .set("seed", static_cast<unsigned long long>(o.seed))
          .set("paths", o.all_paths ? Json("all") : std::move(paths))
          .set("separable_max_sigma", o.separable_max_sigma)
          .set("max_fused_radius", cuda::kMaxFusedRadius)
          .set("scratch", "gauss_scratch_bytes(auto), allocated once per frame set")
          .set("roofline",
               "max(copy kernel, cudaMemcpy2DAsync) over the same frames, "
               "bytes read+written per second; a blur moves 2 x bytes per pixel")
          .set("npp_border", "replicate (the only border NPP's Gauss filters take)")
          .set("npp_roi", "whole frame")
          .set("npp_masks", std::move(masks))
          .set("npp_same_width", "the fixed mask of width 2 radius + 1, where NPP has one")
          .set("npp_advanced", "nppiFilterGaussAdvancedBorder with starsift's 2 radius + 1 weights")
          .set("check", o.check)
          .set("quick", o.quick);

  Json out = Json::object()
                 .set("benchmark", "gauss")
                 .set("tool", "starsift-bench-gauss")
                 .set("starsift_version", STARSIFT_VERSION)
                 .set("date_utc", utc_now())
                 .set("device", device.json)
                 .set("method", std::move(method))
                 .set("npp", std::move(npp_json));
  if (!o.commit.empty()) out.set("commit", o.commit);
  if (!lib.available()) out.set("npp_reason", lib.reason());

  Bench bench(o, lib, static_cast<std::size_t>(device.prop.l2CacheSize));
  bench.run();
  out.set("copy_bandwidth", std::move(bench.copy_bandwidth))
      .set("npp_masks", std::move(bench.npp_masks))
      .set("cases", std::move(bench.cases));
  if (o.check) out.set("checks", std::move(bench.checks));
  return finish_run(out, o.json_path, "starsift-bench-gauss", bench.aborted, bench.failures,
                    "case(s) or check(s) failed");
}

}  // namespace
}  // namespace starsift::bench

int main(int argc, char** argv) {
  return starsift::bench::guarded_main("starsift-bench-gauss", starsift::bench::run, argc, argv);
}
