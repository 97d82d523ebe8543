// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd: runs the pipelines of a YAML config (config/README.md, docs/starsiftd.md) until
// stopped, as a systemd service (Type=notify) or in the foreground.
//
//   starsiftd --config /etc/starsift/starsiftd.yaml
//   starsiftd --config config/demo.yaml --duration 20     # then prints a summary
//
// Exit status: 0 after a stop (SIGTERM, SIGINT, --duration), 2 for a config with mistakes
// (every one printed, nothing started) or bad arguments, 1 when it cannot run at all.
#include <gst/gst.h>
#include <limits.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "daemon/config/config_loader.hpp"
#include "daemon/runtime/daemon.hpp"
#include "daemon/runtime/logging.hpp"

#ifndef STARSIFT_VERSION
#define STARSIFT_VERSION "unknown"
#endif

namespace {

constexpr const char* kDefaultConfig = "/etc/starsift/starsiftd.yaml";

void usage(std::ostream& out) {
  out << "usage: starsiftd [--config FILE] [--duration SECONDS] [--summary]\n"
         "\n"
         "Runs the pipelines of FILE (default "
      << kDefaultConfig
      << ") until SIGTERM or\n"
         "SIGINT; SIGHUP reloads FILE. Under systemd (Type=notify) it reports READY, STATUS\n"
         "and WATCHDOG; its log goes to the journal.\n"
         "\n"
         "  --config FILE       the YAML config (config/README.md; `starsift validate FILE`)\n"
         "  --duration SECONDS  stop by itself after SECONDS (> 0), as on SIGTERM, and print a\n"
         "                      summary: frames, rate, drops, detections, the sky's movers\n"
         "                      found, and where the files are\n"
         "  --summary           print the summary at the end without --duration too\n"
         "  --version           print the version\n";
}

// Run from a build tree (build/bin/starsiftd), the plugin next door (build/plugins) is found
// without GST_PLUGIN_PATH; an installed starsiftd finds it in GStreamer's plugin directory.
void add_build_tree_plugins() {
  char exe[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  const std::filesystem::path dir =
      std::filesystem::path(std::string(exe, static_cast<std::size_t>(n))).parent_path();
  const std::filesystem::path plugins = dir.parent_path() / "plugins";
  std::error_code ec;
  if (std::filesystem::exists(plugins / "libgststarsift.so", ec)) {
    gst_registry_scan_path(gst_registry_get(), plugins.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace starsift::daemon;
  DaemonOptions options;
  options.config_path = kDefaultConfig;
  options.out = &std::cout;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "starsiftd: " << flag << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--config") {
      options.config_path = value("--config");
    } else if (arg.rfind("--config=", 0) == 0) {
      options.config_path = arg.substr(9);
    } else if (arg == "--duration" || arg.rfind("--duration=", 0) == 0) {
      const std::string text = arg == "--duration" ? value("--duration") : arg.substr(11);
      char* end = nullptr;
      errno = 0;
      const double seconds = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || errno != 0 || !(seconds > 0) || seconds > 1e7) {
        std::cerr << "starsiftd: --duration '" << text
                  << "' is not allowed; allowed: seconds, a number > 0 (at most 1e7)\n";
        return 2;
      }
      options.duration_s = seconds;
      options.summary = true;
    } else if (arg == "--summary") {
      options.summary = true;
    } else if (arg == "--version") {
      std::cout << "starsiftd " << STARSIFT_VERSION << "\n";
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      usage(std::cout);
      return 0;
    } else {
      std::cerr << "starsiftd: unknown argument '" << arg << "'\n";
      usage(std::cerr);
      return 2;
    }
  }

  const bool journal = stderr_is_journal();
  setup_logging(LogLevel::Info, journal);

  DaemonConfig config;
  try {
    config = load_daemon_config(options.config_path);
  } catch (const ConfigErrors& errors) {
    for (const ConfigProblem& p : errors.problems()) {
      if (journal) spdlog::error("{}", p.str());
      std::cerr << p.str() << "\n";
    }
    std::cerr << "starsiftd: " << errors.problems().size() << " problem(s) in "
              << options.config_path.string() << "; nothing started\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "starsiftd: " << e.what() << "\n";
    return 2;
  }
  set_log_level(config.log.level);

  gst_init(&argc, &argv);
  route_gstreamer_log();
  add_build_tree_plugins();

  int status = 1;
  {
    Daemon daemon(options, std::move(config));
    status = daemon.run();
  }
  gst_deinit();
  return status;
}
