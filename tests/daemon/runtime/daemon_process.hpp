// SPDX-License-Identifier: LGPL-2.1-or-later
// What the tests of starsiftd as a process share: the real binary started with a config in a
// temporary directory, the systemd notify socket it reports to (a unix datagram socket the
// test listens on, as systemd would), HTTP to its metrics, and its files read back.
#pragma once

#include <sys/types.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace starsift::test {

using namespace std::chrono_literals;

// A fresh directory under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// NOTIFY_SOCKET's other end: every datagram starsiftd sends, kept in order.
class NotifySocket {
 public:
  explicit NotifySocket(std::filesystem::path path);
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }
  // Waits until a message received after `from` (an index into messages()) holds `needle`;
  // returns its index, or nothing after `timeout`.
  std::optional<std::size_t> wait_for(std::string_view needle, std::chrono::milliseconds timeout,
                                      std::size_t from = 0);
  // Every message received so far (reads what is waiting first).
  const std::vector<std::string>& messages();

 private:
  void drain(int timeout_ms);
  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<std::string> messages_;
};

struct DaemonEnvironment {
  const NotifySocket* notify = nullptr;               // NOTIFY_SOCKET
  std::optional<std::chrono::microseconds> watchdog;  // WATCHDOG_USEC
  bool journal = false;  // JOURNAL_STREAM naming its stderr, as systemd sets it for the journal
};

// starsiftd running with `args`; its stdout and stderr go to a file read by output().
class DaemonProcess {
 public:
  DaemonProcess(const std::vector<std::string>& args, const std::filesystem::path& log_file,
                DaemonEnvironment env = {});
  ~DaemonProcess();  // SIGKILL when still running
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  void signal(int sig) const;
  // The exit status once it exits within `timeout` (-signal when a signal ended it).
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  bool running();
  std::string output() const;  // what it wrote so far

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::filesystem::path log_file_;
};

// The small sky of the process tests (160x120 at 25 fps: real time on two CPU cores beside
// other tests; whitening and detection), metrics on 127.0.0.1:`port`; `outputs` is the body
// of the pipeline's `outputs` map, lines indented by six spaces.
std::string small_sky_config(const std::filesystem::path& state, int port,
                             const std::string& outputs);

// The path of the starsiftd under test.
std::string starsiftd_path();

// A TCP port on 127.0.0.1 free a moment ago.
int free_port();

// GET `path` from 127.0.0.1:`port` (HTTP/1.0); the status code and body. Status 0 when it
// cannot connect.
struct HttpReply {
  int status = 0;
  std::string head;  // the status line and headers
  std::string body;
};
HttpReply http_get(int port, const std::string& path);
// One request as written (any method, any path), the answer split at the blank line.
HttpReply http_request(int port, const std::string& request);

// A metric's value for `pipeline` ("" for one without labels) in Prometheus text; NaN when
// it is not there.
double metric(const std::string& text, const std::string& name, const std::string& pipeline);

// Each line of a JSON-lines file, parsed (yaml-cpp reads JSON); throws on a line that does
// not parse, naming it.
std::vector<YAML::Node> read_json_lines(const std::filesystem::path& path);

// Every regular file under `dir` whose name ends with `suffix`, sorted.
std::vector<std::filesystem::path> files_ending(const std::filesystem::path& dir,
                                                const std::string& suffix);

// Writes `text` to `path`.
void write_file(const std::filesystem::path& path, const std::string& text);

// Polls `condition` every 50 ms until it holds or `timeout` passes.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    struct timespec ts {
      0, 50'000'000
    };
    nanosleep(&ts, nullptr);
  }
}

}  // namespace starsift::test
