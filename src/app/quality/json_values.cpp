// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/json_values.hpp"

namespace starsift::quality {

using bench::Json;

Json numbers(const std::vector<double>& values) {
  Json a = Json::array();
  for (const double v : values) a.push(v);
  return a;
}

Json counts(const std::vector<long long>& values) {
  Json a = Json::array();
  for (const long long v : values) a.push(v);
  return a;
}

Json interval(const Interval& i) {
  return Json::array().push(i.low).push(i.high);
}

Json places(const std::array<long long, kPlaces>& counts) {
  Json o = Json::object();
  for (int i = 0; i < kPlaces; ++i) {
    o.set(std::string(to_string(static_cast<Place>(i))), counts[static_cast<std::size_t>(i)]);
  }
  return o;
}

Json with_95(const std::string& key, double value, const Interval& i) {
  return Json::object().set(key, value).set(key + "_95", interval(i));
}

Json with_95(const std::string& key, const Proportion& p) {
  return with_95(key, p.value, p.interval);
}

}  // namespace starsift::quality
