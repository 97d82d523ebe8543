// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's chain: read by the chain's own parser, its problems placed in the config file
// (or the chain file) with config key paths; the text region a chain occupies.
#include <catch2/catch.hpp>

#include "config_support.hpp"
#include "daemon/config/chain_section.hpp"

using namespace starsift;
using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

// A pipeline named `name` whose chain is `chain` (lines from "    chain:" on).
std::string pipeline(const std::string& name, const std::string& chain) {
  return "  - name: " + name + "\n    source: {sky: }\n" + chain;
}

DaemonConfig parsed(const std::string& yaml) {
  INFO("YAML:\n" << yaml);
  try {
    return parse_daemon_config(yaml, kOrigin);
  } catch (const ConfigErrors& e) {
    FAIL("refused:\n" << e.what());
  }
  return {};
}

}  // namespace

TEST_CASE("a block chain between other keys keeps every stage", "[daemon][config][chain]") {
  const DaemonConfig config =
      parsed("pipelines:\n" +
             pipeline("a",
                      "    chain:\n"
                      "      # whitening first\n"
                      "      - whiten:\n"
                      "          history: 12\n"
                      "\n"
                      "      - detect: {threshold: 6}\n"
                      "    # a comment less indented than the stages\n"
                      "    depth: 2\n") +
             pipeline("b",
                      "    chain:\n"
                      "    - median:\n"  // stages as indented as the key: YAML allows it
                      "    - median: {size: 5}\n"
                      "    backend: cpu\n"));
  REQUIRE(config.pipelines.size() == 2);
  const auto& a = config.pipelines[0];
  REQUIRE(a.chain.config.stages.size() == 2);
  CHECK(std::get<WhitenParams>(a.chain.config.stages[0].params).history == 12);
  CHECK(std::get<DetectParams>(a.chain.config.stages[1].params).threshold == 6.0);
  // The chain parser placed each stage where it is in this text.
  CHECK(a.chain.config.stages[0].where.str() == "cfg.yaml:6:9");
  CHECK(a.chain.config.stages[1].where.str() == "cfg.yaml:9:9");
  CHECK(a.depth == 2);
  const auto& b = config.pipelines[1];
  REQUIRE(b.chain.config.stages.size() == 2);
  CHECK(std::get<MedianParams>(b.chain.config.stages[1].params).size == 5);
  CHECK(b.backend == Backend::Cpu);
}

TEST_CASE("chain problems are placed in the config with config key paths",
          "[daemon][config][chain]") {
  SECTION("a parameter out of range, block style") {
    require_refused(
        "pipelines:\n" + pipeline("a",
                                  "    chain:\n"
                                  "      - whiten: {history: 0}\n"
                                  "    depth: 2\n"),
        {"cfg.yaml:5:27", "pipelines[0].chain[0].whiten.history", "0 is not allowed", "1..64"});
  }
  SECTION("a parameter out of range, flow style inside a flow pipeline") {
    require_refused(
        "pipelines:\n  - {name: b, chain: [{median: }, {median: {size: 4}}], source: {sky: }}\n",
        {"cfg.yaml:2:51", "pipelines[0].chain[1].median.size", "4 is not allowed",
         "odd values 3..31"});
  }
  SECTION("an unknown filter") {
    require_refused("pipelines:\n" + pipeline("a", "    chain:\n      - mediam:\n"),
                    {"cfg.yaml:5:9", "pipelines[0].chain[0]", "unknown filter 'mediam'",
                     "median, whiten, detect, gauss, brightness"});
  }
  SECTION("an unknown parameter") {
    require_refused("pipelines:\n" + pipeline("a", "    chain:\n      - median: {radius: 2}\n"),
                    {"cfg.yaml:5:18", "pipelines[0].chain[0].median", "unknown key 'radius'",
                     "size, border, border-value"});
  }
  SECTION("a parameter of the wrong type") {
    require_refused("pipelines:\n" + pipeline("a", "    chain: [{detect: {threshold: high}}]\n"),
                    {"cfg.yaml:4:34", "pipelines[0].chain[0].detect.threshold",
                     "expected a number, got 'high'", ""});
  }
  SECTION("a stage that is not a map") {
    require_refused("pipelines:\n" + pipeline("a", "    chain:\n      - median\n"),
                    {"cfg.yaml:5:9", "pipelines[0].chain[0]",
                     "expected a map with one key, the filter name, got 'median' (for the "
                     "defaults write '- median:')",
                     "one key, a filter name"});
  }
  SECTION("an empty chain") {
    require_refused("pipelines:\n" + pipeline("a", "    chain: []\n"),
                    {"cfg.yaml:4:12", "pipelines[0].chain", "a chain needs at least one stage",
                     "one or more stages of: median, whiten, detect, gauss, brightness"});
  }
  SECTION("chain: with nothing") {
    require_refused("pipelines:\n" + pipeline("a", "    chain:\n    depth: 2\n"),
                    {"cfg.yaml:4:5", "pipelines[0].chain", "a chain needs at least one stage",
                     "or the path of a chain file"});
  }
  SECTION("stages in a map instead of a sequence") {
    require_refused("pipelines:\n" + pipeline("a", "    chain:\n      median: {size: 3}\n"),
                    {"cfg.yaml:5:7", "pipelines[0].chain",
                     "expected a sequence of stages, got a map (stages go in a sequence: "
                     "'- median: ...')",
                     "a sequence of stages"});
  }
  SECTION("no chain") {
    require_refused("pipelines:\n  - name: a\n    source: {sky: }\n",
                    {"cfg.yaml:2:5", "pipelines[0].chain", "missing", "siftchain's schema"});
  }
  SECTION("more stages than a chain may hold") {
    std::string stages = "    chain: [";
    for (int i = 0; i <= kMaxChainStages; ++i) stages += "{median: }, ";
    require_refused("pipelines:\n" + pipeline("a", stages + "]\n"),
                    {"cfg.yaml:4:12", "pipelines[0].chain", "65 stages, more than the limit of 64",
                     "1 to 64 stages"});
  }
}

TEST_CASE("a chain shared through a YAML anchor", "[daemon][config][chain]") {
  SECTION("an anchored chain and its alias are the same chain") {
    const DaemonConfig config = parsed(
        "pipelines:\n" + pipeline("a", "    chain: &science\n      - whiten:\n      - detect:\n") +
        pipeline("b", "    chain: *science\n"));
    REQUIRE(config.pipelines.size() == 2);
    CHECK(config.pipelines[0].chain == config.pipelines[1].chain);
    CHECK(config.pipelines[1].chain.config.stages.size() == 2);
  }
  SECTION("a problem in an anchored chain is each pipeline's") {
    const auto problems = problems_of(
        "pipelines:\n" + pipeline("a", "    chain: &science\n      - median: {size: 4}\n") +
        pipeline("b", "    chain: *science\n"));
    REQUIRE(problems.size() == 2);
    check_problem(problems[0], {"cfg.yaml:5:24", "pipelines[0].chain[0].median.size",
                                "4 is not allowed", "odd values"});
    check_problem(problems[1], {"cfg.yaml:5:24", "pipelines[1].chain[0].median.size",
                                "4 is not allowed", "odd values"});
  }
  SECTION("a stage alias defined outside the chain: read from the node") {
    const DaemonConfig config =
        parsed("pipelines:\n" + pipeline("a", "    chain: [&w {whiten: {history: 7}}]\n") +
               pipeline("b", "    chain: [*w, {detect: }]\n"));
    const auto& b = config.pipelines[1].chain.config;
    REQUIRE(b.stages.size() == 2);
    CHECK(std::get<WhitenParams>(b.stages[0].params).history == 7);
  }
  SECTION("a problem in a chain read from the node is placed at the chain") {
    require_refused(
        "pipelines:\n" + pipeline("a", "    chain: [&m {median: }]\n") +
            pipeline("b", "    chain: [*m, {median: {size: 4}}]\n"),
        {"cfg.yaml:7:12", "pipelines[1].chain[1].median.size", "4 is not allowed", "odd values"});
  }
}

TEST_CASE("a chain file named by the config", "[daemon][config][chain]") {
  TempDir dir;
  SECTION("is read relative to the config's directory") {
    dir.write("wd.yaml", "chain:\n  - whiten: {history: 9}\n  - detect:\n");
    const auto path = dir.write("cfg.yaml", "pipelines:\n" + pipeline("a", "    chain: wd.yaml\n"));
    const DaemonConfig config = load_daemon_config(path);
    const PipelineChain& chain = config.pipelines.at(0).chain;
    CHECK(chain.file == dir.path() / "wd.yaml");
    REQUIRE(chain.config.stages.size() == 2);
    CHECK(std::get<WhitenParams>(chain.config.stages[0].params).history == 9);
  }
  SECTION("a problem inside it is placed in the chain file, ordered where it is named") {
    const auto chain = dir.write("bad.yaml", "- median:\n- median: {size: 4}\n");
    const auto problems =
        problems_of("pipelines:\n" + pipeline("a", "    chain: [{median: {size: 2}}]\n") +
                    pipeline("b", "    chain: " + chain.string() + "\n"));
    REQUIRE(problems.size() == 2);
    check_problem(problems[0], {"cfg.yaml:4:29", "pipelines[0].chain[0].median.size",
                                "2 is not allowed", "odd values 3..31"});
    // Line 2 of the chain file, but named on line 7 of the config: after pipeline a's.
    check_problem(problems[1], {chain.string() + ":2:18", "pipelines[1].chain[1].median.size",
                                "4 is not allowed", "odd values 3..31"});
  }
  SECTION("a missing chain file is placed at the chain key's value") {
    const auto problems = problems_of("pipelines:\n" + pipeline("a", "    chain: none.yaml\n"));
    REQUIRE(problems.size() == 1);
    check_problem(problems[0], {"cfg.yaml:4:12", "pipelines[0].chain",
                                "none.yaml: cannot read the chain file: No such file or directory",
                                "a regular file of at most 1048576 bytes"});
  }
}

TEST_CASE("the text region of a sequence", "[daemon][config][chain]") {
  const auto region = [](const std::string& text, const std::string& from) {
    const std::size_t start = text.find(from);
    REQUIRE(start != std::string::npos);
    const auto end = sequence_text_end(text, start);
    REQUIRE(end.has_value());
    return text.substr(start, *end - start);
  };
  SECTION("a block sequence ends at a key as indented as its '-'") {
    const std::string text = "x:\n  - a\n  # note\n\n  - b: [1]\n  y: 2\n";
    CHECK(region(text, "- a") == "- a\n  # note\n\n  - b: [1]\n");
  }
  SECTION("a block sequence ends at a less indented line") {
    const std::string text = "  x:\n    - a\n    - b\n  - next\n";
    CHECK(region(text, "- a") == "- a\n    - b\n");
  }
  SECTION("a block sequence runs to the end of the text") {
    const std::string text = "x:\n  - a\n  - b";
    CHECK(region(text, "- a") == "- a\n  - b");
  }
  SECTION("a block sequence ends at a document marker") {
    const std::string text = "x:\n- a\n---\n";
    CHECK(region(text, "- a") == "- a\n");
  }
  SECTION("an anchor before a block sequence") {
    const std::string text = "x: &c\n  - a\ny: 1\n";
    CHECK(region(text, "&c") == "&c\n  - a\n");
  }
  SECTION("a flow sequence ends at its closing bracket, quotes and comments skipped") {
    const std::string text = "{c: [{a: ']'}, \"[\", it's, # ]\n  {b: 1}], d: 2}";
    CHECK(region(text, "[{a") == "[{a: ']'}, \"[\", it's, # ]\n  {b: 1}]");
  }
  SECTION("not a sequence") {
    CHECK_FALSE(sequence_text_end("x: {a: 1}", 3).has_value());
    CHECK_FALSE(sequence_text_end("x: [1, 2", 3).has_value());
  }
  SECTION("blanking keeps every place") {
    CHECK(blank_outside("ab\ncd\nef", 4, 7) == "  \n d\ne ");
  }
}
