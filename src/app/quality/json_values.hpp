// SPDX-License-Identifier: LGPL-2.1-or-later
// How quality.json spells its recurring values: lists of numbers, intervals, counts by place,
// and a value with its 95 % interval. The harness's half (report_json.cpp) and the shipped
// chain's (report_chain.cpp) write them through these so that one reader parses both alike.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "app/quality/frame_layout.hpp"
#include "app/quality/statistics.hpp"
#include "bench/json.hpp"

namespace starsift::quality {

// [v, ...]
bench::Json numbers(const std::vector<double>& values);
bench::Json counts(const std::vector<long long>& values);

// [low, high]
bench::Json interval(const Interval& i);

// {"saturated_star": n, ...}: a count per Place, named as to_string(Place) names them.
bench::Json places(const std::array<long long, kPlaces>& counts);

// {key: value, key_95: [low, high]}, to merge into an object with Json::update(): every
// interval in the file sits next to its value under the value's key and "_95".
bench::Json with_95(const std::string& key, double value, const Interval& i);
bench::Json with_95(const std::string& key, const Proportion& p);

}  // namespace starsift::quality
