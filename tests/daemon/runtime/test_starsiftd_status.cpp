// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd's status page as a person sees it: the daemon runs a small synthetic sky, the
// page and its JSON are read over HTTP (headers, routing, what a request may not reach), and
// headless Chromium renders the page: after its script has polled /status.json, the DOM
// shows the pipeline with the numbers the JSON gives, and a screenshot is a PNG. Without
// Chromium (Debian `chromium`) those checks are skipped, saying so.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// A sky that runs in real time on two CPU cores beside other tests, with a preview every
// second so the page has one to show.
std::string sky_config(const fs::path& state, int port) {
  return small_sky_config(state, port, "      preview: {every-s: 1}\n");
}

bool has_header(const HttpReply& r, const std::string& header) {
  return r.head.find("\r\n" + header + "\r\n") != std::string::npos;
}

YAML::Node status(int port) {
  const HttpReply r = http_get(port, "/status.json");
  REQUIRE(r.status == 200);
  return YAML::Load(r.body);
}

// The pipeline `name` of a status; not a map when there is none.
YAML::Node pipeline_of(const YAML::Node& status, const std::string& name) {
  for (const auto& p : status["pipelines"]) {
    if (p["name"].as<std::string>() == name) return p;
  }
  return YAML::Node();
}

bool is_png(const std::string& bytes) {
  return bytes.size() > 24 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

// Width and height from a PNG's IHDR.
std::pair<std::uint32_t, std::uint32_t> png_size(const std::string& bytes) {
  const auto be32 = [&](std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 3]));
  };
  return {be32(16), be32(20)};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The Chromium to render with: $STARSIFT_CHROMIUM when set, else Debian's; empty when it is
// not an executable file.
std::string chromium_path() {
  const char* env = std::getenv("STARSIFT_CHROMIUM");
  const std::string path = env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

// Runs Chromium headless with `args` and its own profile under `dir`, stdout to `out`;
// its exit status, or nothing when it had to be killed after `timeout` (with every process
// it started: they share its process group).
std::optional<int> run_chromium(const std::string& chromium, const fs::path& dir,
                                std::vector<std::string> args, const fs::path& out,
                                std::chrono::seconds timeout) {
  std::vector<std::string> argv = {chromium,
                                   "--headless=new",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--no-first-run",
                                   "--disable-extensions",
                                   "--disable-background-networking",
                                   "--user-data-dir=" + (dir / "chromium-profile").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const fs::path err = dir / "chromium.stderr";
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (o >= 0) dup2(o, STDOUT_FILENO);
    if (e >= 0) dup2(e, STDERR_FILENO);
    // Under scripts/test_sanitizers.sh the ASan runtime is preloaded for the programs built
    // here; Chromium is not one of them and hangs with it.
    unsetenv("LD_PRELOAD");
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    execv(c[0], c.data());
    _exit(127);
  }
  REQUIRE(pid > 0);
  setpgid(pid, pid);
  const auto end = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      kill(-pid, SIGKILL);  // helpers it may have left behind
      return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    }
    std::this_thread::sleep_for(50ms);
  }
  kill(-pid, SIGKILL);
  waitpid(pid, &status, 0);
  WARN("chromium did not finish within " << timeout.count() << " s; killed. stderr:\n"
                                         << read_file(err));
  return std::nullopt;
}

// The text of the element with data-k="key" in a dumped DOM (the first one).
std::string dom_value(const std::string& dom, const std::string& key) {
  const std::regex re("data-k=\"" + key + "\"[^>]*>([^<]*)<");
  std::smatch m;
  return std::regex_search(dom, m, re) ? m[1].str() : std::string("(none)");
}

// starsiftd on the sky, once frames go through the chain, movers are reported and a preview
// is written.
struct RunningSky {
  TempDir dir;
  int port = free_port();
  std::unique_ptr<DaemonProcess> daemon;

  RunningSky() {
    const fs::path config = dir.path() / "starsiftd.yaml";
    write_file(config, sky_config(dir.path() / "state", port));
    daemon = std::make_unique<DaemonProcess>(std::vector<std::string>{"--config", config.string()},
                                             dir.path() / "starsiftd.log");
    const bool up = eventually(
        [&] {
          const HttpReply r = http_get(port, "/status.json");
          if (r.status != 200) return false;
          const YAML::Node p = pipeline_of(YAML::Load(r.body), "sky");
          return p.IsMap() && p["frames_out"].as<int>() > 25 && !p["preview"].IsNull() &&
                 p["recent_movers"].size() > 0;
        },
        45s);
    INFO(daemon->output());
    REQUIRE(up);
  }

  void stop() {
    daemon->signal(SIGTERM);
    INFO(daemon->output());
    CHECK(daemon->wait_exit(15s) == std::optional<int>(0));
  }
};

}  // namespace

TEST_CASE("starsiftd's status page: the page, its JSON and the preview over HTTP",
          "[starsiftd][status]") {
  RunningSky sky;
  const int port = sky.port;
  INFO(sky.daemon->output());

  const HttpReply page = http_get(port, "/");
  CHECK(page.status == 200);
  CHECK(has_header(page, "Content-Type: text/html; charset=utf-8"));
  CHECK(has_header(page, "Cache-Control: no-store"));
  CHECK(page.head.find("Content-Security-Policy: default-src 'none'") != std::string::npos);
  CHECK(page.body.find("<span data-k=\"name\">sky</span>") != std::string::npos);

  const HttpReply json = http_get(port, "/status.json");
  CHECK(json.status == 200);
  CHECK(has_header(json, "Content-Type: application/json"));
  CHECK(has_header(json, "Cache-Control: no-store"));
  const YAML::Node p = pipeline_of(YAML::Load(json.body), "sky");
  REQUIRE(p.IsMap());
  CHECK(p["state"].as<std::string>() == "running");
  CHECK(p["backend"].as<std::string>() == "cpu");
  CHECK(p["preview"].as<std::string>() == "/preview/sky.png");
  CHECK(p["frames_in"].as<long long>() >= p["frames_out"].as<long long>());
  const YAML::Node mover = p["recent_movers"][0];
  CHECK(mover["track"].as<int>() >= 0);
  CHECK(mover["utc"].as<std::string>().size() == 27);
  CHECK(mover["x"].as<double>() >= -1);
  CHECK(mover["x"].as<double>() <= 160);

  const HttpReply png = http_get(port, "/preview/sky.png");
  CHECK(png.status == 200);
  CHECK(has_header(png, "Content-Type: image/png"));
  CHECK(has_header(png, "Cache-Control: no-store"));
  CHECK(is_png(png.body));
  // The daemon's own file, byte for byte (rewritten once a second: one of two tries matches).
  const fs::path file = sky.dir.path() / "state" / "sky" / "preview.png";
  CHECK((http_get(port, "/preview/sky.png").body == read_file(file) ||
         http_get(port, "/preview/sky.png").body == read_file(file)));
  CHECK(http_get(port, "/preview/sky.png?n=12").status == 200);  // a cache-busting query

  const HttpReply head =
      http_request(port, "HEAD /status.json HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(head.head.find("Content-Length: 0\r\n") == std::string::npos);

  // Only the preview of a pipeline the daemon runs, whatever the path says; nothing else.
  CHECK(http_get(port, "/preview/nope.png").status == 404);
  CHECK(http_get(port, "/preview/..%2Fsky%2Fpreview.png").status == 404);
  CHECK(http_get(port, "/preview/..%2F..%2Fstarsiftd.yaml%00.png").status == 404);
  CHECK(http_get(port, "/preview/../sky.png").status == 404);
  CHECK(http_get(port, "/preview/sky/../sky.png").status == 404);
  CHECK(http_get(port, "/preview/SKY.png").status == 404);
  CHECK(http_get(port, "/sky/preview.png").status == 404);
  CHECK(http_get(port, "/state/sky/preview.png").status == 404);
  CHECK(http_get(port, "/../../etc/passwd").status == 404);
  const HttpReply post =
      http_request(port, "POST / HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi");
  CHECK(post.status == 405);
  CHECK(has_header(post, "Allow: GET, HEAD"));
  CHECK(http_request(port, "DELETE /status.json HTTP/1.0\r\n\r\n").status == 405);
  // A request head larger than the server reads: it answers and closes (the reply may be lost
  // to the reset of the unread rest), and serves on.
  http_request(port, "GET /" + std::string(20000, 'a') + " HTTP/1.0\r\n\r\n");
  CHECK(http_get(port, "/healthz").status == 200);

  sky.stop();
}

TEST_CASE("starsiftd's status page in headless Chromium: the script updates it",
          "[starsiftd][status][chromium]") {
  const std::string chromium = chromium_path();
  if (chromium.empty()) {
    WARN(
        "SKIPPED: no Chromium (/usr/bin/chromium, Debian package chromium; or set "
        "STARSIFT_CHROMIUM): the page was not rendered in a browser");
    return;
  }
  RunningSky sky;
  const int port = sky.port;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  const YAML::Node before = pipeline_of(status(port), "sky");
  // Virtual time: the script's 2 s polls come at once, each fetch waited for.
  const fs::path dom_file = sky.dir.path() / "dom.html";
  const auto dumped = run_chromium(
      chromium, sky.dir.path(), {"--virtual-time-budget=5000", "--dump-dom", url}, dom_file, 60s);
  const YAML::Node after = pipeline_of(status(port), "sky");
  REQUIRE(dumped);
  CHECK(*dumped == 0);
  const std::string dom = read_file(dom_file);
  INFO("DOM:\n" << dom.substr(0, 20000));
  // The script ran and polled /status.json (at virtual 0, 2 and 4 s).
  std::smatch m;
  REQUIRE(std::regex_search(dom, m, std::regex("<body data-refreshes=\"([0-9]+)\"")));
  CHECK(std::stoi(m[1].str()) >= 2);
  CHECK(std::regex_search(dom, std::regex("<span id=\"updated\">updated [^<]+</span>")));
  // The pipeline, with numbers between those the JSON gave before and after.
  CHECK(dom_value(dom, "name") == "sky");
  CHECK(dom_value(dom, "state") == "running");
  CHECK(dom.find("data-state=\"running\"") != std::string::npos);
  CHECK(dom_value(dom, "backend") == "cpu");
  CHECK(dom_value(dom, "ready") == "yes");
  const long long frames_in = std::stoll(dom_value(dom, "frames_in"));
  CHECK(frames_in > 0);
  CHECK(frames_in >= before["frames_in"].as<long long>());
  CHECK(frames_in <= after["frames_in"].as<long long>());
  const long long frames_out = std::stoll(dom_value(dom, "frames_out"));
  CHECK(frames_out >= before["frames_out"].as<long long>());
  CHECK(frames_out <= after["frames_out"].as<long long>());
  CHECK(std::stod(dom_value(dom, "fps")) > 0);
  CHECK(std::regex_search(dom, std::regex("src=\"/preview/sky\\.png\\?n=[0-9]+\"")));
  // The movers' table: rows of a track id, then a UTC.
  CHECK(std::regex_search(
      dom, std::regex("<tr><td>[0-9]+</td><td>20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z</td>")));

  // And as a picture.
  const fs::path shot = sky.dir.path() / "status.png";
  const auto shot_status = run_chromium(chromium, sky.dir.path(),
                                        {"--virtual-time-budget=3000", "--window-size=1280,900",
                                         "--screenshot=" + shot.string(), url},
                                        sky.dir.path() / "screenshot.out", 60s);
  REQUIRE(shot_status);
  CHECK(*shot_status == 0);
  const std::string bytes = read_file(shot);
  REQUIRE(is_png(bytes));
  CHECK(bytes.size() > 10000);  // a page, not a blank
  const auto [w, h] = png_size(bytes);
  CHECK(w == 1280);
  CHECK(h == 900);

  sky.stop();
}
