// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/logging.hpp"

#include <gst/gst.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <syslog.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace starsift::daemon {

namespace {

// spdlog's systemd sink (1.10) sends MESSAGE, PRIORITY and SYSLOG_IDENTIFIER only; this one
// adds the pipeline's name as a field of its own.
class JournalSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const int length = static_cast<int>(std::min<std::size_t>(msg.payload.size(), 1 << 20));
    const int priority = journal_priority(msg.level);
    if (msg.logger_name.size() > 0) {
      sd_journal_send("MESSAGE=%.*s", length, msg.payload.data(), "PRIORITY=%d", priority,
                      "SYSLOG_IDENTIFIER=starsiftd", "STARSIFT_PIPELINE=%.*s",
                      static_cast<int>(msg.logger_name.size()), msg.logger_name.data(), nullptr);
    } else {
      sd_journal_send("MESSAGE=%.*s", length, msg.payload.data(), "PRIORITY=%d", priority,
                      "SYSLOG_IDENTIFIER=starsiftd", nullptr);
    }
  }
  void flush_() override {}

 private:
  static int journal_priority(spdlog::level::level_enum level) {
    switch (level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        return LOG_DEBUG;
      case spdlog::level::info:
        return LOG_INFO;
      case spdlog::level::warn:
        return LOG_WARNING;
      case spdlog::level::err:
        return LOG_ERR;
      case spdlog::level::critical:
        return LOG_CRIT;
      default:
        return LOG_INFO;
    }
  }
};

// %* in the console pattern: "[<pipeline>] " for a pipeline's logger, nothing for the daemon's
// own (the sinks, and so their pattern, are shared by every logger).
class PipelineNameFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    if (msg.logger_name.size() == 0) return;
    dest.push_back('[');
    dest.append(msg.logger_name.data(), msg.logger_name.data() + msg.logger_name.size());
    dest.push_back(']');
    dest.push_back(' ');
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<PipelineNameFlag>();
  }
};

// The name of the top-level pipeline `object` is in, or empty. Read without the objects'
// locks and without taking references, as GStreamer's own log does: a message may be written
// while the element's lock is held, or from its dispose.
std::string pipeline_of(GObject* object) {
  if (object == nullptr || !GST_IS_OBJECT(object)) return {};
  GstObject* current = GST_OBJECT(object);
  while (GST_OBJECT_PARENT(current) != nullptr) current = GST_OBJECT_PARENT(current);
  if (!GST_IS_PIPELINE(current) || GST_OBJECT_NAME(current) == nullptr) return {};
  return GST_OBJECT_NAME(current);
}

void log_gstreamer(GstDebugCategory* category, GstDebugLevel level, const gchar*, const gchar*,
                   gint, GObject* object, GstDebugMessage* message, gpointer) {
  if (level > GST_LEVEL_WARNING || level == GST_LEVEL_NONE) return;
  const gchar* text = gst_debug_message_get(message);
  std::shared_ptr<spdlog::logger> logger;
  const std::string pipeline = pipeline_of(object);
  if (!pipeline.empty()) logger = spdlog::get(pipeline);
  if (!logger) logger = spdlog::default_logger();
  std::string who;
  if (object != nullptr && GST_IS_OBJECT(object) && GST_OBJECT_NAME(object) != nullptr) {
    who = std::string(GST_OBJECT_NAME(object)) + ": ";
  }
  const std::string_view name = gst_debug_category_get_name(category);
  // gst-rtsp-server's media pipelines and RTP sessions warn at every client's start about what
  // is normal there (a live appsrc fed before PLAYING, RTCP before the latency is known,
  // its appsinks without queues): a dozen lines a client, at debug, not in the journal's
  // warnings. Their errors stay errors.
  const bool rtsp_routine = level == GST_LEVEL_WARNING &&
                            (pipeline == "media-pipeline" || name == "rtspmedia" ||
                             name == "rtpsession" || name == "rtspclient" || name == "rtspstream");
  logger->log(level == GST_LEVEL_ERROR ? spdlog::level::err
              : rtsp_routine           ? spdlog::level::debug
                                       : spdlog::level::warn,
              "gstreamer {}: {}{}", name, who, text != nullptr ? text : "");
}

}  // namespace

spdlog::level::level_enum spdlog_level(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Trace:
      return spdlog::level::trace;
    case LogLevel::Debug:
      return spdlog::level::debug;
    case LogLevel::Info:
      return spdlog::level::info;
    case LogLevel::Warn:
      return spdlog::level::warn;
    case LogLevel::Error:
      return spdlog::level::err;
    case LogLevel::Critical:
      return spdlog::level::critical;
  }
  return spdlog::level::info;
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long device = 0, inode = 0;
  if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
  struct stat st {};
  if (fstat(2, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == device &&
         static_cast<unsigned long long>(st.st_ino) == inode;
}

void setup_logging(LogLevel level, bool journal) {
  std::shared_ptr<spdlog::logger> logger;
  if (journal) {
    logger = std::make_shared<spdlog::logger>("", std::make_shared<JournalSink>());
  } else {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<PipelineNameFlag>('*').set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %*%v");
    sink->set_formatter(std::move(formatter));
    logger = std::make_shared<spdlog::logger>("", sink);
  }
  logger->set_level(spdlog_level(level));
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog_level(level));
}

void set_log_level(LogLevel level) {
  spdlog::set_level(spdlog_level(level));  // every registered logger
}

std::shared_ptr<spdlog::logger> pipeline_logger(const std::string& name) {
  if (auto existing = spdlog::get(name)) return existing;
  const auto base = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(name, base->sinks().begin(), base->sinks().end());
  logger->set_level(base->level());
  spdlog::register_logger(logger);
  return logger;
}

void route_gstreamer_log() {
  const char* debug = std::getenv("GST_DEBUG");
  if (debug == nullptr || debug[0] == '\0') {
    gst_debug_set_default_threshold(GST_LEVEL_WARNING);
    gst_debug_remove_log_function(gst_debug_log_default);
  }
  gst_debug_add_log_function(log_gstreamer, nullptr, nullptr);
}

}  // namespace starsift::daemon
