// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-labels: connected-component labelling of detection masks on the GPU
// (launch_labels: dense ids in raster order and the count), beside NPP's union-find labeller
// and its compress step, measured in the same run on the same masks; and the whole detection
// on the same masks (launch_detect + launch_detect_catalogue on the mask as a GRAY8 frame,
// no background, no filter, threshold 0.5 absolute, min-area 1: labels, dense ids, every
// object's statistics and the compacted catalogue of up to 2^20 records).
//
// Masks: a star field (Gaussian stars of log-uniform flux over Gaussian noise, thresholded at
// 3 sigma, with six streaks), a crowded field (five times the stars), random 10 % and 50 %,
// and one frame-filling object. Each is uploaded to enough buffers that the masks and labels
// rotated through exceed twice the L2; CUDA-event medians (bench/timing.hpp). Every GPU result
// is checked against label_reference() bit for bit before it is timed.
//
// Usage: starsift-bench-labels [--sizes 4096,8192] [--masks star,crowded,random10,random50,full]
//                              [--npp on|off] [--npy DIR] [--json out.json]
// --npy DIR writes each mask as DIR/<mask>_<size>.npy (uint8) for bench/peers/cupy_label.py.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "bench/list_args.hpp"
#include "bench/peers/npp_loader.hpp"
#include "bench/timing.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/detect/detect.cuh"
#include "cuda/detect/labels.cuh"
#include "cuda/device_buffer.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/labels.hpp"
#include "pipeline/detect/line_channel.hpp"
#include "pipeline/error.hpp"
#include "pipeline/stage.hpp"
#include "pipeline/stage_result.hpp"

namespace {

using starsift::Connectivity;
using starsift::bench::Json;
namespace cuda = starsift::cuda;
namespace npp = starsift::bench::npp;

struct Options {
  std::vector<int> sizes{4096, 8192};
  std::vector<std::string> masks{"star", "crowded", "random10", "random50", "full"};
  bool npp = true;
  std::string npy_dir;
  std::string json_path;
};

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
    else if (a == "--masks")
      o.masks = starsift::bench::split_list(value());
    else if (a == "--npp")
      o.npp = value() == "on";
    else if (a == "--npy")
      o.npy_dir = value();
    else if (a == "--json")
      o.json_path = value();
    else
      throw starsift::Error("unknown option " + a, "--sizes, --masks, --npp, --npy, --json");
  }
  return o;
}

// Gaussian stars (sigma 1.5 px, flux 10^2.5..10^5) on noise of sigma 10, plus `streaks` trails
// 3 px wide and 10..50 % of the width long, thresholded at 3 sigma: 0 or 255 per pixel.
std::vector<std::uint8_t> sky_mask(int n, int stars, int streaks, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> sky(static_cast<std::size_t>(n) * n);
  std::normal_distribution<float> noise(0.0f, 10.0f);
  for (float& v : sky) v = noise(rng);
  std::uniform_real_distribution<double> pos(0.0, n), logflux(2.5, 5.0), unit(0.0, 1.0);
  const double sigma = 1.5, norm = 1.0 / (2 * M_PI * sigma * sigma);
  for (int s = 0; s < stars; ++s) {
    const double cx = pos(rng), cy = pos(rng), peak = std::pow(10.0, logflux(rng)) * norm;
    const int r =
        static_cast<int>(std::ceil(sigma * std::sqrt(2 * std::log(std::max(peak / 3, 1.0)))));
    for (int y = std::max(0, static_cast<int>(cy) - r);
         y <= std::min(n - 1, static_cast<int>(cy) + r); ++y)
      for (int x = std::max(0, static_cast<int>(cx) - r);
           x <= std::min(n - 1, static_cast<int>(cx) + r); ++x) {
        const double dx = x - cx, dy = y - cy;
        sky[static_cast<std::size_t>(y) * n + x] +=
            static_cast<float>(peak * std::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma)));
      }
  }
  for (int k = 0; k < streaks; ++k) {
    const double x0 = pos(rng), y0 = pos(rng), angle = unit(rng) * M_PI;
    const double len = n * (0.1 + 0.4 * unit(rng)), c = std::cos(angle), s = std::sin(angle);
    for (double t = 0; t < len; t += 0.5)
      for (double w = -1.5; w <= 1.5; w += 0.5) {
        const int x = static_cast<int>(x0 + t * c - w * s),
                  y = static_cast<int>(y0 + t * s + w * c);
        if (x >= 0 && y >= 0 && x < n && y < n) sky[static_cast<std::size_t>(y) * n + x] += 60.0f;
      }
  }
  std::vector<std::uint8_t> mask(sky.size());
  for (std::size_t i = 0; i < sky.size(); ++i) mask[i] = sky[i] > 30.0f ? 255 : 0;
  return mask;
}

std::vector<std::uint8_t> make_mask(const std::string& name, int n) {
  const double area = static_cast<double>(n) * n / (4096.0 * 4096.0);
  if (name == "star") return sky_mask(n, static_cast<int>(40000 * area), 6, 1);
  if (name == "crowded") return sky_mask(n, static_cast<int>(200000 * area), 6, 2);
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(n) * n, 255);
  if (name == "full") return mask;
  const double density = name == "random10" ? 0.1 : name == "random50" ? 0.5 : -1;
  if (density < 0)
    throw starsift::Error("unknown mask " + name, "star, crowded, random10, random50, full");
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& m : mask) m = u(rng) < density ? 255 : 0;
  return mask;
}

void write_npy(const std::string& path, const std::vector<std::uint8_t>& mask, int n) {
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(n) +
                       ", " + std::to_string(n) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&len), 2);
  f << header;
  f.write(reinterpret_cast<const char*>(mask.data()), static_cast<std::streamsize>(mask.size()));
}

// NPP's labeller: nppiLabelMarkersUF_8u32u_C1R_Ctx (regions of equal value, so the background is
// labelled too) and nppiCompressMarkerLabelsUF_32u_C1IR_Ctx (renumbers densely; returns the
// count to the host, so it synchronises). Resolved from the libnppif the loader opened.
struct NppLabels {
  using Size = npp::NppiSize;
  using LabelFn = npp::NppStatus (*)(const void*, int, void*, int, Size, int, void*,
                                     npp::NppStreamContext);
  using LabelSizeFn = npp::NppStatus (*)(Size, int*);
  using CompressFn = npp::NppStatus (*)(void*, int, Size, int, int*, void*, npp::NppStreamContext);
  using CompressSizeFn = npp::NppStatus (*)(int, int*);
  LabelFn label = nullptr;
  LabelSizeFn label_size = nullptr;
  CompressFn compress = nullptr;
  CompressSizeFn compress_size = nullptr;
  std::string reason;

  explicit NppLabels(const npp::Library& lib) {
    if (!lib.available()) {
      reason = lib.reason();
      return;
    }
    void* h = dlopen(lib.path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
      reason = lib.path() + ": not loaded";
      return;
    }
    label = reinterpret_cast<LabelFn>(dlsym(h, "nppiLabelMarkersUF_8u32u_C1R_Ctx"));
    label_size = reinterpret_cast<LabelSizeFn>(dlsym(h, "nppiLabelMarkersUFGetBufferSize_32u_C1R"));
    compress = reinterpret_cast<CompressFn>(dlsym(h, "nppiCompressMarkerLabelsUF_32u_C1IR_Ctx"));
    compress_size =
        reinterpret_cast<CompressSizeFn>(dlsym(h, "nppiCompressMarkerLabelsGetBufferSize_32u_C1R"));
    if (!label || !label_size || !compress || !compress_size) {
      reason = lib.path() + " lacks the LabelMarkersUF functions";
      label = nullptr;
    }
  }
  bool available() const { return label != nullptr; }
};

// Median over `runs` of one call timed by events (for calls that synchronise: no graph).
// `prepare`, when given, runs before each call outside the timed span.
double time_calls(cudaStream_t s, int runs, const std::function<void()>& call,
                  const std::function<void()>& prepare = {}) {
  cuda::Event start, stop;
  std::vector<double> ms;
  if (prepare) prepare();
  call();  // warm-up
  cuda::check(cudaStreamSynchronize(s), "sync");
  for (int i = 0; i < runs; ++i) {
    if (prepare) prepare();
    cuda::check(cudaEventRecord(start.get(), s), "cudaEventRecord");
    call();
    cuda::check(cudaEventRecord(stop.get(), s), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
    float t = 0;
    cuda::check(cudaEventElapsedTime(&t, start.get(), stop.get()), "elapsed");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

// The whole detection on the masks (see the top): its median time, and whether its count and
// overflow agree with the labelling's component count.
void time_detection(int n, Connectivity c, std::vector<cuda::DeviceImage>& masks,
                    std::uint32_t components, cudaStream_t s, Json& r) {
  starsift::DetectParams p;
  p.background = starsift::DetectBackground::None;
  p.filter = starsift::DetectFilter::None;
  p.threshold_mode = starsift::DetectThreshold::Absolute;
  p.threshold = 0.5;
  p.min_area = 1;
  p.max_objects = starsift::DetectParams::kMaxMaxObjects;
  p.connectivity = c;
  p.output = starsift::DetectOutput::Input;
  const starsift::FrameShape shape{n, n, starsift::PixelFormat::Gray8, 8};
  cuda::DetectBuffers buffers;
  buffers.allocate(p, shape, {}, 0, 1.0, starsift::LineBank{});
  const std::size_t result_bytes =
      starsift::kResultRecordsOffset + sizeof(starsift::DetectedObject) * p.max_objects;
  cuda::DeviceImage result(result_bytes, 1);
  cuda::DeviceImage out(static_cast<std::size_t>(n), n);
  // As the engines run it, the stage keeps its frame (output: input), so its `out` is the
  // input itself; `separate` writes the frame into another one, as process() does.
  bool separate = false;
  auto launch = [&](int f) -> const char* {
    const starsift::ConstImageView in{masks[f].data(), n, n,
                                      static_cast<std::ptrdiff_t>(masks[f].pitch()),
                                      starsift::PixelFormat::Gray8};
    const starsift::ImageView o =
        separate ? starsift::ImageView{out.data(), n, n, static_cast<std::ptrdiff_t>(out.pitch()),
                                       starsift::PixelFormat::Gray8}
                 : starsift::kept_frame_out(in);
    cudaError_t e = cuda::launch_detect(p, buffers, in, o, s);
    if (e == cudaSuccess) e = cuda::launch_detect_catalogue(p, buffers, result.data(), s);
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  };
  if (const char* e = launch(0)) throw starsift::Error(std::string("detect: ") + e);
  starsift::ResultHeader header;
  cuda::check(cudaMemcpyAsync(&header, result.data(), sizeof(header), cudaMemcpyDeviceToHost, s),
              "download");
  cuda::check(cudaStreamSynchronize(s), "sync");
  starsift::bench::TimingPlan plan;
  plan.target_ms = 50;
  plan.reps = 9;
  const starsift::bench::Timing t =
      starsift::bench::measure(s, static_cast<int>(masks.size()), plan, launch);
  separate = true;
  const starsift::bench::Timing copied =
      starsift::bench::measure(s, static_cast<int>(masks.size()), plan, launch);
  r.set("detect_ms", t.ms_median)
      .set("detect_frame_copied_ms", copied.ms_median)
      .set("detect_objects", static_cast<unsigned long long>(header.count))
      .set("detect_overflow", static_cast<unsigned long long>(header.overflow))
      .set("detect_count_agrees", header.count + header.overflow == components)
      .set("detect_includes",
           "labels, dense ids, statistics, catalogue; output: input, which the stage keeps "
           "(detect_frame_copied_ms: with the frame copied into another, as process() does)");
}

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    cuda::check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop{};
    cuda::check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    const npp::Library lib = o.npp ? npp::Library::load() : npp::Library::unavailable("--npp off");
    lib.use_device(0);
    const NppLabels nppl(lib);
    Json out = Json::object();
    out.set("benchmark", "starsift-bench-labels")
        .set("device", std::string(prop.name))
        .set("l2_bytes", prop.l2CacheSize)
        .set("cuda_runtime", runtime)
        .set("cuda_driver", driver)
        .set("npp", nppl.available() ? Json(lib.path() + " " + lib.version()) : Json(nppl.reason))
        .set("timing",
             "CUDA events, median of repetitions; starsift rotates buffers beyond 2x L2 "
             "(bench/timing.hpp); NPP: median of 9 (label) or 5 (compress) calls, one frame");
    Json runs = Json::array();
    cuda::Stream stream;
    const cudaStream_t s = stream.get();
    std::vector<std::uint32_t> parent;
    for (const int n : o.sizes) {
      const std::size_t pixels = static_cast<std::size_t>(n) * n;
      const std::size_t set_bytes = pixels * 5;  // mask + labels
      const int frames = std::max(2, static_cast<int>((2.0 * prop.l2CacheSize) / set_bytes) + 1);
      std::vector<cuda::DeviceImage> masks, labels;
      for (int f = 0; f < frames; ++f) {
        masks.emplace_back(static_cast<std::size_t>(n), n);
        labels.emplace_back(static_cast<std::size_t>(n) * 4, n);
      }
      const std::size_t scratch_bytes = cuda::label_scratch_bytes(n, n);
      cuda::DeviceImage scratch(scratch_bytes, 1);
      cuda::DeviceImage count(4 * static_cast<std::size_t>(frames), 1);
      for (const std::string& name : o.masks) {
        std::fprintf(stderr, "%s %dx%d: generating...\n", name.c_str(), n, n);
        const std::vector<std::uint8_t> host = make_mask(name, n);
        if (!o.npy_dir.empty())
          write_npy(o.npy_dir + "/" + name + "_" + std::to_string(n) + ".npy", host, n);
        std::size_t on = 0;
        for (std::uint8_t v : host) on += v != 0;
        for (auto& m : masks)
          cuda::check(
              cudaMemcpy2D(m.data(), m.pitch(), host.data(), n, n, n, cudaMemcpyHostToDevice),
              "upload");
        for (Connectivity c : {Connectivity::Four, Connectivity::Eight}) {
          auto launch = [&](int f) -> const char* {
            const cudaError_t e =
                cuda::launch_labels(reinterpret_cast<const std::uint8_t*>(masks[f].data()),
                                    static_cast<std::ptrdiff_t>(masks[f].pitch()), n, n, c,
                                    reinterpret_cast<std::uint32_t*>(labels[f].data()),
                                    static_cast<std::ptrdiff_t>(labels[f].pitch() / 4),
                                    reinterpret_cast<std::uint32_t*>(count.data()) + f,
                                    {scratch.data(), scratch_bytes}, s);
            return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
          };
          // Correctness first: the GPU's labels and count against the CPU reference.
          std::vector<std::uint32_t> expected(pixels), got(pixels);
          const std::uint32_t n_ref =
              starsift::label_reference(host.data(), n, n, n, c, expected.data(), n, parent);
          if (const char* e = launch(0)) throw starsift::Error(std::string("launch: ") + e);
          cuda::check(cudaStreamSynchronize(s), "sync");
          cuda::check(cudaMemcpy2D(got.data(), static_cast<std::size_t>(n) * 4, labels[0].data(),
                                   labels[0].pitch(), static_cast<std::size_t>(n) * 4, n,
                                   cudaMemcpyDeviceToHost),
                      "download");
          std::uint32_t n_gpu = 0;
          cuda::check(cudaMemcpy(&n_gpu, count.data(), 4, cudaMemcpyDeviceToHost), "download");
          const bool identical = got == expected && n_gpu == n_ref;
          starsift::bench::TimingPlan plan;
          plan.target_ms = 50;
          plan.reps = 9;
          const starsift::bench::Timing t = starsift::bench::measure(s, frames, plan, launch);
          Json r = Json::object();
          r.set("size", n)
              .set("mask", name)
              .set("connectivity", static_cast<int>(c))
              .set("foreground_fraction", static_cast<double>(on) / pixels)
              .set("components", static_cast<unsigned long long>(n_ref))
              .set("identical_to_reference", identical)
              .set("frames_rotated", frames)
              .set("starsift_ms", t.ms_median)
              .set("starsift_ms_min", t.ms_min)
              .set("starsift_gpix_per_s", pixels / (t.ms_median * 1e-3) / 1e9)
              .set("graph", t.graph);
          if (!t.error.empty()) r.set("error", t.error);
          time_detection(n, c, masks, n_ref, s, r);
          if (nppl.available()) {
            const npp::NppiSize roi{n, n};
            int label_buf = 0, compress_buf = 0;
            nppl.label_size(roi, &label_buf);
            nppl.compress_size(n * n, &compress_buf);
            cuda::DeviceImage buf(static_cast<std::size_t>(std::max(label_buf, compress_buf)), 1);
            const npp::NppStreamContext ctx = npp::Library::context(s);
            const int norm = c == Connectivity::Eight ? 0 : 1;  // nppiNormInf, nppiNormL1
            int status = 0, npp_count = 0;
            auto* lab = labels[0].data();
            const int step = static_cast<int>(labels[0].pitch());
            // Compress renumbers in place: each timed call gets freshly labelled markers.
            auto label_markers = [&] {
              status |= nppl.label(masks[0].data(), static_cast<int>(masks[0].pitch()), lab, step,
                                   roi, norm, buf.data(), ctx);
            };
            const double label_ms = time_calls(s, 9, label_markers);
            const double compress_ms = time_calls(
                s, 5,
                [&] {
                  status |= nppl.compress(lab, step, roi, n * n, &npp_count, buf.data(), ctx);
                },
                label_markers);
            r.set("npp_label_ms", label_ms)
                .set("npp_compress_ms", compress_ms)
                .set("npp_count_with_background", npp_count)
                .set("npp_status", status);
          }
          std::cerr << r << "\n";
          runs.push(std::move(r));
        }
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
    std::fprintf(stderr, "starsift-bench-labels: %s\n", e.what());
    return 1;
  }
}
