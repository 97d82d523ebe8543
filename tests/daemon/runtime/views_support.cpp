// SPDX-License-Identifier: LGPL-2.1-or-later
#include "views_support.hpp"

#include <signal.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace starsift::test {

std::string view_sky_config(const std::filesystem::path& state, int metrics_port,
                            const std::string& top, const std::string& outputs,
                            const std::string& pipeline, const std::string& detect) {
  return "state-directory: " + state.string() +
         "\nmetrics: {port: " + std::to_string(metrics_port) + "}\nshutdown-timeout-s: 5\n" + top +
         R"(pipelines:
  - name: sky
    source:
      sky: {width: 384, height: 288, fps: 10, movers: 4, star-density: 300, seed: 5,
            mover-snr-min: 15, mover-snr-max: 30}
    chain: [{whiten: {history: 8}}, {detect: )" +
         detect + R"(}]
    depth: 2
)" + pipeline +
         "    outputs: {preview: {every-s: 0}" + (outputs.empty() ? "" : ", " + outputs) + "}\n";
}

double labelled_metric(int port, const std::string& name, const std::vector<std::string>& labels) {
  std::istringstream lines(http_get(port, "/metrics").body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name + "{", 0) != 0) continue;
    bool all = true;
    for (const auto& l : labels) all = all && line.find(l) != std::string::npos;
    if (all) return std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
  }
  return std::nan("");
}

double view_metric(int port, const std::string& name, const std::string& view) {
  return labelled_metric(port, name, {"pipeline=\"sky\"", "view=\"" + view + "\""});
}

double spread(const DecodedPicture& p) {
  double sum = 0, sum2 = 0;
  for (const std::uint8_t v : p.luma) {
    sum += v;
    sum2 += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(p.luma.size());
  return std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
}

std::string run_output(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, p) != nullptr) out += buffer;
    ::pclose(p);
  }
  return out;
}

void stop_cleanly(DaemonProcess& daemon) {
  daemon.signal(SIGTERM);
  const auto status = daemon.wait_exit(20s);
  REQUIRE(status);
  CHECK(*status == 0);
}

}  // namespace starsift::test
