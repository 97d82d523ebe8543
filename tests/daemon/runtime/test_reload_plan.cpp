// SPDX-License-Identifier: LGPL-2.1-or-later
// What a reload does to each pipeline (reload_plan.hpp), from configs parsed by the real
// config reader.
#include <catch2/catch.hpp>

#include <string>

#include "daemon/config/config_loader.hpp"
#include "daemon/runtime/reload_plan.hpp"

using namespace starsift::daemon;

namespace {

DaemonConfig config(const std::string& pipelines, const std::string& state = "/tmp/a") {
  return parse_daemon_config("state-directory: " + state + "\npipelines:\n" + pipelines,
                             "test.yaml");
}

const std::string kOne = R"(
  - name: one
    source: {sky: {width: 128, height: 128}}
    chain: [{whiten: {history: 10, gamma: 0.0001}}, {detect: {threshold: 5}}]
)";

const std::string kTwo = R"(
  - name: two
    source: {sky: {seed: 2}}
    chain: [{detect: {}}]
)";

PipelineChange only(const std::vector<PipelineChange>& changes, const std::string& name) {
  for (const auto& c : changes) {
    if (c.name == name) return c;
  }
  FAIL("no change for " << name);
  return {};
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the same config changes nothing", "[reload]") {
  const auto changes = plan_reload(config(kOne + kTwo), config(kOne + kTwo));
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].kind == PipelineChangeKind::Unchanged);
  CHECK(changes[1].kind == PipelineChangeKind::Unchanged);
}

TEST_CASE("live parameters of whitening and detection are changed in place", "[reload]") {
  const std::string live =
      replace(replace(kOne, "gamma: 0.0001", "gamma: 0.001"), "threshold: 5", "threshold: 6");
  const auto c = only(plan_reload(config(kOne + kTwo), config(live + kTwo)), "one");
  CHECK(c.kind == PipelineChangeKind::Live);
  CHECK(c.reason == "chain parameters");
  CHECK(only(plan_reload(config(kOne + kTwo), config(live + kTwo)), "two").kind ==
        PipelineChangeKind::Unchanged);
}

TEST_CASE("outputs' schedules and the restart policy are changed in place", "[reload]") {
  const std::string next = replace(kOne, "chain:", "outputs: {fits: {every-s: 30}}\n    chain:");
  CHECK(only(plan_reload(config(kOne), config(next)), "one").kind == PipelineChangeKind::Live);
  const std::string restart =
      replace(kOne, "chain:", "restart: {initial-s: 2, max-s: 10}\n    chain:");
  const auto c = only(plan_reload(config(kOne), config(restart)), "one");
  CHECK(c.kind == PipelineChangeKind::Live);
  CHECK(c.reason == "restart policy");
}

TEST_CASE("RTP settings of the same view change in place; another view rebuilds", "[reload]") {
  const auto with_rtp = [](const std::string& rtp) {
    return replace(kOne, "chain:", "outputs: {rtp: {" + rtp + "}}\n    chain:");
  };
  const std::string before = with_rtp("host: 127.0.0.1, port: 5004");
  const auto c =
      only(plan_reload(config(before), config(with_rtp("host: 127.0.0.1, port: 5006"))), "one");
  CHECK(c.kind == PipelineChangeKind::Live);
  CHECK(c.reason == "outputs");
  // The view's branch is made when the pipeline is built.
  const auto v =
      only(plan_reload(config(before), config(with_rtp("view: raw, host: 127.0.0.1, port: 5004"))),
           "one");
  CHECK(v.kind == PipelineChangeKind::Rebuild);
  CHECK(v.reason == "outputs: the live views taken");
  CHECK(only(plan_reload(config(kOne), config(before)), "one").kind == PipelineChangeKind::Rebuild);
}

TEST_CASE("changes the running elements cannot take rebuild that pipeline alone", "[reload]") {
  const auto rebuilt = [&](const std::string& next) {
    const auto changes = plan_reload(config(kOne + kTwo), config(next + kTwo));
    CHECK(only(changes, "two").kind == PipelineChangeKind::Unchanged);
    return only(changes, "one");
  };
  // Whitening's history: its state starts anew.
  CHECK(rebuilt(replace(kOne, "history: 10", "history: 12")).kind == PipelineChangeKind::Rebuild);
  CHECK(rebuilt(replace(kOne, "width: 128", "width: 256")).reason == "source");
  CHECK(rebuilt(replace(kOne, "threshold: 5", "output: overlay")).kind ==
        PipelineChangeKind::Rebuild);
  CHECK(rebuilt(replace(kOne, "chain:", "depth: 2\n    chain:")).reason == "depth");
  CHECK(rebuilt(replace(kOne, "chain:", "tracker: {gate: 5}\n    chain:")).reason == "tracker");
  CHECK(rebuilt(replace(kOne, "chain:", "outputs: {video: {enabled: true}}\n    chain:")).reason ==
        "outputs.video");
  CHECK(rebuilt(replace(kOne, "{whiten: {history: 10, gamma: 0.0001}}, ", "")).kind ==
        PipelineChangeKind::Rebuild);
}

TEST_CASE("removed pipelines stop, new ones start; a new state directory rebuilds all",
          "[reload]") {
  const auto changes = plan_reload(config(kOne), config(kTwo));
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].name == "one");
  CHECK(changes[0].kind == PipelineChangeKind::Remove);
  CHECK(changes[1].name == "two");
  CHECK(changes[1].kind == PipelineChangeKind::Add);

  const auto moved = plan_reload(config(kOne, "/tmp/a"), config(kOne, "/tmp/b"));
  CHECK(only(moved, "one").kind == PipelineChangeKind::Rebuild);
  CHECK(only(moved, "one").reason == "state-directory");
}
