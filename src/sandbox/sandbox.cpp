#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/enum_names.h"
#include "common/error.h"
#include "common/fs.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "sandbox";

constexpr EnumName<Enforcement> kEnforcements[] = {
    {Enforcement::off, "off"}, {Enforcement::best_effort, "best_effort"}, {Enforcement::required, "required"}};

// Failure codes of enter()/drop() (ChildSetup::describe turns them back into words).
enum Code : int { kMountView = 1, kSetGroups = 2, kSetGid = 3, kSetUid = 4, kNoNewPrivs = 5, kCaps = 6 };
constexpr int kMountStepBase = 1000;  // kMountView + the failing step index

uint32_t env_id(const char* name, uint32_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  try {
    return static_cast<uint32_t>(std::stoul(v));
  } catch (...) {
    throw InputError(kLib, std::string("$") + name + " must be a numeric id, not '" + v + "'");
  }
}

bool write_proc(const std::string& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

int drop_all_capabilities() noexcept {
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  return syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

}  // namespace

std::string to_string(Enforcement e) { return enum_name(kEnforcements, e); }

Enforcement parse_enforcement(const std::string& s) { return parse_enum(kEnforcements, s, "sandbox enforcement", kLib); }

ordered_json to_json(const SandboxReport& r) {
  ordered_json j = {{"namespaces", r.namespaces}, {"filesystem_view", r.filesystem_view},
                    {"unprivileged", r.unprivileged}, {"uid", r.uid},
                    {"memory_limit", r.memory_limit}, {"cgroup", r.cgroup}};
  if (!r.notes.empty()) j["notes"] = r.notes;
  return j;
}

uint32_t sandbox_uid() { return env_id("PTXBENCH_SANDBOX_UID", 65534); }
uint32_t sandbox_gid() { return env_id("PTXBENCH_SANDBOX_GID", 65534); }

Sandbox::Sandbox(SandboxPolicy policy, const std::string& cwd) : m_policy(std::move(policy)) {
  for (const auto& name : m_policy.pass_env)
    if (const char* v = std::getenv(name.c_str())) m_env.push_back(name + "=" + v);
  if (m_env.empty()) m_env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  if (m_policy.enforcement == Enforcement::off) {
    m_report.notes.push_back("sandbox disabled (enforcement off)");
    return;
  }
  m_outer_uid = geteuid();
  m_outer_gid = getegid();
  const bool root = m_outer_uid == 0;
  m_userns = !root;
  m_uid = m_policy.uid.value_or(sandbox_uid());
  m_gid = m_policy.gid.value_or(sandbox_gid());
  m_namespaces = true;
  m_view = true;
  m_plan = plan_mount_view(m_policy, cwd, (cache_root() / "sandbox").string());
  if (root && !m_policy.keep_root) {
    // The unprivileged user must be able to write where it works, including what we put there
    // for it (nvcc's keep folder, the tensor spec).
    for (const auto& w : m_policy.writable) {
      if (::chown(w.c_str(), m_uid, m_gid) != 0)
        throw EnvironmentError(kLib, "cannot hand " + w + " to the sandbox user: " + std::strerror(errno));
      std::error_code ec;
      for (auto it = fs::recursive_directory_iterator(w, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (::lchown(it->path().c_str(), m_uid, m_gid) != 0)
          throw EnvironmentError(kLib, "cannot hand " + it->path().string() + " to the sandbox user: " + std::strerror(errno));
    }
  }
  if (m_policy.memory_bytes) {
    std::string version = ProcessCgroup::available();
    if (!version.empty()) {
      m_cgroup = std::make_unique<ProcessCgroup>(*m_policy.memory_bytes);
      m_report.memory_limit = true;
      m_report.cgroup = version;
    } else if (m_policy.enforcement == Enforcement::required) {
      throw EnvironmentError(kLib, "a host-memory limit is required but no memory cgroup can be created here");
    } else {
      m_report.notes.push_back("no memory cgroup on this host: host memory is not limited");
    }
  }
  m_report.namespaces = true;
  m_report.filesystem_view = true;
  m_report.unprivileged = !m_policy.keep_root;
  m_report.uid = root && !m_policy.keep_root ? m_uid : m_outer_uid;
  if (m_policy.keep_root) m_report.notes.push_back("runs as root (this stage needs it); seccomp still applies in the runner");
  if (m_userns) m_report.notes.push_back("not root: a user namespace maps the sandbox to our own user");
}

unsigned long Sandbox::clone_flags() const noexcept {
  if (!m_namespaces) return 0;
  unsigned long f = CLONE_NEWNS;
  if (m_policy.pid_namespace) f |= CLONE_NEWPID;
  if (m_policy.network_namespace) f |= CLONE_NEWNET;
  if (m_policy.ipc_namespace) f |= CLONE_NEWIPC;
  if (m_userns) f |= CLONE_NEWUSER;
  return f;
}

void Sandbox::adopt(int child_pid) {
  if (m_cgroup) m_cgroup->attach(child_pid);
  if (m_namespaces && m_userns) {
    std::string proc = "/proc/" + std::to_string(child_pid);
    bool ok = write_proc(proc + "/setgroups", "deny") &&
              write_proc(proc + "/uid_map", "0 " + std::to_string(m_outer_uid) + " 1") &&
              write_proc(proc + "/gid_map", "0 " + std::to_string(m_outer_gid) + " 1");
    if (!ok) throw EnvironmentError(kLib, "cannot map the user namespace of process " + std::to_string(child_pid));
  }
}

int Sandbox::enter() const noexcept {
  if (!m_view) return 0;
  int step = -1;
  int err = apply_mount_plan(m_plan, step);
  if (err == 0) return 0;
  errno = err;
  return kMountStepBase + step;
}

int Sandbox::drop() const noexcept {
  if (m_policy.enforcement == Enforcement::off) return 0;
  if (m_outer_uid == 0 && !m_policy.keep_root) {
    if (setgroups(0, nullptr) != 0) return kSetGroups;
    if (setresgid(m_gid, m_gid, m_gid) != 0) return kSetGid;
    if (setresuid(m_uid, m_uid, m_uid) != 0) return kSetUid;  // clears every capability
  } else if (m_userns && m_namespaces) {
    if (int e = drop_all_capabilities()) {
      errno = e;
      return kCaps;
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return kNoNewPrivs;
  return 0;
}

std::string Sandbox::describe(int code, int err) const {
  std::string why = std::strerror(err);
  if (code >= kMountStepBase) return "sandbox filesystem view: " + describe_step(m_plan, code - kMountStepBase) + ": " + why;
  switch (code) {
    case kSetGroups: return "sandbox: setgroups: " + why;
    case kSetGid: return "sandbox: setresgid(" + std::to_string(m_gid) + "): " + why;
    case kSetUid: return "sandbox: setresuid(" + std::to_string(m_uid) + "): " + why;
    case kNoNewPrivs: return "sandbox: PR_SET_NO_NEW_PRIVS: " + why;
    case kCaps: return "sandbox: dropping capabilities: " + why;
    default: return "sandbox: step " + std::to_string(code) + ": " + why;
  }
}

bool Sandbox::degrade(const std::string& reason) {
  if (m_policy.enforcement != Enforcement::best_effort || !m_namespaces) return false;
  m_namespaces = m_view = false;
  m_report.namespaces = m_report.filesystem_view = false;
  m_report.notes.push_back("no namespaces or filesystem view (best effort): " + reason);
  return true;
}

std::vector<std::string> Sandbox::environment() const { return m_env; }

bool Sandbox::out_of_memory() const { return m_cgroup && m_cgroup->oom_kills() > 0; }

}  // namespace ptxbench
