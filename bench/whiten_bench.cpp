// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-whiten: per-frame time of the CUDA whitening stage's device form (what the
// streaming engine runs), beside the bytes per frame its kernels must move and the device's
// copy bandwidth measured in the same run.
//
// Frames: a set of pre-generated GRAY16 star fields (stars with a Gaussian PSF, sky, Gaussian
// noise, sub-pixel jitter), uploaded once and rotated, larger than the L2 at 4096^2 (8 x
// 33.5 MB). The history is filled first (warm-up), then every frame is timed by events around
// its enqueue() on one stream; the median and the 90th percentile are reported, and the
// throughput of the frames queued back to back (what a full engine sees).
//
// Usage: starsift-bench-whiten [--sizes 512,4096] [--history 20] [--frames 200] [--set 8]
//                              [--shift none,resample] [--fit current,past]
//                              [--despike on,off] [--history-format float,half]
//                              [--reject mask,objects] [--fit-subsample 0,1,4]
//                              [--json out.json]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "bench/list_args.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/whiten/whiten_tuning.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/error.hpp"
#include "pipeline/whiten/whiten_stage_cuda.hpp"

namespace {

using starsift::bench::Json;
namespace cuda = starsift::cuda;

struct Options {
  std::vector<int> sizes{512, 4096};
  int history = 20;
  int frames = 200;
  int set = 8;
  std::vector<starsift::WhitenShift> shifts{starsift::WhitenShift::None,
                                            starsift::WhitenShift::Resample};
  std::vector<starsift::WhitenFit> fits{starsift::WhitenFit::Current, starsift::WhitenFit::Past};
  std::vector<bool> despikes{true};
  std::vector<starsift::WhitenHistoryFormat> formats{starsift::WhitenHistoryFormat::Float};
  std::vector<starsift::WhitenReject> rejects{starsift::WhitenReject::Mask};
  // fit-subsample values (0: whitening's automatic choice for the frame).
  std::vector<int> fit_subsamples{starsift::WhitenParams::kAutoFitSubsample};
  std::string json_path;
};

std::vector<bool> parse_switches(const std::string& list) {
  std::vector<bool> v;
  for (const std::string& item : starsift::bench::split_list(list)) {
    if (item != "on" && item != "off")
      throw starsift::Error("--despike takes on and/or off, not " + item, "on, off");
    v.push_back(item == "on");
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw starsift::Error("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--sizes")
      o.sizes = starsift::bench::parse_ints(value());
    else if (a == "--history")
      o.history = std::stoi(value());
    else if (a == "--frames")
      o.frames = std::stoi(value());
    else if (a == "--set")
      o.set = std::stoi(value());
    else if (a == "--shift")
      o.shifts = starsift::bench::parse_names(value(), starsift::parse_whiten_shift);
    else if (a == "--fit")
      o.fits = starsift::bench::parse_names(value(), starsift::parse_whiten_fit);
    else if (a == "--despike")
      o.despikes = parse_switches(value());
    else if (a == "--reject")
      o.rejects = starsift::bench::parse_names(value(), starsift::parse_whiten_reject);
    else if (a == "--history-format")
      o.formats = starsift::bench::parse_names(value(), starsift::parse_whiten_history_format);
    else if (a == "--fit-subsample")
      o.fit_subsamples = starsift::bench::parse_ints(value());
    else if (a == "--json")
      o.json_path = value();
    else
      throw starsift::Error(
          "unknown option " + a,
          "--sizes, --history, --frames, --set, --shift, --fit, --despike, --history-format, "
          "--reject, --fit-subsample, --json");
  }
  return o;
}

// `count` GRAY16 frames of side `n`: sky 1000 ADU, stars of 50..5000 ADU peak (PSF sigma
// 1.3 px), noise 10 ADU, jitter up to +-1.5 px per axis after the first frame.
std::vector<std::vector<std::uint16_t>> make_frames(int n, int count) {
  std::mt19937 rng(7);
  struct Star {
    double x, y, peak;
  };
  std::vector<Star> stars(static_cast<std::size_t>(n) * n / 400);
  std::uniform_real_distribution<double> pos(8.0, n - 8.0), lp(std::log(50.0), std::log(5000.0));
  for (Star& s : stars) s = {pos(rng), pos(rng), std::exp(lp(rng))};
  std::vector<std::vector<std::uint16_t>> frames(count);
  std::vector<float> plane(static_cast<std::size_t>(n) * n);
  std::uniform_real_distribution<double> jitter(-1.5, 1.5);
  std::normal_distribution<float> noise(0.0f, 10.0f);
  const double sigma = 1.3;
  for (int f = 0; f < count; ++f) {
    const double dx = f == 0 ? 0.0 : jitter(rng), dy = f == 0 ? 0.0 : jitter(rng);
    std::fill(plane.begin(), plane.end(), 1000.0f);
    for (const Star& s : stars) {
      const int cx = static_cast<int>(s.x + dx), cy = static_cast<int>(s.y + dy);
      for (int y = cy - 5; y <= cy + 5; ++y)
        for (int x = cx - 5; x <= cx + 5; ++x) {
          const double rx = x - (s.x + dx), ry = y - (s.y + dy);
          plane[static_cast<std::size_t>(y) * n + x] +=
              static_cast<float>(s.peak * std::exp(-(rx * rx + ry * ry) / (2 * sigma * sigma)));
        }
    }
    frames[f].resize(plane.size());
    for (std::size_t i = 0; i < plane.size(); ++i) {
      const float v = std::nearbyint(plane[i] + noise(rng));
      frames[f][i] = static_cast<std::uint16_t>(std::clamp(v, 0.0f, 65535.0f));
    }
  }
  return frames;
}

// Bytes per pixel the kernels move in steady state (history full, weights due every frame),
// from the kernel design (src/cuda/whiten/*.cu): GRAY16 in and out, float or half history;
// mask words (1/8 B/px) and the rare per-pixel count updates left out.
double bytes_per_pixel(const starsift::WhitenParams& p, const starsift::FrameShape& shape) {
  const double h = p.history_format == starsift::WhitenHistoryFormat::Half ? 2 : 4;
  const double n = p.history;     // lags predicted from
  const double kept = p.history;  // lags of the Gram row
  const double lags = std::max(n, kept);
  const bool current = p.fit == starsift::WhitenFit::Current;
  const double rows = 1.0 / p.effective_fit_subsample(shape);
  double b = 2 + 4;                      // load: input, x
  if (current) b += rows * (4 + h * n);  // r: the target and n planes
  b += 1;                                // excluded pass: the count per pixel
  if (p.shift == starsift::WhitenShift::None) {
    b += 4 + h * lags + h + 8 + 2;  // fused: x, lags, stored, var r+w, out
  } else {
    b += 4 + 4;              // align: x (taps cached), y
    b += h * n + 4 + 4;      // predict: n planes, y, b
    b += 4 + 4 + 8 + 1 + 2;  // camera: x, b, var r+w, rejected, out
    b += 4 + 4 + 1 + h;      // store: y, b, rejected, stored
    if (p.reject == starsift::WhitenReject::Objects) b += 26;  // rho, the box pass, decisions
  }
  return b;
}

// Device-to-device copy bandwidth (read + write) over buffers beyond the L2.
double copy_bandwidth(std::size_t bytes, cudaStream_t s) {
  cuda::DeviceImage a(bytes, 1), b(bytes, 1);
  cuda::Event start, stop;
  for (int i = 0; i < 3; ++i)
    cuda::check(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s), "copy");
  const int reps = 20;
  cuda::check(cudaEventRecord(start.get(), s), "cudaEventRecord");
  for (int i = 0; i < reps; ++i)
    cuda::check(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s), "copy");
  cuda::check(cudaEventRecord(stop.get(), s), "cudaEventRecord");
  cuda::check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float ms = 0;
  cuda::check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return 2.0 * bytes * reps / (ms * 1e-3);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * (v.size() - 1))];
}

// Every combination of the options' lists (reject: objects only with shift: resample, the only
// shift mode that runs it on CUDA).
std::vector<starsift::WhitenParams> cases(const Options& o) {
  std::vector<starsift::WhitenParams> all;
  for (const starsift::WhitenReject reject : o.rejects)
    for (const starsift::WhitenHistoryFormat format : o.formats)
      for (const bool despike : o.despikes)
        for (const starsift::WhitenShift shift : o.shifts)
          for (const starsift::WhitenFit fit : o.fits)
            for (const int fit_subsample : o.fit_subsamples) {
              if (reject == starsift::WhitenReject::Objects && shift == starsift::WhitenShift::None)
                continue;
              starsift::WhitenParams p;
              p.history = o.history;
              p.shift = shift;
              p.fit = fit;
              p.despike = despike;
              p.history_format = format;
              p.reject = reject;
              p.fit_subsample = fit_subsample;
              p.validate();
              all.push_back(p);
            }
  return all;
}

Json run_case(int n, const starsift::WhitenParams& params,
              const std::vector<cuda::DeviceImage>& inputs, cuda::DeviceImage& output, int frames,
              double copy_bps) {
  const starsift::FrameShape shape{n, n, starsift::PixelFormat::Gray16, 16};
  auto stage = starsift::make_whiten_stage_cuda(params, 0);
  stage->configure_device(shape);
  cuda::Stream stream;
  const cudaStream_t s = stream.get();
  const int set = static_cast<int>(inputs.size());
  auto enqueue = [&](int i) {
    const cuda::DeviceImage& in = inputs[i % set];
    stage->enqueue({in.data(), n, n, static_cast<std::ptrdiff_t>(in.pitch()), shape.format},
                   {output.data(), n, n, static_cast<std::ptrdiff_t>(output.pitch()), shape.format},
                   s);
  };
  const int warm = 2 * (params.history + 2);
  for (int i = 0; i < warm; ++i) enqueue(i);
  // Each frame timed on its own.
  std::vector<cuda::Event> marks(2 * static_cast<std::size_t>(frames));
  for (int i = 0; i < frames; ++i) {
    cuda::check(cudaEventRecord(marks[2 * i].get(), s), "cudaEventRecord");
    enqueue(warm + i);
    cuda::check(cudaEventRecord(marks[2 * i + 1].get(), s), "cudaEventRecord");
  }
  cuda::check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  std::vector<double> ms(frames);
  for (int i = 0; i < frames; ++i) {
    float t = 0;
    cuda::check(cudaEventElapsedTime(&t, marks[2 * i].get(), marks[2 * i + 1].get()), "elapsed");
    ms[i] = t;
  }
  // Back to back: the frames' throughput with the host queuing ahead.
  cuda::Event start, stop;
  cuda::check(cudaEventRecord(start.get(), s), "cudaEventRecord");
  for (int i = 0; i < frames; ++i) enqueue(i);
  cuda::check(cudaEventRecord(stop.get(), s), "cudaEventRecord");
  cuda::check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float total = 0;
  cuda::check(cudaEventElapsedTime(&total, start.get(), stop.get()), "elapsed");
  const double median = percentile(ms, 0.5);
  const double pixels = static_cast<double>(n) * n;
  const double bpp = bytes_per_pixel(params, shape);
  const double bytes = bpp * pixels;
  const starsift::WhitenStats st = stage->last_stats();
  return Json::object()
      .set("size", n)
      .set("history", params.history)
      .set("shift", std::string(to_string(params.shift)))
      .set("fit", std::string(to_string(params.fit)))
      .set("despike", params.despike)
      .set("history_format", std::string(to_string(params.history_format)))
      .set("reject", std::string(to_string(params.reject)))
      .set("fit_subsample", params.effective_fit_subsample(shape))
      .set("ms_median", median)
      .set("ms_p90", percentile(ms, 0.9))
      .set("ms_back_to_back", total / frames)
      .set("gpix_per_s", pixels / (median * 1e-3) / 1e9)
      .set("bytes_per_pixel_model", bpp)
      .set("bytes_per_frame_model", bytes)
      .set("implied_gb_per_s", bytes / (median * 1e-3) / 1e9)
      .set("fraction_of_copy_roofline", bytes / (median * 1e-3) / copy_bps)
      .set("last_stats", Json::object()
                             .set("history_used", st.history_used)
                             .set("noise_floor", st.noise_floor)
                             .set("shift_x", st.shift_x)
                             .set("rejected", static_cast<unsigned long long>(st.rejected)));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    const starsift::BackendChoice gpu = starsift::resolve_backend(starsift::Backend::Cuda, 0);
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    int driver = 0;
    cudaDriverGetVersion(&driver);
    Json out = Json::object();
    out.set("benchmark", "starsift-bench-whiten")
        .set("device", gpu.reason)
        .set("cuda_runtime", runtime)
        .set("cuda_driver", driver)
        .set("frames", "rotating " + std::to_string(o.set) + " pre-generated GRAY16 frames")
        .set("tuning", [] {
          std::ostringstream os;
          os << starsift::cuda::kWhitenTuning;
          return os.str();
        }());
    Json runs = Json::array();
    cuda::Stream copy_stream;
    for (int n : o.sizes) {
      std::fprintf(stderr, "generating %d frames of %dx%d...\n", o.set, n, n);
      const auto frames = make_frames(n, o.set);
      std::vector<cuda::DeviceImage> inputs;
      for (const auto& f : frames) {
        inputs.emplace_back(static_cast<std::size_t>(n) * 2, n);
        cuda::check(cudaMemcpy2D(inputs.back().data(), inputs.back().pitch(), f.data(),
                                 static_cast<std::size_t>(n) * 2, static_cast<std::size_t>(n) * 2,
                                 n, cudaMemcpyHostToDevice),
                    "upload");
      }
      cuda::DeviceImage output(static_cast<std::size_t>(n) * 2, n);
      // The copy roofline on data of the frames' float planes' size, beyond the L2.
      const std::size_t copy_bytes =
          std::max<std::size_t>(static_cast<std::size_t>(n) * n * 4, 256u << 20);
      const double copy_bps = copy_bandwidth(copy_bytes, copy_stream.get());
      for (const starsift::WhitenParams& p : cases(o)) {
        Json r = run_case(n, p, inputs, output, o.frames, copy_bps);
        r.set("copy_gb_per_s", copy_bps / 1e9);
        std::cerr << n << "^2 " << to_string(p.shift) << " " << to_string(p.fit)
                  << (p.despike ? "" : " despike off") << " history " << to_string(p.history_format)
                  << " reject " << to_string(p.reject) << " fit-subsample " << p.fit_subsample
                  << ": " << r << "\n";
        runs.push(std::move(r));
      }
    }
    out.set("runs", std::move(runs));
    if (!o.json_path.empty()) {
      std::ofstream f(o.json_path);
      f << out << "\n";
    }
    std::cout << out << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "starsift-bench-whiten: %s\n", e.what());
    return 1;
  }
}
