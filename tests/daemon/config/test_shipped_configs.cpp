// SPDX-License-Identifier: LGPL-2.1-or-later
// Every daemon config the project ships validates: config/*.yaml and
// config/examples/daemon-*.yaml, found by listing the directories so a new one is covered too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "config_support.hpp"

using namespace starsift;
using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

const std::filesystem::path kConfigDir = std::filesystem::path(STARSIFT_SOURCE_DIR) / "config";

std::vector<std::filesystem::path> shipped_daemon_configs() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kConfigDir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  for (const auto& entry : std::filesystem::directory_iterator(kConfigDir / "examples")) {
    if (entry.path().filename().string().starts_with("daemon-")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

DaemonConfig loaded(const std::filesystem::path& path) {
  INFO("file: " << path);
  try {
    return load_daemon_config(path);
  } catch (const ConfigErrors& e) {
    FAIL("refused:\n" << e.what());
  }
  return {};
}

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("every shipped daemon config validates", "[daemon][config][shipped]") {
  const auto files = shipped_daemon_configs();
  // demo.yaml, starsiftd.yaml and the examples at least.
  REQUIRE(files.size() >= 4);
  for (const auto& file : files) {
    const DaemonConfig config = loaded(file);
    CHECK_FALSE(config.pipelines.empty());
  }
}

TEST_CASE("the demo: the synthetic sky, whitened and detected, writable without root",
          "[daemon][config][shipped]") {
  const DaemonConfig config = loaded(kConfigDir / "demo.yaml");
  REQUIRE(config.pipelines.size() == 1);
  const PipelineConfig& sky = config.pipelines[0];
  CHECK(sky.name == "sky");
  REQUIRE(std::holds_alternative<SkySourceConfig>(sky.source));
  const auto& source = std::get<SkySourceConfig>(sky.source);
  CHECK(source.params.width == 1024);
  CHECK(source.params.height == 1024);
  CHECK(source.format == PixelFormat::Gray16);
  CHECK(source.fps == FrameRate{25, 1});
  CHECK(source.params.movers > 0);
  REQUIRE(sky.chain.config.stages.size() == 2);
  CHECK(sky.chain.config.stages[0].filter == "whiten");
  CHECK(sky.chain.config.stages[1].filter == "detect");
  // Every chain parameter at its default.
  CHECK(std::get<WhitenParams>(sky.chain.config.stages[0].params) == WhitenParams{});
  CHECK(std::get<DetectParams>(sky.chain.config.stages[1].params) == DetectParams{});
  // The state directory: in the repository's out/, from the file's directory.
  CHECK(config.state_directory ==
        (std::filesystem::path(STARSIFT_SOURCE_DIR) / "out/starsiftd").lexically_normal());
  CHECK(config.metrics.address == "127.0.0.1");
  CHECK(config.metrics.enabled());
}

TEST_CASE("the installed example: a camera, and the sky when uncommented",
          "[daemon][config][shipped]") {
  const auto path = kConfigDir / "starsiftd.yaml";
  const DaemonConfig config = loaded(path);
  REQUIRE(config.pipelines.size() == 1);
  CHECK(std::holds_alternative<AravisSourceConfig>(config.pipelines[0].source));
  CHECK(config.state_directory == "/var/lib/starsift");

  // The commented-out sky pipeline: uncommented, it validates beside the camera.
  std::string text = text_of(path);
  const std::size_t sky = text.find("  # - name: sky");
  REQUIRE(sky != std::string::npos);
  std::string tail = text.substr(sky);
  std::string uncommented;
  std::istringstream lines(tail);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("  # ")) line = "  " + line.substr(4);
    uncommented += line + "\n";
  }
  const DaemonConfig both = parse_daemon_config(text.substr(0, sky) + uncommented, path.string());
  REQUIRE(both.pipelines.size() == 2);
  CHECK(both.pipelines[1].name == "sky");
  CHECK(std::holds_alternative<SkySourceConfig>(both.pipelines[1].source));
  CHECK(both.pipelines[0] == config.pipelines[0]);
}
