// SPDX-License-Identifier: LGPL-2.1-or-later
// The aligned difference the harness writes for outside detectors (difference_export.hpp):
// the .npy files read back as NumPy would, with the difference-aligned baseline's residual
// value for value, the place map, and the truth of each scored frame.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "app/quality/cell_run.hpp"
#include "app/quality/config.hpp"
#include "app/quality/difference_export.hpp"
#include "app/quality/methods.hpp"
#include "app/quality/npy_file.hpp"
#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/sky/sky_psf.hpp"

using namespace starsift;
using namespace starsift::quality;
namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A .npy file parsed by the format's rules (not by npy_file.cpp): version 1.0, the header's
// descr and shape, and the bytes after it.
struct Npy {
  std::string descr;
  std::string shape;
  std::string data;
};

Npy parse_npy(const std::string& file) {
  REQUIRE(file.size() >= 10);
  REQUIRE(file.compare(0, 6, std::string("\x93NUMPY", 6)) == 0);
  CHECK(file[6] == 1);
  CHECK(file[7] == 0);
  const std::size_t header_len =
      static_cast<unsigned char>(file[8]) | (static_cast<unsigned char>(file[9]) << 8);
  REQUIRE(file.size() >= 10 + header_len);
  CHECK((10 + header_len) % 64 == 0);  // the data start aligned, as NumPy writes it
  const std::string header = file.substr(10, header_len);
  CHECK(header.back() == '\n');
  CHECK(header.find("'fortran_order': False") != std::string::npos);
  Npy out;
  const std::size_t d = header.find("'descr': '");
  REQUIRE(d != std::string::npos);
  out.descr = header.substr(d + 10, header.find('\'', d + 10) - (d + 10));
  const std::size_t s = header.find("'shape': (");
  REQUIRE(s != std::string::npos);
  out.shape = header.substr(s + 10, header.find(')', s) - (s + 10));
  out.data = file.substr(10 + header_len);
  return out;
}

fs::path fresh_directory() {
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("starsift-export-test-" + std::to_string(rd()) +
                                                    "-" + std::to_string(rd()));
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE("npy files: NumPy's header, padded to 64 bytes, and the pixels in C order", "[quality]") {
  for (const int width : {1, 3, 17, 96, 12345}) {
    const std::string h = npy_header("<f4", width, 7);
    CHECK(h.size() % 64 == 0);
    const Npy parsed = parse_npy(h);
    CHECK(parsed.descr == "<f4");
    CHECK(parsed.shape == "7, " + std::to_string(width));
    CHECK(parsed.data.empty());
  }

  const fs::path dir = fresh_directory();
  fs::create_directories(dir);
  Plane plane(3, 2);
  for (std::size_t i = 0; i < plane.size(); ++i) plane.data()[i] = -1.5f + 0.25f * i;
  write_npy(dir / "f.npy", plane);
  const Npy f = parse_npy(read_all(dir / "f.npy"));
  CHECK(f.descr == "<f4");
  CHECK(f.shape == "2, 3");
  REQUIRE(f.data.size() == 6 * sizeof(float));
  float values[6];
  std::memcpy(values, f.data.data(), sizeof values);
  for (int i = 0; i < 6; ++i) CHECK(values[i] == -1.5f + 0.25f * i);

  write_npy(dir / "u.npy", std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6}, 2, 3);
  const Npy u = parse_npy(read_all(dir / "u.npy"));
  CHECK(u.descr == "|u1");
  CHECK(u.shape == "3, 2");
  CHECK(u.data == std::string("\x01\x02\x03\x04\x05\x06", 6));
  CHECK_THROWS_AS(write_npy(dir / "bad.npy", std::vector<std::uint8_t>(5), 2, 3), Error);
  fs::remove_all(dir);
}

TEST_CASE("the exported aligned difference is the difference-aligned baseline's residual",
          "[quality]") {
  // A tiny jittering grid of one cell: 96² frames, history 4, 6 warm-up frames, 3 scored.
  QualityConfig config;
  config.size = 96;
  config.history = 4;
  config.warmup_frames = 6;
  config.scored_frames = 3;
  config.movers = 6;
  config.snrs = {20.0};
  config.speeds = {1.0};
  config.methods = {MethodKind::Difference, MethodKind::DifferenceAligned};
  config.chains.clear();
  config.export_dir = fresh_directory().string();
  config.validate();
  const SceneSpec scene = config.scenes().front();  // jitter-on: the alignment matters
  REQUIRE(scene.jitter > 0.0);
  const Cell cell = make_cells(config).front();
  const SkyParams sky_params = sky_params_for(config, scene, cell);
  const PsfKernel kernel =
      make_psf_kernel(sky::Psf(sky_params.psf, sky_params.fwhm, sky_params.moffat_beta));
  ThreadPool pool(2);
  run_cell(config, scene, cell, kernel, pool);

  const fs::path dir = DifferenceExport::cell_directory(config.export_dir, scene, cell);
  CHECK(dir == fs::path(config.export_dir) / "jitter-on" / "snr20-speed1");
  const std::string cell_json = read_all(dir / "cell.json");
  CHECK(cell_json.find("\"method\": \"difference-aligned\"") != std::string::npos);
  CHECK(cell_json.find("\"hit_radius\": 2") != std::string::npos);
  CHECK(cell_json.find("\"interior\": [8, 8, 88, 88]") != std::string::npos);

  // The same frames through a difference-aligned baseline of its own, and the truth.
  SkyGenerator sky(sky_params);
  const int w = sky_params.width, h = sky_params.height;
  const FrameShape shape{w, h, PixelFormat::Gray16, sky_params.bit_depth};
  auto method = make_method(MethodKind::DifferenceAligned, config.history, shape, config.backend,
                            sky.hot_pixels());
  std::vector<std::uint16_t> frame(static_cast<std::size_t>(w) * h);
  const ImageView view{reinterpret_cast<std::byte*>(frame.data()), w, h,
                       static_cast<std::ptrdiff_t>(w * sizeof(std::uint16_t)), PixelFormat::Gray16};
  Plane adu(w, h);
  SkyTruth truth;
  std::ifstream lines(dir / "truth.jsonl");
  REQUIRE(lines);
  const Interior interior = Interior::of(w, h, config.border);
  for (int k = 0; k < config.warmup_frames + config.scored_frames; ++k) {
    sky.render(static_cast<std::uint64_t>(k), view, truth);
    for (std::size_t i = 0; i < frame.size(); ++i) adu.data()[i] = frame[i];
    REQUIRE(method->process(const_view(view), adu, pool) == (k > 0));
    if (k < config.warmup_frames) {
      CHECK_FALSE(fs::exists(dir / DifferenceExport::difference_name(k)));
      continue;
    }
    INFO("frame " << k);
    const Npy diff = parse_npy(read_all(dir / DifferenceExport::difference_name(k)));
    CHECK(diff.descr == "<f4");
    CHECK(diff.shape == "96, 96");
    REQUIRE(diff.data.size() == method->residual().size() * sizeof(float));
    std::vector<float> values(method->residual().size());
    std::memcpy(values.data(), diff.data.data(), diff.data.size());
    std::size_t differing = 0;
    double sum2 = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      differing += values[i] != method->residual().data()[i];
      sum2 += static_cast<double>(values[i]) * values[i];
    }
    CHECK(differing == 0);
    CHECK(sum2 > 0.0);  // a real difference, not zeros

    const Npy places = parse_npy(read_all(dir / DifferenceExport::place_name(k)));
    CHECK(places.descr == "|u1");
    CHECK(places.shape == "96, 96");
    REQUIRE(places.data.size() == static_cast<std::size_t>(w) * h);
    int clear = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const auto p = static_cast<std::uint8_t>(places.data[static_cast<std::size_t>(y) * w + x]);
        if (!interior.contains(x, y)) {
          CHECK(p == kNotScoredPlace);
        } else {
          CHECK(p < kPlaces);
          clear += p == static_cast<std::uint8_t>(Place::Clear);
        }
      }
    }
    CHECK(clear > 0);

    std::string line;
    REQUIRE(std::getline(lines, line));
    CHECK(line.rfind("{\"frame\":" + std::to_string(k) + ",", 0) == 0);
    CHECK(line.find("\"truth\":" + to_json_line(truth) + "}") != std::string::npos);
    std::string trials;
    for (std::size_t i = 0; i < truth.movers.size(); ++i) {
      if (!interior.contains(truth.movers[i].x, truth.movers[i].y)) continue;
      trials += (trials.empty() ? "" : ",") + std::to_string(i);
    }
    CHECK(line.find("\"trials\":[" + trials + "]") != std::string::npos);
  }
  std::string extra;
  CHECK_FALSE(std::getline(lines, extra));
  fs::remove_all(config.export_dir);
}

TEST_CASE("exporting the aligned difference needs the difference-aligned method", "[quality]") {
  QualityConfig config;
  config.export_dir = "/tmp/unused";
  config.methods = {MethodKind::Difference};
  CHECK_THROWS_AS(config.validate(), Error);
  config.methods.push_back(MethodKind::DifferenceAligned);
  CHECK_NOTHROW(config.validate());
}
