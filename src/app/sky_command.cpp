// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/sky_command.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <system_error>

#include "app/cli.hpp"
#include "app/host_image.hpp"
#include "app/png_writer.hpp"
#include "app/stretch.hpp"
#include "pipeline/sky/sky_generator.hpp"

namespace starsift::app {

namespace {

constexpr int kMinSide = 16;
constexpr int kMaxSide = 16384;
constexpr int kMaxFrames = 100000;
constexpr const char* kTruthName = "truth.jsonl";
constexpr const char* kPreviewName = "preview.png";

std::filesystem::path frame_path(const SkyCommandOptions& o, int index) {
  char name[64];
  std::snprintf(name, sizeof name, "frame_%06d.%s", index,
                o.format == SkyFileFormat::Png ? "png" : "gray16");
  return o.out_dir / name;
}

// Raw frames are little-endian, whatever the host; a big-endian host would swap here.
void write_raw(const std::filesystem::path& path, ConstImageView frame) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (int y = 0; y < frame.height && out; ++y) {
    out.write(reinterpret_cast<const char*>(frame.row(y)),
              static_cast<std::streamsize>(frame.row_bytes()));
  }
  if (!out) throw Error("cannot write " + path.string());
}

}  // namespace

void print_sky_help() {
  std::printf(
      "usage: starsift sky [options]\n"
      "\n"
      "Renders frames of the synthetic sky (the model of the siftskysrc element, with its\n"
      "defaults: docs/sky.md) as GRAY16 ADU with the given bit depth, and writes\n"
      "  DIR/frame_NNNNNN.png     16-bit greyscale PNG per frame (--format png), or\n"
      "  DIR/frame_NNNNNN.gray16  little-endian uint16, rows packed, no header (--format raw)\n"
      "  DIR/%s          the truth of each frame, one JSON line per frame\n"
      "  DIR/%s          the last frame, 8-bit with an asinh stretch, to look at\n"
      "\n"
      "options:\n"
      "  --out DIR            where the files go (created if missing) [sky]\n"
      "  --frames N           frames, 1..%d [10]\n"
      "  --width W            frame width, %d..%d [1024]\n"
      "  --height H           frame height, %d..%d [1024]\n"
      "  --seed S             random seed; equal seeds give equal frames [1]\n"
      "  --movers N           movers in every frame, 0..%d [8]\n"
      "  --bit-depth B        bits per sample, %d..%d [12]\n"
      "  --format F           png, raw [png]\n"
      "  -h, --help           this text\n",
      kTruthName, kPreviewName, kMaxFrames, kMinSide, kMaxSide, kMinSide, kMaxSide,
      starsift::SkyParams::kMaxMovers, starsift::SkyParams::kMinBitDepth,
      starsift::SkyParams::kMaxBitDepth);
}

SkyCommandOptions parse_sky_options(std::span<char* const> args, bool& help) {
  SkyCommandOptions o;
  help = false;
  ArgReader reader(args);
  while (!reader.done()) {
    const std::string_view flag = reader.next_flag();
    if (flag == "-h" || flag == "--help") {
      help = true;
    } else if (flag == "--out") {
      o.out_dir = reader.path_value();
    } else if (flag == "--frames") {
      o.frames = parse_int(flag, reader.value(), 1, kMaxFrames);
    } else if (flag == "--width") {
      o.width = parse_int(flag, reader.value(), kMinSide, kMaxSide);
    } else if (flag == "--height") {
      o.height = parse_int(flag, reader.value(), kMinSide, kMaxSide);
    } else if (flag == "--seed") {
      o.seed = parse_u64(flag, reader.value());
    } else if (flag == "--movers") {
      o.movers = parse_int(flag, reader.value(), 0, starsift::SkyParams::kMaxMovers);
    } else if (flag == "--bit-depth") {
      o.bit_depth = parse_int(flag, reader.value(), starsift::SkyParams::kMinBitDepth,
                              starsift::SkyParams::kMaxBitDepth);
    } else if (flag == "--format") {
      const std::string_view text = reader.value();
      if (text == "png") {
        o.format = SkyFileFormat::Png;
      } else if (text == "raw") {
        o.format = SkyFileFormat::Raw;
      } else {
        throw UsageError("--format '" + std::string(text) + "' is not allowed", "png, raw");
      }
    } else {
      throw UsageError("unknown option '" + std::string(flag) + "'",
                       "--out, --frames, --width, --height, --seed, --movers, --bit-depth, "
                       "--format, --help");
    }
  }
  return o;
}

int run_sky_command(const SkyCommandOptions& o) {
  starsift::SkyParams params;  // not app::SkyParams, the demo's older sky
  params.width = o.width;
  params.height = o.height;
  params.seed = o.seed;
  params.movers = o.movers;
  params.bit_depth = o.bit_depth;
  params.validate_for(PixelFormat::Gray16);

  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) {
    throw Error("--out: cannot create directory '" + o.out_dir.string() + "': " + ec.message(),
                "a directory that can be created and written");
  }
  const std::filesystem::path truth_path = o.out_dir / kTruthName;
  std::ofstream truth_file(truth_path, std::ios::trunc);
  if (!truth_file) throw Error("cannot write " + truth_path.string());

  const auto start = std::chrono::steady_clock::now();
  SkyGenerator sky(params);
  std::printf(
      "starsift sky: %d frame%s of %dx%d GRAY16 (%d bits), seed %llu: %zu stars, %d "
      "movers -> %s\n",
      o.frames, o.frames == 1 ? "" : "s", o.width, o.height, o.bit_depth,
      static_cast<unsigned long long>(o.seed), sky.stars().size(), o.movers,
      o.out_dir.string().c_str());
  std::fflush(stdout);

  HostImage frame(o.width, o.height, PixelFormat::Gray16);
  SkyTruth truth;
  std::string line;
  for (int k = 0; k < o.frames; ++k) {
    sky.render(static_cast<std::uint64_t>(k), frame.view(), truth);
    const std::filesystem::path path = frame_path(o, k);
    if (o.format == SkyFileFormat::Png) {
      write_png_gray16(path, frame.cview());
    } else {
      write_raw(path, frame.cview());
    }
    line.clear();
    append_json_line(truth, line);
    truth_file << line;
    if (!truth_file) throw Error("cannot write " + truth_path.string());
  }
  truth_file.close();
  if (!truth_file) throw Error("cannot write " + truth_path.string());

  HostImage preview(o.width, o.height, PixelFormat::Gray8);
  apply_stretch(fit_asinh_stretch(frame.cview()), frame.cview(), preview.view());
  write_png_gray8(o.out_dir / kPreviewName, preview.cview());

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  wrote %d frames, %s and %s in %.1f s\n", o.frames, kTruthName, kPreviewName,
              seconds);
  return 0;
}

}  // namespace starsift::app
