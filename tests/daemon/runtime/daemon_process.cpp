// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace starsift::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "starsiftd-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

// ---- NotifySocket ------------------------------------------------------------------------

NotifySocket::NotifySocket(fs::path path) : path_(std::move(path)) {
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket(AF_UNIX) failed");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.string().size() >= sizeof addr.sun_path) throw std::runtime_error("path too long");
  std::strcpy(addr.sun_path, path_.c_str());
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("bind " + path_.string() + ": " + std::strerror(errno));
  }
}

NotifySocket::~NotifySocket() {
  if (fd_ >= 0) close(fd_);
  std::error_code ec;
  fs::remove(path_, ec);
}

void NotifySocket::drain(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  while (poll(&p, 1, timeout_ms) > 0) {
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n < 0) break;
    messages_.emplace_back(buffer, static_cast<std::size_t>(n));
    timeout_ms = 0;  // then only what is waiting already
  }
}

const std::vector<std::string>& NotifySocket::messages() {
  drain(0);
  return messages_;
}

std::optional<std::size_t> NotifySocket::wait_for(std::string_view needle,
                                                  std::chrono::milliseconds timeout,
                                                  std::size_t from) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    for (std::size_t i = from; i < messages_.size(); ++i) {
      if (messages_[i].find(needle) != std::string::npos) return i;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    drain(static_cast<int>(std::min<long long>(left.count(), 100)));
  }
}

// ---- DaemonProcess -----------------------------------------------------------------------

std::string starsiftd_path() {
  const char* path = std::getenv("STARSIFTD");
  return path != nullptr ? path : STARSIFTD_PATH;
}

DaemonProcess::DaemonProcess(const std::vector<std::string>& args, const fs::path& log_file,
                             DaemonEnvironment env)
    : log_file_(log_file) {
  const std::string binary = starsiftd_path();
  std::vector<std::string> argv_text = {binary};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int out = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    unsetenv("JOURNAL_STREAM");
    if (env.notify != nullptr) setenv("NOTIFY_SOCKET", env.notify->path().c_str(), 1);
    if (env.watchdog) setenv("WATCHDOG_USEC", std::to_string(env.watchdog->count()).c_str(), 1);
    struct stat st {};
    if (env.journal && fstat(2, &st) == 0) {
      setenv("JOURNAL_STREAM",
             (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)).c_str(), 1);
    }
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
}

DaemonProcess::~DaemonProcess() {
  if (running()) {
    kill(pid_, SIGKILL);
    wait_exit(5s);
  }
}

void DaemonProcess::signal(int sig) const {
  kill(pid_, sig);
}

bool DaemonProcess::running() {
  if (status_) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return false;
  }
  return true;
}

std::optional<int> DaemonProcess::wait_exit(std::chrono::milliseconds timeout) {
  eventually([&] { return !running(); }, timeout);
  return status_;
}

std::string DaemonProcess::output() const {
  std::ifstream in(log_file_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- HTTP --------------------------------------------------------------------------------

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string small_sky_config(const fs::path& state, int port, const std::string& outputs) {
  return "state-directory: " + state.string() + R"(
metrics: {address: 127.0.0.1, port: )" +
         std::to_string(port) + R"(}
shutdown-timeout-s: 5
pipelines:
  - name: sky
    source:
      sky: {width: 160, height: 120, fps: 25, movers: 4, star-density: 200, seed: 3,
            mover-snr-min: 15, mover-snr-max: 30}
    chain:
      - whiten: {history: 8}
      - detect:
    depth: 2
    outputs:
)" + outputs;
}

HttpReply http_request(int port, const std::string& request) {
  HttpReply reply;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    close(fd);
    return reply;
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  if (text.rfind("HTTP/1.", 0) == 0 && text.size() > 12) reply.status = std::atoi(text.c_str() + 9);
  const auto end = text.find("\r\n\r\n");
  reply.head = text.substr(0, end);
  if (end != std::string::npos) reply.body = text.substr(end + 4);
  return reply;
}

HttpReply http_get(int port, const std::string& path) {
  return http_request(port, "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
}

double metric(const std::string& text, const std::string& name, const std::string& pipeline) {
  const std::string key = pipeline.empty() ? name + " " : name + "{pipeline=\"" + pipeline + "\"} ";
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key, 0) == 0) return std::strtod(line.c_str() + key.size(), nullptr);
  }
  return std::nan("");
}

// ---- files -------------------------------------------------------------------------------

std::vector<YAML::Node> read_json_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<YAML::Node> lines;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    try {
      lines.push_back(YAML::Load(line));
    } catch (const std::exception& e) {
      throw std::runtime_error(path.string() + ":" + std::to_string(number) +
                               ": not JSON: " + e.what());
    }
    if (!lines.back().IsMap()) {
      throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": not an object");
    }
  }
  return lines;
}

std::vector<fs::path> files_ending(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file() && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      found.push_back(it->path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

void write_file(const fs::path& path, const std::string& text) {
  // Written under another name and renamed: a reload never reads half a file.
  const fs::path part = path.string() + ".part";
  {
    std::ofstream out(part);
    out << text;
  }
  fs::rename(part, path);
}

}  // namespace starsift::test
