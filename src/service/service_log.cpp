// The service log's sink and format (see service_log.h).
#include "service/service_log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "common/error.h"

namespace ptxbench {
namespace {

// Writes each formatted line with as few write(2) calls as the descriptor allows: one, for a line
// under PIPE_BUF on a pipe, so lines of serve and its workers on one descriptor never interleave.
class FdSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit FdSink(int fd) : m_fd(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(m_fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // a closed log must not stop the service
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  void flush_() override {}

 private:
  int m_fd;
};

}  // namespace

const std::vector<std::string>& log_level_names() {
  static const std::vector<std::string> names = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  return names;
}

spdlog::level::level_enum parse_log_level(const std::string& name) {
  const auto& names = log_level_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<spdlog::level::level_enum>(i);
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
  throw InputError("log", "unknown log level '" + name + "' (one of " + all + ")");
}

void init_service_log(const std::string& name, const std::string& level, int fd) {
  auto logger = std::make_shared<spdlog::logger>(name, std::make_shared<FdSink>(fd));
  logger->set_formatter(std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l [%n] %v",
                                                                    spdlog::pattern_time_type::utc));
  logger->set_level(parse_log_level(level));
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace ptxbench
