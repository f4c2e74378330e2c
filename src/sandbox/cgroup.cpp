#include "sandbox/cgroup.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.h"

namespace ptxbench {
namespace {

namespace stdfs = std::filesystem;
constexpr const char* kLib = "sandbox";

bool write_text(const std::string& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string read_text(const std::string& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<uint64_t> field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return std::nullopt;
}

// The cgroup2 mount point, if any: /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid).
std::string v2_root() {
  for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    std::string controllers = read_text(std::string(root) + "/cgroup.controllers");
    if (controllers.find("memory") != std::string::npos) return root;
  }
  return "";
}

std::string v1_root() {
  return stdfs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") ? "/sys/fs/cgroup/memory" : "";
}

// The folder under which our groups live: v2 needs the memory controller enabled down to it.
std::string parent_for(const std::string& version) {
  if (version == "v2") {
    std::string root = v2_root();
    std::string parent = root + "/ptxbench";
    std::error_code ec;
    stdfs::create_directories(parent, ec);
    if (read_text(root + "/cgroup.subtree_control").find("memory") == std::string::npos)
      write_text(root + "/cgroup.subtree_control", "+memory");
    if (read_text(parent + "/cgroup.subtree_control").find("memory") == std::string::npos)
      write_text(parent + "/cgroup.subtree_control", "+memory");
    return parent;
  }
  std::string parent = v1_root() + "/ptxbench";
  std::error_code ec;
  stdfs::create_directories(parent, ec);
  return parent;
}

}  // namespace

std::string ProcessCgroup::available() {
  if (geteuid() != 0) return "";
  if (!v2_root().empty() && access(v2_root().c_str(), W_OK) == 0) return "v2";
  if (!v1_root().empty() && access(v1_root().c_str(), W_OK) == 0) return "v1";
  return "";
}

ProcessCgroup::ProcessCgroup(uint64_t memory_bytes) : m_limit(memory_bytes) {
  m_version = available();
  if (m_version.empty()) throw EnvironmentError(kLib, "no writable memory cgroup hierarchy on this host");
  static std::atomic<uint64_t> counter{0};
  std::string parent = parent_for(m_version);
  m_path = parent + "/p" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  std::error_code ec;
  if (!stdfs::create_directory(m_path, ec) && !stdfs::is_directory(m_path))
    throw EnvironmentError(kLib, "cannot create cgroup " + m_path + ": " + ec.message());
  bool ok = m_version == "v2" ? write_text(m_path + "/memory.max", std::to_string(memory_bytes)) &&
                                    write_text(m_path + "/memory.swap.max", "0")
                              : write_text(m_path + "/memory.limit_in_bytes", std::to_string(memory_bytes));
  if (m_version == "v1") write_text(m_path + "/memory.memsw.limit_in_bytes", std::to_string(memory_bytes));
  if (!ok && m_version == "v2" && read_text(m_path + "/memory.max").find(std::to_string(memory_bytes)) != std::string::npos)
    ok = true;  // no swap accounting on this host: the memory limit alone holds
  if (!ok) {
    stdfs::remove(m_path, ec);
    throw EnvironmentError(kLib, "cannot set the memory limit of cgroup " + m_path);
  }
}

ProcessCgroup::~ProcessCgroup() {
  if (m_path.empty()) return;
  // Everything left in the group is ours to end; a group with processes cannot be removed.
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::istringstream procs(read_text(m_path + "/cgroup.procs"));
    bool any = false;
    for (pid_t pid; procs >> pid;) {
      ::kill(pid, SIGKILL);
      any = true;
    }
    std::error_code ec;
    if (!any && (stdfs::remove(m_path, ec) || !stdfs::exists(m_path))) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ProcessCgroup::attach(pid_t pid) const {
  if (!write_text(m_path + "/cgroup.procs", std::to_string(pid)))
    throw EnvironmentError(kLib, "cannot move process " + std::to_string(pid) + " into cgroup " + m_path);
}

uint64_t ProcessCgroup::oom_kills() const {
  if (m_version == "v2") return field(read_text(m_path + "/memory.events"), "oom_kill").value_or(0);
  return field(read_text(m_path + "/memory.oom_control"), "oom_kill").value_or(0);
}

std::optional<uint64_t> ProcessCgroup::peak_bytes() const {
  std::string text = read_text(m_path + (m_version == "v2" ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  if (text.empty()) return std::nullopt;
  try {
    return std::stoull(text);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace ptxbench
