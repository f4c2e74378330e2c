// The log of the evaluation service (spdlog): serve and its workers write
// "<UTC time> <level> [<process>] <message>" lines — restarts, exclusions, re-queues, GPU health
// changes, every submission — to serve's stderr. Workers get serve's stderr as an inherited
// descriptor, so the operator reads one stream, and each line goes out in one write.
#pragma once

// spdlog over the fmt we build with: include spdlog only through this header.
#ifndef SPDLOG_FMT_EXTERNAL
#define SPDLOG_FMT_EXTERNAL
#endif
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

namespace ptxbench {

/// The values of --log-level, most to least verbose.
const std::vector<std::string>& log_level_names();

/// Throws InputError naming the accepted values for anything else.
spdlog::level::level_enum parse_log_level(const std::string& name);

/// Makes the process's default logger (what spdlog::info(...) writes to) a logger named `name`
/// writing to `fd` at `level`. `fd` is not owned: it must stay open for the process's lifetime.
void init_service_log(const std::string& name, const std::string& level, int fd = 2);

}  // namespace ptxbench
