// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift: the command-line tool. Subcommands are listed in kCommands.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <span>
#include <string_view>

#include "app/cli.hpp"
#include "app/demo.hpp"
#include "app/quality/quality_command.hpp"
#include "app/sky_command.hpp"
#include "app/validate_command.hpp"
#include "app/version.hpp"

namespace {

using namespace starsift::app;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int cmd_demo(std::span<char* const> args) {
  bool help = false;
  const DemoOptions options = parse_demo_options(args, help);
  if (help) {
    print_demo_help();
    return 0;
  }
  return run_demo(options);
}

int cmd_sky(std::span<char* const> args) {
  bool help = false;
  const SkyCommandOptions options = parse_sky_options(args, help);
  if (help) {
    print_sky_help();
    return 0;
  }
  return run_sky_command(options);
}

int cmd_quality(std::span<char* const> args) {
  bool help = false;
  const QualityOptions options = parse_quality_options(args, help);
  if (help) {
    print_quality_help();
    return 0;
  }
  std::string command_line = "starsift quality";
  for (const char* arg : args) command_line += std::string(" ") + arg;
  return run_quality_command(options, command_line);
}

int cmd_validate(std::span<char* const> args) {
  return run_validate_command(args);
}

int cmd_version(std::span<char* const> args) {
  if (args.size() == 1 &&
      (std::string_view(args[0]) == "-h" || std::string_view(args[0]) == "--help")) {
    std::printf(
        "usage: starsift version\n\nPrints the version and the backends this build can use.\n");
    return 0;
  }
  if (!args.empty()) {
    throw UsageError("version takes no arguments, got '" + std::string(args[0]) + "'");
  }
  print_version();
  return 0;
}

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(std::span<char* const> args);
};

constexpr Command kCommands[] = {
    {"demo", "filter a synthetic noisy star field and write a before/after picture", cmd_demo},
    {"sky", "write frames of the synthetic sky with known movers, and their truth", cmd_sky},
    {"quality", "measure how well whitening finds faint movers, against simpler subtractions",
     cmd_quality},
    {"validate", "check starsiftd config files: every problem with its file:line:column",
     cmd_validate},
    {"version", "print the version and the backends this build can use", cmd_version},
};

void print_help(std::FILE* to) {
  std::fprintf(to,
               "usage: starsift <command> [options]\n"
               "\n"
               "GPU frame processing for camera and telescope hosts.\n"
               "\n"
               "commands:\n");
  for (const Command& c : kCommands) {
    std::fprintf(to, "  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::fprintf(to,
               "\n"
               "'starsift <command> --help' describes a command's options.\n"
               "Benchmarks are a separate tool: starsift-bench.\n");
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_pattern("%l: %v");
  const std::span<char* const> args(argv + 1, static_cast<std::size_t>(argc > 0 ? argc - 1 : 0));
  if (args.empty()) {
    print_help(stderr);
    return kExitUsage;
  }
  const std::string_view name = args[0];
  if (name == "-h" || name == "--help" || name == "help") {
    print_help(stdout);
    return 0;
  }
  const Command* command = nullptr;
  for (const Command& c : kCommands) {
    const bool alias = c.name == "version" && (name == "--version" || name == "-V");
    if (c.name == name || alias) command = &c;
  }
  if (command == nullptr) {
    std::fprintf(stderr, "starsift: unknown command '%.*s'\n\n", static_cast<int>(name.size()),
                 name.data());
    print_help(stderr);
    return kExitUsage;
  }

  try {
    return command->run(args.subspan(1));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "starsift %.*s: %s\nRun 'starsift %.*s --help' for the options.\n",
                 static_cast<int>(command->name.size()), command->name.data(), e.what(),
                 static_cast<int>(command->name.size()), command->name.data());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "starsift %.*s: error: %s\n", static_cast<int>(command->name.size()),
                 command->name.data(), e.what());
    return kExitFailure;
  }
}
