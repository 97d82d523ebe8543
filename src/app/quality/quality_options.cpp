// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/quality_options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/cli.hpp"

namespace starsift::app {

namespace {

// A finite number in [min, max]; throws UsageError naming the flag.
double parse_number(std::string_view flag, std::string_view text, double min, double max) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !std::isfinite(v) || v < min ||
      v > max) {
    char range[96];
    std::snprintf(range, sizeof range, "numbers %g..%g", min, max);
    throw UsageError(std::string(flag) + " '" + s + "' is not allowed", range);
  }
  return v;
}

// "3,4,5": one or more numbers in (0, max].
std::vector<double> parse_list(std::string_view flag, std::string_view text, double max) {
  std::vector<double> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const double v = parse_number(flag, item, 0.0, max);
    if (v <= 0.0) throw UsageError(std::string(flag) + " values must be > 0");
    values.push_back(v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

// "none", "all" or method names, comma-separated, each once.
std::vector<quality::MethodKind> parse_methods(std::string_view flag, std::string_view text) {
  if (text == "none") return {};
  if (text == "all") return {std::begin(quality::kAllMethods), std::end(quality::kAllMethods)};
  std::string names;
  for (const quality::MethodKind m : quality::kAllMethods) {
    names += std::string(names.empty() ? "" : ", ") + std::string(quality::method_name(m));
  }
  std::vector<quality::MethodKind> methods;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const auto* found =
        std::find_if(std::begin(quality::kAllMethods), std::end(quality::kAllMethods),
                     [item](quality::MethodKind m) { return quality::method_name(m) == item; });
    if (found == std::end(quality::kAllMethods) ||
        std::find(methods.begin(), methods.end(), *found) != methods.end()) {
      throw UsageError(std::string(flag) + " '" + std::string(item) + "' is not allowed",
                       "none, all, or each once of: " + names);
    }
    methods.push_back(*found);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return methods;
}

}  // namespace

void print_quality_help() {
  const quality::QualityConfig d;
  std::printf(
      "usage: starsift quality [options]\n"
      "\n"
      "Does whitening find faint movers, and how does it compare with frame differencing and a\n"
      "running-median background on the same frames? Renders seeded synthetic skies (the\n"
      "siftskysrc model) with movers of known peak SNR and speed, one sky per (SNR, speed)\n"
      "cell, with jitter and without; runs whitening (shift: none and resample), frame\n"
      "differencing and a running median over every frame; detects movers with the PSF's\n"
      "matched filter at the threshold that allows the given false-alarm rate; runs the\n"
      "shipped chain (siftwhiten ! siftdetect with its defaults, then the tracker) at a list\n"
      "of detection thresholds and scores its catalogues and tracks; and writes\n"
      "  DIR/quality.json   every number, raw\n"
      "  DIR/quality.md     the tables\n"
      "  DIR/frame-SCENE.png, DIR/zoom-SCENE.png   one frame: input and residuals, movers\n"
      "                     circled\n"
      "docs/quality.md defines every choice and number.\n"
      "\n"
      "options:\n"
      "  --out DIR              where the files go (created if missing) [quality]\n"
      "  --size N               frames are N x N, 64..8192 [%d]\n"
      "  --seed S               the seed every cell's sky derives from [%llu]\n"
      "  --frames N             scored frames per cell [%d]\n"
      "  --warmup N             frames before scoring, more than the history [%d]\n"
      "  --movers N             movers in every frame [%d]\n"
      "  --history N            whitening's history and the running median's frames [%d]\n"
      "  --noise-frames N       the chains' whitening noise-frames, sigma's time constant in\n"
      "                         frames (0: whitening's default, 4 x history) [0]\n"
      "  --fit current|past     the chains' whitening fit [whitening's default]\n"
      "  --shift-noise PX       the chains' whitening shift-noise, 0..1 px (0: off)\n"
      "                         [whitening's default]\n"
      "  --fit-subsample K      the chains' whitening fit-subsample, 0..64 (0: automatic)\n"
      "                         [whitening's default]\n"
      "  --snr LIST             peak SNRs of the grid, comma-separated [3,4,5,6,8]\n"
      "  --speeds LIST          speeds of the grid, px/frame [0.5,1,2,3.5,5]\n"
      "  --jitter PX            walk step of the jitter-on scene, px/frame [%g]\n"
      "  --star-density N       stars per megapixel [%g]\n"
      "  --hit-radius PX        a detection this close to a mover's streak is a hit [%g]\n"
      "  --border PX            edge strip neither detected in nor scored [%d]\n"
      "  --false-alarm-rate R   false detections allowed per megapixel-frame [%g]\n"
      "  --methods LIST         residual methods the harness's matched filter scores: all,\n"
      "                         none, or names (whiten-defaults, running-median, ...) [all];\n"
      "                         the shipped chain (whiten -> detect -> tracks) always runs\n"
      "  --chain-thresholds L   detection thresholds (sigma) the shipped chain runs at,\n"
      "                         ascending [3.5,3.75,...,7]\n"
      "  --fps F                frame rate the false tracks per hour are counted at [%g]\n"
      "  --backend B            where whitening and the chains' detection run: auto, cuda,\n"
      "                         cpu [auto: CUDA when usable, else CPU]; the baselines, the\n"
      "                         tracker and the scoring run on the CPU\n"
      "  --device-id N          CUDA device for cuda and auto, 0..%d [0]\n"
      "  --export-difference DIR  writes each scored frame's aligned difference (the\n"
      "                         difference-aligned baseline's residual, .npy) and truth under\n"
      "                         DIR for an outside detector (bench/peers/sep_quality.py);\n"
      "                         needs difference-aligned among --methods\n"
      "  --threads N            the harness's worker threads (baselines, matched filter), 0 for\n"
      "                         one per hardware thread [0]; whitening on the CPU uses the\n"
      "                         CPU stages' own pool, one per hardware thread\n"
      "  -h, --help             this text\n",
      d.size, static_cast<unsigned long long>(d.seed), d.scored_frames, d.warmup_frames, d.movers,
      d.history, d.jitter, d.star_density, d.hit_radius, d.border, d.false_alarm_rate, d.track_fps,
      kMaxDeviceId);
}

QualityOptions parse_quality_options(std::span<char* const> args, bool& help) {
  QualityOptions o;
  quality::QualityConfig& c = o.config;
  help = false;
  ArgReader reader(args);
  while (!reader.done()) {
    const std::string_view flag = reader.next_flag();
    if (flag == "-h" || flag == "--help") {
      help = true;
    } else if (flag == "--out") {
      o.out_dir = reader.path_value();
    } else if (flag == "--size") {
      c.size = parse_int(flag, reader.value(), 64, 8192);
    } else if (flag == "--seed") {
      c.seed = parse_u64(flag, reader.value());
    } else if (flag == "--frames") {
      c.scored_frames = parse_int(flag, reader.value(), 1, 100000);
    } else if (flag == "--warmup") {
      c.warmup_frames = parse_int(flag, reader.value(), 2, 100000);
    } else if (flag == "--movers") {
      c.movers = parse_int(flag, reader.value(), 1, SkyParams::kMaxMovers);
    } else if (flag == "--history") {
      c.history = parse_int(flag, reader.value(), 1, 64);
    } else if (flag == "--noise-frames") {
      c.chain_noise_frames = parse_number(flag, reader.value(), 0.0, 100000.0);
    } else if (flag == "--shift-noise") {
      c.chain_shift_noise = parse_number(flag, reader.value(), 0.0, WhitenParams::kMaxShiftNoise);
    } else if (flag == "--fit") {
      c.chain_fit = parse_whiten_fit(reader.value());
    } else if (flag == "--fit-subsample") {
      c.chain_fit_subsample = parse_int(flag, reader.value(), WhitenParams::kAutoFitSubsample,
                                        WhitenParams::kMaxFitSubsample);
    } else if (flag == "--snr") {
      c.snrs = parse_list(flag, reader.value(), SkyParams::kMaxMoverSnr);
    } else if (flag == "--speeds") {
      c.speeds = parse_list(flag, reader.value(), SkyParams::kMaxMoverSpeed);
    } else if (flag == "--jitter") {
      c.jitter = parse_number(flag, reader.value(), 0.001, SkyParams::kMaxJitter);
    } else if (flag == "--star-density") {
      c.star_density = parse_number(flag, reader.value(), 0.0, SkyParams::kMaxStarDensity);
    } else if (flag == "--hit-radius") {
      c.hit_radius = parse_number(flag, reader.value(), 0.1, 100.0);
    } else if (flag == "--border") {
      c.border = parse_int(flag, reader.value(), 1, 1000);
    } else if (flag == "--false-alarm-rate") {
      c.false_alarm_rate = parse_number(flag, reader.value(), 1e-6, 1e6);
    } else if (flag == "--methods") {
      c.methods = parse_methods(flag, reader.value());
    } else if (flag == "--chain-thresholds") {
      c.chain_thresholds = parse_list(flag, reader.value(), 1e6);
    } else if (flag == "--fps") {
      c.track_fps = parse_number(flag, reader.value(), 0.001, 1e6);
    } else if (flag == "--backend") {
      o.backend = parse_backend_flag(flag, reader.value());
    } else if (flag == "--device-id") {
      o.device_id = parse_int(flag, reader.value(), 0, kMaxDeviceId);
    } else if (flag == "--export-difference") {
      c.export_dir = reader.path_value();
    } else if (flag == "--threads") {
      o.threads = static_cast<unsigned>(parse_int(flag, reader.value(), 0, 1024));
    } else {
      throw UsageError("unknown option '" + std::string(flag) + "'",
                       "--out, --size, --seed, --frames, --warmup, --movers, --history, "
                       "--noise-frames, --shift-noise, --fit, --fit-subsample, --snr, "
                       "--speeds, --jitter, --star-density, --hit-radius, --border, "
                       "--false-alarm-rate, --methods, --chain-thresholds, --fps, --backend, "
                       "--device-id, --threads, --export-difference, --help");
    }
  }
  return o;
}

}  // namespace starsift::app
