// Temporal whitening in a chain: `- whiten: {history: 20, shift: resample, output: snr}`.
// Every key is optional; WhitenParams holds the defaults and validate() the rules (a refusal
// is reported at the key, in validate()'s words).
#include <string>

#include "pipeline/chain/chain_filters.hpp"
#include "pipeline/whiten/params.hpp"

namespace starsift {

namespace {

constexpr std::string_view kWhitenKeys[] = {"history",
                                            "gamma",
                                            "fit",
                                            "refit-interval",
                                            "fit-subsample",
                                            "shift",
                                            "shift-window",
                                            "shift-max",
                                            "reject",
                                            "reject-sigma",
                                            "reject-object-sigma",
                                            "noise-frames",
                                            "warmup",
                                            "output",
                                            "offset",
                                            "gain",
                                            "despike",
                                            "history-format"};

using P = WhitenParams;

// What a type error says is allowed: the same words as validate()'s range.
std::string range(int min, int max) {
  return std::to_string(min) + ".." + std::to_string(max);
}

void read_int(const YamlParams& yaml, std::string_view key, int P::*field,
              const std::string& allowed, P& params) {
  if (const auto value = yaml.find(key)) {
    params.*field = value->to_int(allowed);
    value->validate_as(field, params.*field);
  }
}

void read_number(const YamlParams& yaml, std::string_view key, double P::*field,
                 const std::string& allowed, P& params) {
  if (const auto value = yaml.find(key)) {
    params.*field = value->to_number(allowed);
    value->validate_as(field, params.*field);
  }
}

template <class Enum, class Parse>
void read_choice(const YamlParams& yaml, std::string_view key, Enum P::*field, Parse parse,
                 const std::string& names, P& params) {
  if (const auto value = yaml.find(key)) params.*field = value->to_choice(parse, names);
}

StageParams read_whiten(const YamlParams& yaml) {
  P params;
  read_int(yaml, "history", &P::history, range(P::kMinHistory, P::kMaxHistory), params);
  read_number(yaml, "gamma", &P::gamma, "a finite number >= 0", params);
  read_choice(yaml, "fit", &P::fit, parse_whiten_fit, whiten_fit_names(), params);
  read_int(yaml, "refit-interval", &P::refit_interval, range(1, P::kMaxRefitInterval), params);
  read_int(yaml, "fit-subsample", &P::fit_subsample, range(1, P::kMaxFitSubsample), params);
  read_choice(yaml, "shift", &P::shift, parse_whiten_shift, whiten_shift_names(), params);
  read_int(yaml, "shift-window", &P::shift_window,
           "powers of two " + range(P::kMinShiftWindow, P::kMaxShiftWindow), params);
  read_number(yaml, "shift-max", &P::shift_max, "a finite number > 0 (pixels)", params);
  read_choice(yaml, "reject", &P::reject, parse_whiten_reject, whiten_reject_names(), params);
  read_number(yaml, "reject-sigma", &P::reject_sigma, "a finite number > 0", params);
  read_number(yaml, "reject-object-sigma", &P::reject_object_sigma, "a finite number > 0", params);
  read_number(yaml, "noise-frames", &P::noise_frames,
              "0 (twice the history) or a finite number >= 1 (frames)", params);
  read_choice(yaml, "warmup", &P::warmup, parse_whiten_warmup, whiten_warmup_names(), params);
  read_choice(yaml, "output", &P::output, parse_whiten_output, whiten_output_names(), params);
  if (const auto offset = yaml.find("offset")) {
    params.offset = offset->to_number("a finite number");
    offset->validate_as(&P::offset, params.offset);
  }
  read_number(yaml, "gain", &P::gain, "a finite number other than 0", params);
  if (const auto despike = yaml.find("despike")) params.despike = despike->to_bool();
  read_choice(yaml, "history-format", &P::history_format, parse_whiten_history_format,
              whiten_history_format_names(), params);
  yaml.validate(params);
  return params;
}

}  // namespace

ChainFilter whiten_chain_filter() {
  return {"whiten", kWhitenKeys, &read_whiten};
}

}  // namespace starsift
