// SPDX-License-Identifier: LGPL-2.1-or-later
// Temporal whitening in a chain: `- whiten: {history: 20, shift: resample, output: snr}`.
// Every key is optional; WhitenParams holds the defaults and validate() the rules (a refusal
// is reported at the key, in validate()'s words).
#include <string>

#include "pipeline/chain/chain_filters.hpp"
#include "pipeline/whiten/params.hpp"

namespace starsift {

namespace {

constexpr std::string_view kWhitenKeys[] = {
    "history",       "gamma",   "fit",           "refit-interval",
    "fit-subsample", "shift",   "shift-window",  "shift-max",
    "shift-noise",   "reject",  "reject-sigma",  "reject-object-sigma",
    "noise-frames",  "warmup",  "output",        "offset",
    "gain",          "despike", "history-format"};

using P = WhitenParams;

// What a type error says is allowed: the same words as validate()'s range.
std::string range(int min, int max) {
  return std::to_string(min) + ".." + std::to_string(max);
}

StageParams read_whiten(const YamlParams& yaml) {
  P params;
  yaml.read_int("history", &P::history, range(P::kMinHistory, P::kMaxHistory), params);
  yaml.read_number("gamma", &P::gamma, "a finite number >= 0", params);
  yaml.read_choice("fit", &P::fit, parse_whiten_fit, whiten_fit_names(), params);
  yaml.read_int("refit-interval", &P::refit_interval, range(1, P::kMaxRefitInterval), params);
  yaml.read_int("fit-subsample", &P::fit_subsample,
                range(P::kAutoFitSubsample, P::kMaxFitSubsample), params);
  yaml.read_choice("shift", &P::shift, parse_whiten_shift, whiten_shift_names(), params);
  yaml.read_int("shift-window", &P::shift_window,
                "powers of two " + range(P::kMinShiftWindow, P::kMaxShiftWindow), params);
  yaml.read_number("shift-max", &P::shift_max, "a finite number > 0 (pixels)", params);
  yaml.read_number("shift-noise", &P::shift_noise, "0..1 (px; 0: off)", params);
  yaml.read_choice("reject", &P::reject, parse_whiten_reject, whiten_reject_names(), params);
  yaml.read_number("reject-sigma", &P::reject_sigma, "a finite number > 0", params);
  yaml.read_number("reject-object-sigma", &P::reject_object_sigma, "a finite number > 0", params);
  yaml.read_number("noise-frames", &P::noise_frames,
                   "0 (four times the history) or a finite number >= 1 (frames)", params);
  yaml.read_choice("warmup", &P::warmup, parse_whiten_warmup, whiten_warmup_names(), params);
  yaml.read_choice("output", &P::output, parse_whiten_output, whiten_output_names(), params);
  if (const auto offset = yaml.find("offset")) {
    params.offset = offset->to_number("a finite number");
    offset->validate_as(&P::offset, params.offset);
  }
  yaml.read_number("gain", &P::gain,
                   "a finite number (0: automatic, 1 for residual, 2^bit-depth / 64 for "
                   "significance)",
                   params);
  if (const auto despike = yaml.find("despike")) params.despike = despike->to_bool();
  yaml.read_choice("history-format", &P::history_format, parse_whiten_history_format,
                   whiten_history_format_names(), params);
  yaml.validate(params);
  return params;
}

}  // namespace

ChainFilter whiten_chain_filter() {
  return {"whiten", kWhitenKeys, &read_whiten};
}

}  // namespace starsift
