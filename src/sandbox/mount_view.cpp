#include "sandbox/mount_view.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include "common/error.h"

namespace ptxbench {
namespace {

namespace stdfs = std::filesystem;

bool under(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

// Builds the step list; remembers what exists in the new root so parents are created once and
// nothing is created inside a read-only bind.
class Planner {
 public:
  explicit Planner(MountPlan& plan) : m_plan(plan) {}

  void add(MountStep::Kind kind, const std::string& source, const std::string& target) {
    m_plan.steps.push_back({kind, source, m_plan.staging + target});
  }

  [[nodiscard]] bool covered(const std::string& path) const {
    for (const auto& b : m_bound)
      if (under(path, b)) return true;
    return false;
  }

  // Creates `dir` and its parents in the new root, unless they already exist there.
  void ensure_dir(const std::string& dir) {
    if (dir.empty() || dir == "/" || m_dirs.count(dir) || covered(dir)) return;
    ensure_dir(stdfs::path(dir).parent_path().string());
    add(MountStep::Kind::mkdir, "", dir);
    m_dirs.insert(dir);
  }

  // Makes `path` (as named on the host) resolve inside the view: symlinks along it are recreated
  // and their targets made visible in turn; the final folder or file is bound. Mount targets never
  // pass through a symlink (an absolute one would lead out of the new root while it is built).
  void expose(const std::string& path, MountStep::Kind bind, int depth = 0) {
    const bool writable = bind == MountStep::Kind::bind_rw;
    if (depth > 16 || (!writable && covered(path))) return;
    std::string prefix;
    for (const auto& part : stdfs::path(path).relative_path()) {
      prefix += "/" + part.string();
      struct stat st {};
      if (lstat(prefix.c_str(), &st) != 0) return;  // missing: nothing to show
      if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        stdfs::path target = stdfs::read_symlink(prefix, ec);
        if (ec) return;
        if (!covered(prefix) && !m_links.count(prefix)) {  // a covered link is visible through its bind
          ensure_dir(stdfs::path(prefix).parent_path().string());
          add(MountStep::Kind::symlink, target.string(), prefix);
          m_links.insert(prefix);
        }
        stdfs::path resolved = target.is_absolute() ? target : stdfs::path(prefix).parent_path() / target;
        expose(resolved.lexically_normal().string() + path.substr(prefix.size()), bind, depth + 1);
        return;
      }
      if (prefix != path) {
        if (!S_ISDIR(st.st_mode)) return;
        continue;
      }
      if (!covered(path)) {
        if (S_ISDIR(st.st_mode)) {
          ensure_dir(path);
        } else {
          ensure_dir(stdfs::path(path).parent_path().string());
          add(MountStep::Kind::touch, "", path);
        }
      }
      add(bind, path, path);  // over a covered path, the mount point exists through that bind
      if (!writable) m_bound.push_back(path);
      return;
    }
  }

 private:
  MountPlan& m_plan;
  std::set<std::string> m_dirs, m_links;
  std::vector<std::string> m_bound;
};

std::vector<std::string> gpu_device_nodes() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : stdfs::directory_iterator("/dev", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("nvidia", 0) == 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int setattr_recursive(const char* target, uint64_t attrs, bool recursive) noexcept {
#ifdef SYS_mount_setattr
  struct mount_attr attr {};
  attr.attr_set = attrs;
  if (syscall(SYS_mount_setattr, AT_FDCWD, target, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr) == 0) return 0;
  if (errno != ENOSYS) return errno;
#endif
  // Older kernels: the top mount only (its submounts keep their flags).
  unsigned long flags = MS_BIND | MS_REMOUNT;
  if (attrs & MOUNT_ATTR_RDONLY) flags |= MS_RDONLY;
  if (attrs & MOUNT_ATTR_NOSUID) flags |= MS_NOSUID;
  if (attrs & MOUNT_ATTR_NODEV) flags |= MS_NODEV;
  return mount(nullptr, target, nullptr, flags, nullptr) == 0 ? 0 : errno;
}

}  // namespace

MountPlan plan_mount_view(const SandboxPolicy& policy, const std::string& cwd, const std::string& staging_parent) {
  MountPlan plan;
  std::error_code ec;
  stdfs::create_directories(stdfs::path(staging_parent) / "root", ec);
  plan.staging = (stdfs::path(staging_parent) / "root").string();
  plan.cwd = cwd;
  Planner p(plan);
  p.add(MountStep::Kind::tmpfs, "mode=755,size=16m", "");

  // Standard folders first: read-only paths under /tmp or /dev then land inside them.
  p.ensure_dir("/dev");
  p.add(MountStep::Kind::tmpfs, "mode=755,size=1m", "/dev");
  std::vector<std::string> devices = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
  if (policy.gpu_devices)
    for (const auto& d : gpu_device_nodes()) devices.push_back(d);
  for (const auto& d : devices) {
    struct stat st {};
    if (stat(d.c_str(), &st) != 0) continue;
    p.add(S_ISDIR(st.st_mode) ? MountStep::Kind::mkdir : MountStep::Kind::touch, "", d);
    p.add(MountStep::Kind::bind_dev, d, d);
  }
  for (const auto& [link, target] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"},
           {"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"}})
    p.add(MountStep::Kind::symlink, target, link);
  std::string tmp_opts = "mode=1777,size=" + std::to_string(policy.tmp_bytes);
  p.add(MountStep::Kind::mkdir, "", "/dev/shm");
  p.add(MountStep::Kind::tmpfs, tmp_opts, "/dev/shm");
  if (policy.proc) {
    p.ensure_dir("/proc");
    p.add(MountStep::Kind::proc, "", "/proc");
  }
  p.ensure_dir("/tmp");
  p.add(MountStep::Kind::tmpfs, tmp_opts, "/tmp");

  std::vector<std::string> ro = policy.read_only;
  std::sort(ro.begin(), ro.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  for (const auto& path : ro)
    if (!path.empty() && path[0] == '/') p.expose(stdfs::path(path).lexically_normal().string(), MountStep::Kind::bind_ro);
  if (policy.sys) p.expose("/sys", MountStep::Kind::bind_ro);

  bool cwd_writable = cwd.empty();
  for (const auto& w : policy.writable) {
    std::string path = stdfs::path(w).lexically_normal().string();
    if (!stdfs::is_directory(path, ec)) throw EnvironmentError("sandbox", "writable folder " + path + " does not exist");
    p.expose(path, MountStep::Kind::bind_rw);
    cwd_writable = cwd_writable || under(stdfs::path(cwd).lexically_normal().string(), path);
  }
  if (!cwd_writable) throw EnvironmentError("sandbox", "working folder " + cwd + " is not among the writable paths");
  p.add(MountStep::Kind::seal_root, "", "");
  return plan;
}

int apply_mount_plan(const MountPlan& plan, int& failed_step) noexcept {
  failed_step = -1;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const MountStep& s = plan.steps[i];
    const char* tgt = s.target.c_str();
    int rc = 0;
    switch (s.kind) {
      case MountStep::Kind::mkdir:
        if (::mkdir(tgt, 0755) != 0 && errno != EEXIST) rc = errno;
        break;
      case MountStep::Kind::touch: {
        int fd = ::open(tgt, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) rc = errno;
        else ::close(fd);
        break;
      }
      case MountStep::Kind::symlink:
        if (::symlink(s.source.c_str(), tgt) != 0 && errno != EEXIST) rc = errno;
        break;
      case MountStep::Kind::bind_ro:
        if (mount(s.source.c_str(), tgt, nullptr, MS_BIND | MS_REC, nullptr) != 0) rc = errno;
        else rc = setattr_recursive(tgt, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true);
        break;
      case MountStep::Kind::bind_rw:
        if (mount(s.source.c_str(), tgt, nullptr, MS_BIND | MS_REC, nullptr) != 0) rc = errno;
        else rc = setattr_recursive(tgt, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true);
        break;
      case MountStep::Kind::bind_dev:
        if (mount(s.source.c_str(), tgt, nullptr, MS_BIND, nullptr) != 0) rc = errno;
        else rc = setattr_recursive(tgt, MOUNT_ATTR_NOSUID, false);
        break;
      case MountStep::Kind::tmpfs:
        if (mount("tmpfs", tgt, "tmpfs", MS_NOSUID | MS_NODEV, s.source.c_str()) != 0) rc = errno;
        break;
      case MountStep::Kind::proc:
        if (mount("proc", tgt, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) rc = errno;
        break;
      case MountStep::Kind::seal_root:
        rc = setattr_recursive(plan.staging.c_str(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, false);
        break;
    }
    if (rc != 0) {
      failed_step = static_cast<int>(i);
      return rc;
    }
  }
  // pivot_root(".", ".") stacks the old root under the new one; detaching "." then drops it.
  if (chdir(plan.staging.c_str()) != 0) return errno;
  if (syscall(SYS_pivot_root, ".", ".") != 0) return errno;
  if (umount2(".", MNT_DETACH) != 0) return errno;
  if (chdir("/") != 0) return errno;
  if (!plan.cwd.empty() && chdir(plan.cwd.c_str()) != 0) return errno;
  return 0;
}

std::string describe_step(const MountPlan& plan, int index) {
  if (index < 0 || index >= static_cast<int>(plan.steps.size())) return "pivot into the new root";
  const MountStep& s = plan.steps[static_cast<std::size_t>(index)];
  std::string target = s.target.substr(std::min(plan.staging.size(), s.target.size()));
  if (target.empty()) target = "/";
  switch (s.kind) {
    case MountStep::Kind::mkdir: return "mkdir " + target;
    case MountStep::Kind::touch: return "create " + target;
    case MountStep::Kind::symlink: return "symlink " + target + " -> " + s.source;
    case MountStep::Kind::bind_ro: return "read-only bind of " + s.source;
    case MountStep::Kind::bind_rw: return "writable bind of " + s.source;
    case MountStep::Kind::bind_dev: return "device " + s.source;
    case MountStep::Kind::tmpfs: return "tmpfs on " + target;
    case MountStep::Kind::proc: return "proc on " + target;
    case MountStep::Kind::seal_root: return "read-only new root";
  }
  return "?";
}

}  // namespace ptxbench
