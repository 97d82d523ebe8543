// SPDX-License-Identifier: LGPL-2.1-or-later
// Chain configurations from YAML: the stages and parameters read from valid chains (file and
// inline style), and for every kind of mistake a message with the place, the key path, the
// value received and what is allowed.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using Catch::Contains;
using Catch::StartsWith;

namespace {

const MedianParams& median_of(const StageConfig& stage) {
  REQUIRE(stage.filter == "median");
  REQUIRE(std::holds_alternative<MedianParams>(stage.params));
  return std::get<MedianParams>(stage.params);
}

MedianParams median(int size, BorderMode border, double border_value) {
  MedianParams params;
  params.size = size;
  params.border = border;
  params.border_value = border_value;
  return params;
}

// What a refusal must say.
struct Expected {
  std::string where;    // "chain.yaml:3:13"
  std::string path;     // "stage 1 (median): size"; empty for the document itself
  std::string says;     // the problem, with the value received
  std::string allowed;  // part of the allowed text
};

// Parses `yaml` expecting a refusal and checks the message piece by piece: the problem starts
// with the place, then the key path, and what() carries the allowed list.
void require_refused(const std::string& yaml, const Expected& expected,
                     const std::string& origin = "chain.yaml") {
  INFO("YAML:\n" << yaml);
  try {
    const ChainConfig config = parse_chain_yaml(yaml, origin);
    FAIL("accepted, with " << config.stages.size() << " stage(s)");
  } catch (const Error& e) {
    INFO("message: " << e.what());
    const std::string prefix =
        expected.where + ": " + (expected.path.empty() ? "" : expected.path + ": ");
    CHECK_THAT(e.problem(), StartsWith(prefix));
    CHECK_THAT(e.what(), Contains(expected.where + ": ") && Contains(expected.says) &&
                             Contains("; allowed: ") && Contains(expected.allowed));
    CHECK_THAT(e.allowed(), Contains(expected.allowed));
  }
}

std::string source_file(const std::string& relative) {
  return std::string(STARSIFT_SOURCE_DIR) + "/" + relative;
}

}  // namespace

// ---- valid chains ------------------------------------------------------------------------

TEST_CASE("a file-style chain gives its stages in order, with values, defaults and places",
          "[chain]") {
  const std::string yaml =
      "# two medians\n"
      "chain:\n"
      "  - median:\n"
      "      size: 5\n"
      "      border: constant\n"
      "      border-value: 12.5\n"
      "  - median: {size: 7}\n"
      "  - median:\n";
  const ChainConfig config = parse_chain_yaml(yaml, "chain.yaml");
  REQUIRE(config.stages.size() == 3);

  CHECK(median_of(config.stages[0]) == median(5, BorderMode::Constant, 12.5));
  CHECK(config.stages[0].where == SourceLocation{"chain.yaml", 3, 5});
  CHECK(config.stages[0].where.str() == "chain.yaml:3:5");

  // Keys left out take MedianParams' defaults.
  CHECK(median_of(config.stages[1]) ==
        median(7, MedianParams::kDefaultBorder, MedianParams::kDefaultBorderValue));
  CHECK(config.stages[1].where.str() == "chain.yaml:7:5");

  // `- median:` with nothing: every default.
  CHECK(median_of(config.stages[2]) == MedianParams{});
  CHECK(config.stages[2].where.str() == "chain.yaml:8:5");
}

TEST_CASE("a chain may also be a bare sequence of stages", "[chain]") {
  const ChainConfig config = parse_chain_yaml(
      "- median: {size: 9, border: replicate}\n- median: {border: reflect101}\n", "c.yaml");
  REQUIRE(config.stages.size() == 2);
  CHECK(median_of(config.stages[0]) == median(9, BorderMode::Replicate, 0.0));
  CHECK(config.stages[0].where.str() == "c.yaml:1:3");
  CHECK(median_of(config.stages[1]).border == BorderMode::Reflect101);
  CHECK(config.stages[1].where.str() == "c.yaml:2:3");
}

TEST_CASE("an inline chain in flow style, as a property gives it", "[chain]") {
  const ChainConfig config =
      parse_chain_yaml("[{median: {size: 3}}, {median: {size: 5}}]", "chain property");
  REQUIRE(config.stages.size() == 2);
  CHECK(median_of(config.stages[0]) == median(3, BorderMode::Reflect101, 0.0));
  CHECK(median_of(config.stages[1]) == median(5, BorderMode::Reflect101, 0.0));
  CHECK(config.stages[0].where == SourceLocation{"chain property", 1, 3});
  CHECK(config.stages[1].where == SourceLocation{"chain property", 1, 24});

  // The map form inline too, and empty parameter maps.
  const ChainConfig mapped =
      parse_chain_yaml("{chain: [{median: {}}, {median: ~}, {median: }]}", "chain property");
  REQUIRE(mapped.stages.size() == 3);
  for (const StageConfig& stage : mapped.stages) CHECK(median_of(stage) == MedianParams{});
}

TEST_CASE("every valid size and border, and numbers in YAML's forms", "[chain]") {
  for (int size = MedianParams::kMinSize; size <= MedianParams::kMaxSize; size += 2) {
    const ChainConfig config =
        parse_chain_yaml("[{median: {size: " + std::to_string(size) + "}}]", "chain property");
    CHECK(median_of(config.stages[0]).size == size);
  }
  CHECK(median_of(parse_chain_yaml("[{median: {size: +5}}]", "p").stages[0]).size == 5);
  for (const auto& [text, mode] : {std::pair{"replicate", BorderMode::Replicate},
                                   std::pair{"reflect-101", BorderMode::Reflect101},
                                   std::pair{"'constant'", BorderMode::Constant}}) {
    const ChainConfig config =
        parse_chain_yaml(std::string("[{median: {border: ") + text + "}}]", "p");
    CHECK(median_of(config.stages[0]).border == mode);
  }
  for (const auto& [text, value] :
       {std::pair{"0", 0.0}, std::pair{"65535", 65535.0}, std::pair{"-3.5", -3.5},
        std::pair{".5", 0.5}, std::pair{"1e3", 1000.0}, std::pair{"+2.", 2.0}}) {
    const ChainConfig config =
        parse_chain_yaml(std::string("[{median: {border-value: ") + text + "}}]", "p");
    CHECK(median_of(config.stages[0]).border_value == value);
  }
}

TEST_CASE("chain_filter_names lists the filters a chain may hold", "[chain]") {
  CHECK(chain_filter_names() == "median, whiten, detect, gauss, brightness");
}

// ---- refusals: the document --------------------------------------------------------------

TEST_CASE("YAML syntax errors give yaml-cpp's place and reason", "[chain]") {
  require_refused("[{median: {size: 3}}",
                  {"chain property:1:1", "", "YAML syntax error: end of sequence flow not found",
                   "well-formed YAML"},
                  "chain property");
  require_refused("chain:\n  - median: {size: 3}\n - median: {size: 5}\n",
                  {"chain.yaml:3:2", "", "YAML syntax error: ", "well-formed YAML"});
}

TEST_CASE("an empty chain is refused wherever it is empty", "[chain]") {
  const Expected empty_file{"chain.yaml:1:1", "", "a chain needs at least one stage",
                            "one or more stages of: median"};
  require_refused("", empty_file);
  require_refused("# only a comment\n", empty_file);
  require_refused("~\n", {"chain.yaml:1:1", "chain", "a chain needs at least one stage",
                          "one or more stages of: median"});
  require_refused("[]", {"chain.yaml:1:1", "chain", "a chain needs at least one stage",
                         "one or more stages of: median"});
  // `chain:` with nothing is placed at the key.
  require_refused("# header\nchain:\n",
                  {"chain.yaml:2:1", "chain", "a chain needs at least one stage", "median"});
  require_refused("chain: []\n",
                  {"chain.yaml:1:8", "chain", "a chain needs at least one stage", "median"});
}

TEST_CASE("the chain must be a sequence", "[chain]") {
  require_refused("chain:\n  median: {size: 3}\n",
                  {"chain.yaml:2:3", "chain", "expected a sequence of stages, got a map",
                   "a sequence of stages, each '- <filter>: {parameters}' with <filter> one of: "
                   "median"});
  require_refused("chain: median\n",
                  {"chain.yaml:1:8", "chain", "expected a sequence of stages, got 'median'",
                   "a sequence of stages"});
  require_refused("median\n", {"chain.yaml:1:1", "",
                               "expected a sequence of stages or a map with the key 'chain', got "
                               "'median'",
                               "a sequence of stages"});
}

TEST_CASE("the top-level map holds the key chain and nothing else", "[chain]") {
  require_refused("chain:\n  - median:\nstages: 3\n",
                  {"chain.yaml:3:1", "", "unknown top-level key 'stages'", "chain"});
  // A stage written at the top level says where it belongs.
  require_refused("median: {size: 3}\n",
                  {"chain.yaml:1:1", "",
                   "unknown top-level key 'median' (stages go in a sequence: '- median: ...' under "
                   "'chain:', or '[{median: ...}]')",
                   "chain"});
  require_refused("{}", {"chain.yaml:1:1", "", "the top-level map has no key 'chain'",
                         "'chain:' holding a sequence of stages"});
  require_refused(
      "chain: [{median: }]\nchain: [{median: }]\n",
      {"chain.yaml:2:1", "chain", "given twice (first at line 1, column 1)", "each key once"});
}

TEST_CASE("a chain is one YAML document", "[chain]") {
  require_refused("- median:\n---\n- median:\n",
                  {"chain.yaml:3:1", "", "a second YAML document (after '---'); found 2",
                   "one document holding the whole chain"});
}

// ---- refusals: stages --------------------------------------------------------------------

TEST_CASE("an unknown filter lists the known ones", "[chain]") {
  require_refused("chain:\n  - median: {size: 3}\n  - mediam: {size: 5}\n",
                  {"chain.yaml:3:5", "stage 2", "unknown filter 'mediam'", "median"});
  CHECK_THROWS_WITH(parse_chain_yaml("[{unsharp: {}}]", "chain property"),
                    Contains("chain property:1:3: stage 1: unknown filter 'unsharp'") &&
                        Contains("; allowed: median"));
}

TEST_CASE("a stage is a map with exactly one key", "[chain]") {
  const std::string shape =
      "one key, a filter name (median, whiten, detect, gauss, brightness), holding the filter's "
      "parameters";
  // A bare filter name: the colon is missing.
  require_refused("chain:\n  - median\n",
                  {"chain.yaml:2:5", "stage 1",
                   "expected a map with one key, the filter name, got 'median' (for the "
                   "defaults write '- median:')",
                   shape});
  require_refused("[[median]]",
                  {"chain.yaml:1:2", "stage 1",
                   "expected a map with one key, the filter name, got a sequence", shape});
  require_refused("- {}\n", {"chain.yaml:1:3", "stage 1",
                             "expected one key, the filter name, got an empty map", shape});
  require_refused("- {median: {size: 3}, gauss: {}}\n",
                  {"chain.yaml:1:3", "stage 1",
                   "expected one key, the filter name, got 2: 'median', 'gauss'", shape});
  // Parameters at the filter name's depth instead of under it: the common slip gets a hint.
  require_refused("chain:\n  - median:\n    size: 5\n",
                  {"chain.yaml:2:5", "stage 1",
                   "got 2: 'median', 'size' (are the parameters indented deeper than the filter "
                   "name?)",
                   "e.g. '- median: {size: 5}'"});
}

TEST_CASE("a stage's parameters are a map", "[chain]") {
  require_refused("- median: 5\n",
                  {"chain.yaml:1:11", "stage 1 (median)", "expected a map of parameters, got '5'",
                   "a map with the keys size, border, border-value"});
  require_refused("- median: [3]\n",
                  {"chain.yaml:1:11", "stage 1 (median)",
                   "expected a map of parameters, got a sequence", "or nothing for all defaults"});
}

// ---- refusals: median parameters ---------------------------------------------------------

TEST_CASE("an unknown median key lists the median's keys", "[chain]") {
  require_refused(
      "chain:\n  - median:\n      radius: 2\n",
      {"chain.yaml:3:7", "stage 1 (median)", "unknown key 'radius'", "size, border, border-value"});
  require_refused("[{median: {size: 3}}, {median: {Size: 3}}]",
                  {"chain property:1:33", "stage 2 (median)", "unknown key 'Size'",
                   "size, border, border-value"},
                  "chain property");
}

TEST_CASE("a key given twice is refused at the second", "[chain]") {
  require_refused("- median: {size: 3, size: 5}\n",
                  {"chain.yaml:1:21", "stage 1 (median): size",
                   "given twice (first at line 1, column 12)", "each key once"});
}

TEST_CASE("size must be an integer", "[chain]") {
  const std::string sizes = "odd values 3..31";
  require_refused(
      "chain:\n  - median: {size: \"five\"}\n",
      {"chain.yaml:2:20", "stage 1 (median): size", "expected an integer, got 'five'", sizes});
  require_refused("- median: {size: five}\n", {"chain.yaml:1:18", "stage 1 (median): size",
                                               "expected an integer, got 'five'", sizes});
  require_refused("- median: {size: 5.5}\n", {"chain.yaml:1:18", "stage 1 (median): size",
                                              "expected an integer, got '5.5'", sizes});
  require_refused("- median: {size: 5.0}\n", {"chain.yaml:1:18", "stage 1 (median): size",
                                              "expected an integer, got '5.0'", sizes});
  require_refused("- median: {size: 0x5}\n", {"chain.yaml:1:18", "stage 1 (median): size",
                                              "expected an integer, got '0x5'", sizes});
  require_refused("- median: {size: +-5}\n", {"chain.yaml:1:18", "stage 1 (median): size",
                                              "expected an integer, got '+-5'", sizes});
  // A quoted number is a string in YAML; the message says how to write it.
  require_refused("- median: {size: '5'}\n",
                  {"chain.yaml:1:18", "stage 1 (median): size",
                   "expected an integer, got '5' (a quoted string: write the number without "
                   "quotes)",
                   sizes});
  require_refused("- median: {size: {n: 5}}\n", {"chain.yaml:1:18", "stage 1 (median): size",
                                                 "expected an integer, got a map", sizes});
  require_refused("- median: {size: [5]}\n", {"chain.yaml:1:18", "stage 1 (median): size",
                                              "expected an integer, got a sequence", sizes});
  // `size:` with nothing is placed at the key, not at the next token.
  require_refused(
      "- median:\n    size:\n    border: replicate\n",
      {"chain.yaml:2:5", "stage 1 (median): size", "expected an integer, got nothing", sizes});
}

TEST_CASE("size out of range repeats MedianParams' rule", "[chain]") {
  for (const std::string size : {"1", "4", "33", "-3", "0", "99999999999"}) {
    require_refused("chain:\n  - median: {size: 3}\n  - median: {size: " + size + "}\n",
                    {"chain.yaml:3:20", "stage 2 (median): size", size + " is not allowed",
                     "odd values 3..31"});
  }
}

TEST_CASE("border must be a border mode", "[chain]") {
  const std::string modes = "replicate, reflect-101, constant";
  require_refused("- median: {border: wrap}\n", {"chain.yaml:1:20", "stage 1 (median): border",
                                                 "unknown border mode 'wrap'", modes});
  require_refused("- median: {border: 0}\n", {"chain.yaml:1:20", "stage 1 (median): border",
                                              "unknown border mode '0'", modes});
  require_refused(
      "- median: {border: {mode: constant}}\n",
      {"chain.yaml:1:20", "stage 1 (median): border", "expected a name, got a map", modes});
}

TEST_CASE("border-value must be a finite number", "[chain]") {
  require_refused("- median: {border-value: zero}\n",
                  {"chain.yaml:1:26", "stage 1 (median): border-value",
                   "expected a number, got 'zero'", "a finite number"});
  require_refused("- median: {border-value: \"7\"}\n",
                  {"chain.yaml:1:26", "stage 1 (median): border-value",
                   "expected a number, got '7' (a quoted string", "a finite number"});
  require_refused("- median: {border-value: [1, 2]}\n",
                  {"chain.yaml:1:26", "stage 1 (median): border-value",
                   "expected a number, got a sequence", "a finite number"});
  // YAML's own spellings of infinity and NaN are numbers, and MedianParams refuses them.
  for (const std::string value : {".nan", ".inf", "-.inf", "1e999"}) {
    require_refused("- median: {border-value: " + value + "}\n",
                    {"chain.yaml:1:26", "stage 1 (median): border-value", value + " is not allowed",
                     "a finite number"});
  }
  // C's spellings are not YAML numbers.
  require_refused("- median: {border-value: inf}\n",
                  {"chain.yaml:1:26", "stage 1 (median): border-value",
                   "expected a number, got 'inf'", "a finite number"});
}

TEST_CASE("long values are shortened in messages", "[chain]") {
  const std::string long_name(200, 'x');
  try {
    parse_chain_yaml("[{" + long_name + ": {}}]", "chain property");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK_THAT(e.problem(), Contains("unknown filter '" + long_name.substr(0, kMaxShownValueBytes) +
                                     "\xE2\x80\xA6 (200 bytes)'"));
    CHECK(e.problem().size() < 140);
  }
}

TEST_CASE("a huge value is cut wherever a message repeats it", "[chain]") {
  // 5 MB of one value: every refusal that quotes it quotes 64 bytes and the size.
  const std::string huge(5'000'000, 'w');
  const std::string cut = huge.substr(0, kMaxShownValueBytes) + "\xE2\x80\xA6 (5000000 bytes)";
  const std::string key(1000, 'k');
  const std::string key_cut = key.substr(0, kMaxShownValueBytes) + "\xE2\x80\xA6 (1000 bytes)";
  struct Case {
    std::string yaml;
    std::string says;
  };
  const Case cases[] = {
      {"- median: {border: " + huge + "}\n", "unknown border mode '" + cut + "'"},
      {"- median: {size: " + huge + "}\n", "expected an integer, got '" + cut + "'"},
      {"- median: {size: 1" + std::string(5'000'000, '0') + "}\n",
       "1" + std::string(kMaxShownValueBytes - 1, '0') +
           "\xE2\x80\xA6 (5000001 bytes) is not allowed"},
      {"- median: {border-value: 1" + std::string(5'000'000, '0') + "}\n",
       "1" + std::string(kMaxShownValueBytes - 1, '0') +
           "\xE2\x80\xA6 (5000001 bytes) is not allowed"},
      {"- whiten: {shift: " + huge + "}\n", "unknown whiten shift '" + cut + "'"},
      // Keys: YAML caps an implicit key at 1024 characters, so these are shorter.
      {"- median: {" + key + ": 3}\n", "unknown key '" + key_cut + "'"},
      {"- " + key + ":\n", "unknown filter '" + key_cut + "'"},
  };
  for (const Case& c : cases) {
    INFO(c.says.substr(0, 40));
    try {
      parse_chain_yaml(c.yaml, "chain.yaml");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK_THAT(e.problem(), Contains(c.says));
      CHECK(std::string(e.what()).size() < 400);
    }
  }
}

TEST_CASE("shown_value keeps short values and cuts long ones between UTF-8 characters", "[chain]") {
  CHECK(shown_value("") == "");
  CHECK(shown_value(std::string(64, 'a')) == std::string(64, 'a'));
  CHECK(shown_value(std::string(65, 'a')) == std::string(64, 'a') + "\xE2\x80\xA6 (65 bytes)");
  CHECK(shown_value("abcdef", 3) == "abc\xE2\x80\xA6 (6 bytes)");
  // "a" then U+00E9 (2 bytes): a cut after 2 bytes would split it, so it falls after "a".
  CHECK(shown_value("a\xC3\xA9zzz", 2) == "a\xE2\x80\xA6 (6 bytes)");
}

TEST_CASE("a chain holds at most kMaxChainStages stages", "[chain]") {
  std::string at_limit = "[";
  for (int i = 0; i < kMaxChainStages; ++i)
    at_limit += std::string(i == 0 ? "" : ", ") + "{median: }";
  CHECK(parse_chain_yaml(at_limit + "]", "chain.yaml").stages.size() ==
        static_cast<std::size_t>(kMaxChainStages));
  require_refused(at_limit + ", {median: }]",
                  {"chain.yaml:1:1", "chain",
                   std::to_string(kMaxChainStages + 1) + " stages, more than the limit of " +
                       std::to_string(kMaxChainStages),
                   "1 to " + std::to_string(kMaxChainStages) + " stages"});
  // A few bytes of YAML aliases asking for 100000 stages: refused at once, nothing built.
  std::string aliases = "chain:\n  - &m {median: {size: 3}}\n";
  for (int i = 1; i < 100000; ++i) aliases += "  - *m\n";
  require_refused(aliases, {"chain.yaml:2:3", "chain", "100000 stages, more than the limit of",
                            "1 to " + std::to_string(kMaxChainStages) + " stages"});
}

// ---- files -------------------------------------------------------------------------------

TEST_CASE("load_chain_file reads a file and names it in messages", "[chain]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "starsift_test_chain_config";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.yaml").string();
  {
    std::ofstream out(path);
    out << "chain:\n  - median: {size: 4}\n";
  }
  CHECK_THROWS_WITH(load_chain_file(path), StartsWith(path + ":2:20: stage 1 (median): size") &&
                                               Contains("allowed: odd values 3..31"));

  const std::string missing = (dir / "missing.yaml").string();
  CHECK_THROWS_WITH(load_chain_file(missing),
                    StartsWith(missing + ": cannot read the chain file") &&
                        Contains("No such file or directory"));
  CHECK_THROWS_WITH(load_chain_file(dir.string()),
                    StartsWith(dir.string() + ": cannot read the chain file: it is a directory"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("load_chain_file reads only regular files of at most 1 MiB", "[chain]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "starsift_test_chain_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string allowed = "allowed: a regular file of at most 1048576 bytes (1 MiB)";

  // A FIFO with no writer: opening it would wait for ever, so it must be refused unopened.
  const std::string fifo = (dir / "chain.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(
      load_chain_file(fifo),
      StartsWith(fifo + ": cannot read the chain file: it is a FIFO") && Contains(allowed));
  // A device that never ends.
  CHECK_THROWS_WITH(load_chain_file("/dev/zero"),
                    StartsWith("/dev/zero: cannot read the chain file: it is a character device") &&
                        Contains(allowed));
  CHECK_THROWS_WITH(load_chain_file(dir.string()),
                    StartsWith(dir.string() + ": cannot read the chain file: it is a directory") &&
                        Contains(allowed));

  // At the limit: read (and parsed: a comment fills it up).
  const std::string full = (dir / "full.yaml").string();
  {
    std::ofstream out(full, std::ios::binary);
    const std::string chain = "- median: {size: 5}\n#";
    out << chain << std::string(kMaxChainFileBytes - chain.size() - 1, 'c') << '\n';
  }
  REQUIRE(std::filesystem::file_size(full) == kMaxChainFileBytes);
  CHECK(load_chain_file(full).stages.size() == 1);
  // One byte more: refused, naming the size.
  const std::string large = (dir / "large.yaml").string();
  {
    std::ofstream out(large, std::ios::binary);
    out << std::string(kMaxChainFileBytes + 1, '#');
  }
  CHECK_THROWS_WITH(load_chain_file(large),
                    StartsWith(large + ": cannot read the chain file: it has 1048577 bytes") &&
                        Contains(allowed));
  // A symbolic link to a regular file is that file.
  const std::string link = (dir / "link.yaml").string();
  std::filesystem::create_symlink(full, link);
  CHECK(load_chain_file(link).stages.size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the example configurations parse", "[chain]") {
  const ChainConfig one = load_chain_file(source_file("config/examples/median-3.yaml"));
  REQUIRE(one.stages.size() == 1);
  CHECK(median_of(one.stages[0]) == median(3, BorderMode::Reflect101, 0.0));

  const std::string two_path = source_file("config/examples/median-3-then-5.yaml");
  const ChainConfig two = load_chain_file(two_path);
  REQUIRE(two.stages.size() == 2);
  CHECK(median_of(two.stages[0]) == median(3, BorderMode::Reflect101, 0.0));
  CHECK(median_of(two.stages[1]) == median(5, BorderMode::Replicate, 0.0));
  CHECK(two.stages[1].where.origin == two_path);
}

// ---- detect: the host's merge and tracker --------------------------------------------------

TEST_CASE("detect takes siftdetect's merge-streaks and tracker keys", "[chain]") {
  const ChainConfig config = parse_chain_yaml(
      "- detect: {threshold: 5, merge-streaks: false, gate: 4.5, confirm: 5, coast: 0, "
      "min-speed: 0.25, max-speed: 30}\n- detect: {}\n",
      "chain.yaml");
  REQUIRE(config.stages.size() == 2);
  const auto& set = std::get<DetectParams>(config.stages[0].params);
  CHECK(set.threshold == 5.0);
  CHECK_FALSE(set.link.merge_streaks);
  CHECK(set.link.tracker.gate == 4.5);
  CHECK(set.link.tracker.confirm == 5);
  CHECK(set.link.tracker.coast == 0);
  CHECK(set.link.tracker.min_speed == 0.25);
  CHECK(set.link.tracker.max_speed == 30.0);
  // Left out, each is siftdetect's default.
  CHECK(std::get<DetectParams>(config.stages[1].params).link == DetectLinkParams{});
}

TEST_CASE("detect's tracker keys are refused out of the tracker's ranges", "[chain]") {
  require_refused("- detect: {confirm: 0}\n",
                  {"chain.yaml:1:21", "stage 1 (detect): confirm", "0 is not allowed", "1..100"});
  require_refused("- detect: {gate: -1}\n", {"chain.yaml:1:18", "stage 1 (detect): gate", "-1",
                                             "finite numbers above 0 up to 1000 px"});
  require_refused("- detect: {max-speed: 0}\n",
                  {"chain.yaml:1:23", "stage 1 (detect): max-speed", "0",
                   "finite numbers above 0 up to 10000 px/frame"});
  require_refused("- detect: {merge-streaks: maybe}\n",
                  {"chain.yaml:1:27", "stage 1 (detect): merge-streaks", "'maybe'", "true"});
}
