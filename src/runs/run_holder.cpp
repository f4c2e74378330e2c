#include "runs/run_holder.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace ptxbench {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

std::string boot_id() {
  static const std::string id = read_first_line("/proc/sys/kernel/random/boot_id");
  return id;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

std::string process_start_stamp(int64_t pid) {
  if (pid <= 0) return "";
  // /proc/PID/stat: "pid (comm) state ppid ... starttime ..."; comm may hold spaces and
  // parentheses, so the fields are counted after the last ')'. starttime is field 22, the 20th
  // after comm; state is the first.
  std::string stat = read_first_line("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 1));
  std::string field, state, start;
  for (int i = 1; i <= 20 && fields >> field; ++i) {
    if (i == 1) state = field;
    if (i == 20) start = field;
  }
  if (start.empty() || state == "Z" || state == "X") return "";
  return boot_id() + "/" + start;
}

RunHolder RunHolder::current() {
  RunHolder h;
  h.pid = static_cast<int64_t>(::getpid());
  h.host = host_name();
  h.started = process_start_stamp(h.pid);
  return h;
}

RunHolder::Liveness RunHolder::liveness() const {
  if (host != host_name()) return Liveness::unknown;
  std::string now = process_start_stamp(pid);
  if (now.empty()) return Liveness::gone;
  // A holder stored without a stamp (/proc unreadable when it was written) is judged by its pid.
  return started.empty() || started == now ? Liveness::alive : Liveness::gone;
}

std::string RunHolder::describe() const { return "pid " + std::to_string(pid) + " on host " + (host.empty() ? "?" : host); }

}  // namespace ptxbench
