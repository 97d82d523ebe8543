// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/clips_section.hpp"

#include "daemon/config/config_names.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift::daemon {

namespace {
constexpr std::string_view kClipsKeys[] = {"enabled",      "view",     "before-s",     "after-s",
                                           "max-s",        "min-flux", "max-per-hour", "encoder",
                                           "bitrate-kbps", "fits",     "fits-frames"};
}  // namespace

void read_clips(ConfigReader& reader, const Value& value, ClipsOutput& clips) {
  using C = ClipsOutput;
  MapReader map(reader, value, kClipsKeys, "the event clips");
  map.read("enabled", clips.enabled);
  map.read("view", clips.view, stream_view_names());
  map.read("before-s", clips.before_s, 0.0, false, C::kMaxBeforeS, "s");
  map.read("after-s", clips.after_s, 0.0, false, C::kMaxAfterS, "s");
  map.read("max-s", clips.max_s, 0.0, true, C::kMaxClipS, "s");
  map.read("min-flux", clips.min_flux, 0.0, false, 1e30,
           "(0: tracks only; else a detection's flux above the background, in its units)");
  map.read("max-per-hour", clips.max_per_hour, 0, C::kMaxPerHour,
           "0 (no limit) or 1.." + std::to_string(C::kMaxPerHour));
  map.read("encoder", clips.encoder, video_encoder_names());
  map.read("bitrate-kbps", clips.bitrate_kbps, kMinBitrateKbps, kMaxBitrateKbps);
  map.read("fits", clips.fits);
  map.read("fits-frames", clips.fits_frames, 2, C::kMaxFitsFrames);
  if (clips.max_s < clips.before_s + clips.after_s) {
    const auto max = map.find("max-s");
    reader.refuse(max ? max->where : value.where, value.child("max-s"),
                  number_text(clips.max_s) + " s is shorter than before-s + after-s (" +
                      number_text(clips.before_s + clips.after_s) + " s)",
                  "max-s >= before-s + after-s: a clip of one event fits");
  }
}

}  // namespace starsift::daemon
