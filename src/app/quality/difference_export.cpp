// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/difference_export.hpp"

#include <cstdio>
#include <system_error>

#include "app/quality/npy_file.hpp"
#include "bench/json.hpp"
#include "pipeline/error.hpp"

namespace starsift::quality {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string frame_file(int frame, const char* what) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "frame-%06d-%s.npy", frame, what);
  return buf;
}

}  // namespace

std::filesystem::path DifferenceExport::cell_directory(const std::filesystem::path& root,
                                                       const SceneSpec& scene, const Cell& cell) {
  return root / scene.name / ("snr" + number(cell.snr) + "-speed" + number(cell.speed));
}

std::string DifferenceExport::difference_name(int frame) {
  return frame_file(frame, "difference");
}

std::string DifferenceExport::place_name(int frame) {
  return frame_file(frame, "place");
}

DifferenceExport::DifferenceExport(const QualityConfig& config, const SceneSpec& scene,
                                   const Cell& cell, int width, int height)
    : dir_(cell_directory(config.export_dir, scene, cell)),
      interior_(Interior::of(width, height, config.border)),
      places_(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), kNotScoredPlace) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw Error("cannot create " + dir_.string() + ": " + ec.message());

  bench::Json places = bench::Json::array();
  for (int p = 0; p < kPlaces; ++p) places.push(to_string(static_cast<Place>(p)));
  bench::Json interior = bench::Json::array();
  for (const int v : {interior_.x0, interior_.y0, interior_.x1, interior_.y1}) interior.push(v);
  bench::Json j = bench::Json::object();
  j.set("method", method_name(MethodKind::DifferenceAligned))
      .set("scene", scene.name)
      .set("jitter", scene.jitter)
      .set("cell", cell.index)
      .set("snr", cell.snr)
      .set("speed", cell.speed)
      .set("seed", std::to_string(cell.seed))
      .set("width", width)
      .set("height", height)
      .set("border", config.border)
      .set("interior", interior)
      .set("interior_mpix", static_cast<double>(interior_.pixels()) / 1.0e6)
      .set("hit_radius", config.hit_radius)
      .set("warmup_frames", config.warmup_frames)
      .set("scored_frames", config.scored_frames)
      .set("history", config.history)
      .set("places", places)
      .set("not_scored_place", static_cast<int>(kNotScoredPlace));
  const std::filesystem::path cell_json = dir_ / "cell.json";
  std::ofstream out(cell_json, std::ios::trunc);
  out << j;
  out.close();
  if (!out) throw Error("cannot write " + cell_json.string());
  truth_.open(dir_ / "truth.jsonl", std::ios::trunc);
  if (!truth_) throw Error("cannot write " + (dir_ / "truth.jsonl").string());
}

void DifferenceExport::write_frame(int frame, const Plane& difference, const SkyTruth& truth,
                                   const FrameLayout& layout) {
  const int w = difference.width();
  for (int y = interior_.y0; y < interior_.y1; ++y) {
    for (int x = interior_.x0; x < interior_.x1; ++x) {
      places_[static_cast<std::size_t>(y) * w + x] =
          static_cast<std::uint8_t>(layout.classify(x, y));
    }
  }
  const std::string diff_name = difference_name(frame);
  const std::string places_name = place_name(frame);
  write_npy(dir_ / diff_name, difference);
  write_npy(dir_ / places_name, places_, w, difference.height());

  std::string line = "{\"frame\":" + std::to_string(frame) + ",\"difference\":\"" + diff_name +
                     "\",\"place\":\"" + places_name + "\",\"trials\":[";
  bool first = true;
  for (std::size_t i = 0; i < truth.movers.size(); ++i) {
    if (!interior_.contains(truth.movers[i].x, truth.movers[i].y)) continue;
    if (!first) line += ',';
    line += std::to_string(i);
    first = false;
  }
  line += "],\"truth\":" + to_json_line(truth) + "}\n";
  truth_ << line;
  truth_.flush();
  if (!truth_) throw Error("cannot write " + (dir_ / "truth.jsonl").string());
}

}  // namespace starsift::quality
