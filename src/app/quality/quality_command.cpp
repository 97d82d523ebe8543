// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/quality_command.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <system_error>

#include "app/quality/quality_pictures.hpp"
#include "app/quality/report_json.hpp"
#include "app/quality/report_markdown.hpp"
#include "app/quality/runner.hpp"
#include "pipeline/error.hpp"

#ifndef STARSIFT_VERSION
#define STARSIFT_VERSION "unknown"
#endif

namespace starsift::app {

namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <class Write>
void write_file(const std::filesystem::path& path, Write write) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error("cannot write " + path.string());
  write(out);
  out.close();
  if (!out) throw Error("cannot write " + path.string());
}

}  // namespace

int run_quality_command(const QualityOptions& options, const std::string& command_line) {
  // The backend first: a CUDA request that cannot be served stops before any work.
  QualityOptions o = options;
  o.config.backend = resolve_backend(o.backend, o.device_id);
  o.config.validate();
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) {
    throw Error("--out: cannot create directory '" + o.out_dir.string() + "': " + ec.message(),
                "a directory that can be created and written");
  }
  const quality::QualityConfig& c = o.config;
  const std::size_t cells = c.snrs.size() * c.speeds.size();
  std::printf(
      "starsift quality: %zu cells x 2 scenes, %dx%d, %d + %d frames each, %d movers -> %s\n",
      cells, c.size, c.size, c.warmup_frames, c.scored_frames, c.movers,
      o.out_dir.string().c_str());
  std::printf("  whitening on %s: %s\n", std::string(to_string(c.backend.backend)).c_str(),
              c.backend.reason.c_str());
  if (!c.export_dir.empty()) {
    std::printf("  aligned differences and truth of every scored frame -> %s\n",
                c.export_dir.c_str());
  }
  std::fflush(stdout);

  ThreadPool pool(o.threads);
  std::vector<quality::PictureFrame> pictures;
  const quality::QualityReport report = quality::run_quality(
      c, pool,
      [](const std::string& scene, const quality::Cell& cell, int done, int total) {
        std::printf("  [%d/%d] %s snr %g speed %g\n", done, total, scene.c_str(), cell.snr,
                    cell.speed);
        std::fflush(stdout);
      },
      &pictures);

  const std::string date = utc_now();
  write_file(o.out_dir / "quality.json",
             [&](std::ostream& out) { quality::write_json(report, STARSIFT_VERSION, date, out); });
  write_file(o.out_dir / "quality.md", [&](std::ostream& out) {
    quality::write_markdown(report, STARSIFT_VERSION, date, command_line, out);
  });
  const std::vector<std::string> pngs = write_quality_pictures(pictures, c.scenes(), o.out_dir);

  std::printf("  wrote quality.json, quality.md");
  for (const std::string& p : pngs) std::printf(", %s", p.c_str());
  std::printf(" in %.0f s\n", report.seconds);
  return 0;
}

}  // namespace starsift::app
