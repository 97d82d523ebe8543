// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/report.hpp"

#include <array>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <regex>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_query.hpp"

namespace starsift::bench {

namespace {

// The kernel driver's release ("580.65.06"), read from /proc; empty when not there.
std::string driver_release() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return {};
  std::smatch m;
  static const std::regex kRelease(R"(Module\D*?\s(\d+\.\d+(?:\.\d+)*))");
  return std::regex_search(line, m, kRelease) ? m[1].str() : std::string();
}

}  // namespace

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

Device describe_device(int index) {
  Device d;
  cuda::check(cudaGetDeviceProperties(&d.prop, index), "cudaGetDeviceProperties");
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  d.json = Json::object()
               .set("name", d.prop.name)
               .set("index", index)
               .set("compute_capability",
                    std::to_string(d.prop.major) + "." + std::to_string(d.prop.minor))
               .set("multiprocessors", d.prop.multiProcessorCount)
               .set("l2_bytes", d.prop.l2CacheSize)
               .set("memory_bytes", static_cast<unsigned long long>(d.prop.totalGlobalMem))
               .set("driver_cuda_version", cuda_version(driver))
               .set("runtime_version", cuda_version(runtime));
  if (const std::string release = driver_release(); !release.empty()) {
    d.json.set("driver_release", release);
  }
  return d;
}

Json timing_json(const Timing& t) {
  Json reps = Json::array();
  for (const double ms : t.ms_reps) reps.push(ms);
  Json j = Json::object()
               .set("ms_median", t.ms_median)
               .set("ms_min", t.ms_min)
               .set("ms_reps", std::move(reps))
               .set("calls_per_rep", t.calls)
               .set("launch", t.graph ? "graph" : "stream");
  if (!t.capture_error.empty()) j.set("capture_error", t.capture_error);
  return j;
}

Json pixel_json(ConstImageView v, int x, int y, int bytes) {
  std::array<unsigned char, 16> raw{};
  const std::byte* p = v.row(y) + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(v.format);
  if (cudaMemcpy(raw.data(), p, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  const FormatInfo& info = format_info(v.format);
  Json samples = Json::array();
  for (int off = 0; off + info.bytes_per_sample <= bytes; off += info.bytes_per_sample) {
    if (info.is_float) {
      float f;
      std::memcpy(&f, raw.data() + off, sizeof f);
      samples.push(static_cast<double>(f));
    } else if (info.bytes_per_sample == 2) {
      samples.push(static_cast<int>(raw[off] | raw[off + 1] << 8));
    } else {
      samples.push(static_cast<int>(raw[off]));
    }
  }
  return samples;
}

std::string context_lost() {
  cudaDeviceSynchronize();
  cudaGetLastError();
  const cudaError_t s = cudaDeviceSynchronize();
  return s == cudaSuccess ? std::string() : cuda_error("CUDA context unusable", s);
}

Json rotating_method(const TimingPlan& plan) {
  return Json::object()
      .set("cache", "rotating")
      .set("frames_rule", "input+output pairs > 2 x L2, at least 3")
      .set("timing", "cuda events around each repetition, after warm-up")
      .set("statistic", "median of repetitions, per call")
      .set("reps", plan.reps)
      .set("target_ms_per_rep", plan.target_ms);
}

std::optional<Device> open_device(int index, std::string_view tool) {
  std::string description;
  if (const std::string why = cuda::device_unusable_reason(index, &description); !why.empty()) {
    std::cerr << tool << ": " << why << "\n";
    return std::nullopt;
  }
  cuda::use_device(index);
  Device device = describe_device(index);
  std::cerr << "device " << description << ", L2 " << device.prop.l2CacheSize / (1 << 20)
            << " MiB\n";
  return device;
}

bool write_json(const Json& out, const std::string& path, std::string_view tool) {
  if (path.empty()) {
    std::cout << out;
    return true;
  }
  std::ofstream f(path);
  f << out;
  if (!f) {
    std::cerr << tool << ": cannot write " << path << "\n";
    return false;
  }
  std::cerr << "wrote " << path << "\n";
  return true;
}

int finish_run(Json& out, const std::string& path, std::string_view tool,
               const std::string& aborted, int failures, std::string_view failed) {
  if (!aborted.empty()) {
    out.set("aborted", aborted);
    std::cerr << tool << ": stopped early: " << aborted << "\n";
  }
  if (!write_json(out, path, tool)) return 1;
  if (!aborted.empty()) return 1;
  if (failures) {
    std::cerr << tool << ": " << failures << " " << failed << "\n";
    return 3;
  }
  return 0;
}

}  // namespace starsift::bench
