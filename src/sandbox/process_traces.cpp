#include "sandbox/process_traces.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "common/fd.h"

namespace ptxbench {

std::string wipe_start_block() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces and parentheses): the 3rd field onward.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return "not wiped: /proc/self/stat unreadable";
  std::istringstream fields(stat.substr(close + 1));
  std::vector<unsigned long long> f;
  for (std::string tok; fields >> tok;) f.push_back(std::strtoull(tok.c_str(), nullptr, 10));
  // proc(5): arg_start, arg_end, env_start, env_end are fields 48-51, i.e. f[45..48].
  if (f.size() < 49) return "not wiped: this kernel's /proc/self/stat has no argument and environment bounds";
  const unsigned long long arg_start = f[45], arg_end = f[46], env_start = f[47], env_end = f[48];
  std::size_t wiped = 0;
  for (auto [from, to] : {std::pair{arg_start, arg_end}, std::pair{env_start, env_end}})
    if (from && to > from) {
      std::memset(reinterpret_cast<void*>(from), 0, to - from);
      wiped += to - from;
    }
  return "wiped " + std::to_string(wiped) + " bytes of start-up arguments and environment";
}

namespace {

long create_ruleset(const landlock_ruleset_attr* attr, std::size_t size, uint32_t flags) {
  return ::syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

// Allows `access` beneath `path` (files: only the file rights). Absent paths are skipped.
void allow(int ruleset, const std::string& path, uint64_t access) {
  Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd.valid()) return;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return;
  landlock_path_beneath_attr rule{};
  rule.allowed_access = S_ISDIR(st.st_mode) ? access : (access & LANDLOCK_ACCESS_FS_READ_FILE);
  rule.parent_fd = fd.get();
  if (rule.allowed_access) ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::string restrict_proc_view() {
  const long abi = create_ruleset(nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return std::string("visible: no Landlock on this kernel (") + std::strerror(errno) + ")";
  const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = read;  // only reading is restricted; writes stay as the sandbox set them
  Fd ruleset(static_cast<int>(create_ruleset(&attr, sizeof attr, 0)));
  if (!ruleset.valid()) return std::string("visible: Landlock refused a ruleset (") + std::strerror(errno) + ")";
  for (const auto& top : entries("/"))
    if (top != "proc") allow(ruleset.get(), "/" + top, read);
  // In /proc: the system's entries (driver, sys, cpuinfo, ...), not the processes.
  for (const auto& name : entries("/proc"))
    if (!all_digits(name) && name != "self" && name != "thread-self") allow(ruleset.get(), "/proc/" + name, read);
  // Of this process: what CUDA and the C library read (status, stat, fd, limits, ...), not what
  // shows how it was started or what is mapped into it.
  static const std::set<std::string> kHidden = {"maps",   "smaps", "smaps_rollup", "numa_maps", "map_files",
                                                "environ", "cmdline", "auxv", "mem", "pagemap", "task",
                                                "syscall", "stack", "exe", "cwd", "root", "mountinfo", "mounts",
                                                "mountstats"};
  const std::string self = "/proc/" + std::to_string(::getpid());
  for (const auto& name : entries(self))
    if (!kHidden.count(name)) allow(ruleset.get(), self + "/" + name, read);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return std::string("visible: no_new_privs refused (") + std::strerror(errno) + ")";
  if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
    return std::string("visible: Landlock refused to restrict (") + std::strerror(errno) + ")";
  return "hidden (Landlock ABI " + std::to_string(abi) + ")";
}

}  // namespace ptxbench
