// SPDX-License-Identifier: LGPL-2.1-or-later
#include "test_starsiftd_mqtt_broker.hpp"

#include <catch2/catch.hpp>

#include "daemon_process.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace starsift::test {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBroker = "/usr/sbin/mosquitto";

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
  nanosleep(&ts, nullptr);
}

bool accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

std::string which(const std::string& program) {
  for (const char* dir : {"/usr/bin", "/usr/sbin", "/bin", "/usr/local/bin"}) {
    const fs::path p = fs::path(dir) / program;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

std::string user_name() {
  const passwd* pw = getpwuid(getuid());
  return pw != nullptr ? pw->pw_name : "root";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

bool mosquitto_available() {
  return access(kBroker, X_OK) == 0 && !which("mosquitto_sub").empty() &&
         !which("mosquitto_pub").empty() && !which("mosquitto_passwd").empty();
}

// ---- ChildProcess ------------------------------------------------------------------------

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const fs::path& output) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
}

ChildProcess::~ChildProcess() {
  if (!status_) {
    kill(pid_, SIGKILL);
    wait_exit(std::chrono::seconds(5));
  }
}

void ChildProcess::signal(int sig) const {
  if (!status_) kill(pid_, sig);
}

std::optional<int> ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!status_) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    sleep_ms(20);
  }
  return status_;
}

std::optional<int> run_to_end(const std::vector<std::string>& argv, const fs::path& output,
                              std::chrono::milliseconds timeout) {
  ChildProcess process(argv, output);
  return process.wait_exit(timeout);
}

// ---- MosquittoBroker ---------------------------------------------------------------------

MosquittoBroker::MosquittoBroker(fs::path dir, int port)
    : dir_(std::move(dir)),
      config_(dir_ / "mosquitto.conf"),
      passwords_(dir_ / "mosquitto.passwd"),
      log_(dir_ / "mosquitto.log"),
      port_(port) {
  fs::create_directories(dir_);
  const auto rc = run_to_end({which("mosquitto_passwd"), "-c", "-b", passwords_.string(),
                              kSubscriberUser, kSubscriberPassword},
                             dir_ / "mosquitto_passwd.log");
  if (!rc || *rc != 0) throw std::runtime_error("mosquitto_passwd failed");
}

MosquittoBroker::~MosquittoBroker() {
  stop();
}

void MosquittoBroker::add_user(const std::string& user, const std::string& password) {
  const auto rc = run_to_end({which("mosquitto_passwd"), "-b", passwords_.string(), user, password},
                             dir_ / "mosquitto_passwd.log");
  if (!rc || *rc != 0) throw std::runtime_error("mosquitto_passwd failed");
}

void MosquittoBroker::write_config(bool anonymous) const {
  std::ofstream out(config_);
  out << "listener " << port_ << " 127.0.0.1\n"
      << "allow_anonymous " << (anonymous ? "true" : "false") << "\n"
      << "password_file " << passwords_.string() << "\n"
      << "persistence false\n"
      // Started as root, mosquitto drops to the user 'mosquitto', who cannot read the test's
      // private directory: it stays the user it was started as.
      << "user " << user_name() << "\n"
      << "log_dest stdout\n"
      << "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
      << "connection_messages true\n";
}

void MosquittoBroker::start(bool anonymous) {
  if (process_) throw std::runtime_error("the broker runs already");
  write_config(anonymous);
  process_.emplace(std::vector<std::string>{kBroker, "-c", config_.string()}, log_);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!accepts(port_)) {
    if (process_->wait_exit(std::chrono::milliseconds(0)) ||
        std::chrono::steady_clock::now() >= end) {
      throw std::runtime_error("mosquitto did not start on port " + std::to_string(port_) + ":\n" +
                               read_file(log_));
    }
    sleep_ms(20);
  }
}

void MosquittoBroker::stop() {
  if (!process_) return;
  process_->signal(SIGTERM);
  if (!process_->wait_exit(std::chrono::seconds(10))) process_->signal(SIGKILL);
  process_->wait_exit(std::chrono::seconds(5));
  process_.reset();
}

void MosquittoBroker::freeze() {
  if (process_) process_->signal(SIGSTOP);
}

void MosquittoBroker::kill() {
  if (!process_) return;
  process_->signal(SIGKILL);
  process_->wait_exit(std::chrono::seconds(5));
  process_.reset();
}

void MosquittoBroker::allow_anonymous() {
  write_config(true);
  if (process_) process_->signal(SIGHUP);
}

// ---- MqttSubscriber ----------------------------------------------------------------------

MqttSubscriber::MqttSubscriber(const fs::path& dir, int port, const std::string& topic)
    : dir_(dir), output_(dir / ("mosquitto_sub-" + std::to_string(port) + ".out")), port_(port) {
  process_.emplace(std::vector<std::string>{which("mosquitto_sub"), "-h", "127.0.0.1", "-p",
                                            std::to_string(port), "-u", kSubscriberUser, "-P",
                                            kSubscriberPassword, "-q", "1", "-v", "-t", topic},
                   output_);
}

std::vector<MqttMessage> MqttSubscriber::messages() const {
  std::vector<MqttMessage> all;
  std::ifstream in(output_);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a line still being written
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;  // mosquitto_sub's own complaints
    all.push_back({line.substr(0, space), line.substr(space + 1)});
  }
  return all;
}

std::vector<std::string> MqttSubscriber::payloads(const std::string& topic) const {
  std::vector<std::string> out;
  for (MqttMessage& m : messages()) {
    if (m.topic == topic) out.push_back(std::move(m.payload));
  }
  return out;
}

bool MqttSubscriber::wait_subscribed(std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    const std::string probe = "probe-" + std::to_string(++probes_);
    run_to_end(
        {which("mosquitto_pub"), "-h", "127.0.0.1", "-p", std::to_string(port_), "-u",
         kSubscriberUser, "-P", kSubscriberPassword, "-q", "1", "-t", kProbeTopic, "-m", probe},
        dir_ / "mosquitto_pub.log", std::chrono::seconds(5));
    for (int i = 0; i < 10; ++i) {
      for (const std::string& p : payloads(kProbeTopic)) {
        if (p == probe) return true;
      }
      sleep_ms(20);
    }
  }
  return false;
}

std::vector<std::string> text_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<std::string> first_copies(const std::vector<std::string>& received,
                                      std::size_t* repeats) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  *repeats = 0;
  for (const std::string& m : received) {
    if (seen.insert(m).second) {
      out.push_back(m);
    } else {
      ++*repeats;
    }
  }
  return out;
}

BrokerAndSubscriber::BrokerAndSubscriber(const fs::path& dir, const std::string& topic)
    : broker(dir / "broker", free_port()), subscriber(dir, (broker.start(), broker.port()), topic) {
  REQUIRE(subscriber.wait_subscribed(std::chrono::seconds(10)));
}

}  // namespace starsift::test
