#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>

#include "common/error.h"

extern char** environ;

namespace ptxbench {
namespace {

constexpr const char* kLib = "subprocess";

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw Error(kLib, std::string("pipe2: ") + std::strerror(errno));
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() { close_both(); }
  void close_r() { if (r >= 0) ::close(r); r = -1; }
  void close_w() { if (w >= 0) ::close(w); w = -1; }
  void close_both() { close_r(); close_w(); }
};

// Reported by the child through the status pipe when a step before exec fails.
struct ChildFailure {
  int stage;
  int err;
  int detail;  ///< the ChildSetup's own code for stages kSetupEnter/kSetupDrop
};
constexpr int kSetupEnter = 8, kSetupDrop = 9;

// A ChildSetup step failed (or the clone with namespaces): the sandbox may be weakened and retried.
struct SetupFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
const char* stage_name(int stage) {
  switch (stage) {
    case 1: return "setpgid";
    case 2: return "dup2";
    case 3: return "setrlimit";
    case 5: return "chdir";
    case 6: return "execve";
    case 7: return "waiting for the parent";
    default: return "start";
  }
}

[[noreturn]] void child_fail(int status_fd, int stage, int detail = 0) {
  ChildFailure f{stage, errno, detail};
  ssize_t ignored = ::write(status_fd, &f, sizeof f);
  (void)ignored;
  _exit(127);
}

void mark_cloexec_from(int first) {
#ifdef SYS_close_range
  // CLOSE_RANGE_CLOEXEC = 4
  if (syscall(SYS_close_range, first, ~0U, 4) == 0) return;
#endif
  for (int fd = first; fd < 4096; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void set_limit(int resource, const std::optional<unsigned long>& value, int status_fd) {
  if (!value) return;
  rlimit rl{*value, *value};
  if (setrlimit(resource, &rl) != 0) child_fail(status_fd, 3);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return std::string("killed by signal SIG") + (name ? name : std::to_string(signal).c_str()) +
           " (" + strsignal(signal) + ")";
  }
  return "exited with code " + std::to_string(exit_code);
}

namespace {
// SIGKILLs every other process for which `match(cmdline, proc_dir)` holds; returns how many.
template <class Match>
int kill_processes_where(Match match) {
  int killed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == getpid()) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!match(cmdline, entry.path())) continue;
    if (::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}
}  // namespace

int kill_processes_mentioning(const std::string& marker) {
  if (marker.empty()) return 0;
  return kill_processes_where([&](const std::string& cmdline, const std::filesystem::path&) {
    return cmdline.find(marker) != std::string::npos;
  });
}

int kill_processes_in(const std::string& dir) {
  if (dir.empty()) return 0;
  std::string root = dir.back() == '/' ? dir : dir + "/";
  return kill_processes_where([&](const std::string& cmdline, const std::filesystem::path& proc_dir) {
    if (cmdline.find(root) != std::string::npos) return true;
    std::error_code ec;  // the working directory is read only here: the per-stage sweep needs none
    std::string cwd = std::filesystem::read_symlink(proc_dir / "cwd", ec).string();
    return !ec && (cwd + "/").rfind(root, 0) == 0;
  });
}

namespace {

// The start time (clock ticks since boot) of a live process, or nothing when it is gone or a
// zombie: with the pid, it names one process even after the pid is reused.
std::optional<unsigned long long> live_process_start(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 1));
  std::string state, field;
  fields >> state;  // field 3; the start time is field 22
  for (int i = 4; i < 22 && fields >> field;) ++i;
  unsigned long long start = 0;
  if (state == "Z" || state == "X" || !(fields >> start)) return std::nullopt;
  return start;
}

}  // namespace

void exit_when_orphaned(double poll_s, pid_t owner) {
  const pid_t parent = getppid();
  if (parent == 1) ::kill(getpid(), SIGKILL);  // the tool died before we looked
  std::optional<unsigned long long> owner_start;
  if (owner > 0 && !live_process_start(getpid())) owner = 0;  // no /proc to read: only the parent is watched
  if (owner > 0) {
    owner_start = live_process_start(owner);
    if (!owner_start) ::kill(getpid(), SIGKILL);  // the worker died before we looked
  }
  std::thread([parent, poll_s, owner, owner_start] {
    for (;;) {
      if (getppid() != parent) ::kill(getpid(), SIGKILL);
      if (owner > 0 && live_process_start(owner) != owner_start) ::kill(getpid(), SIGKILL);
      std::this_thread::sleep_for(std::chrono::duration<double>(poll_s));
    }
  }).detach();
}

std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return "";
}

// Drains the child's stdout and stderr on a thread, keeping a head and a tail of each.
struct ChildProcess::Drain {
  struct Stream {
    int fd = -1;
    std::string head, tail;
    std::size_t total = 0;
  };
  Stream streams[2];
  std::size_t half_cap;
  std::mutex mutex;
  bool stop = false;

  void append(Stream& s, const char* data, std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    s.total += n;
    std::size_t to_head = s.head.size() < half_cap ? std::min(n, half_cap - s.head.size()) : 0;
    s.head.append(data, to_head);
    if (n > to_head) {
      s.tail.append(data + to_head, n - to_head);
      if (s.tail.size() > 2 * half_cap + 4096) s.tail.erase(0, s.tail.size() - half_cap);
    }
  }

  void run() {
    char buf[65536];
    for (;;) {
      pollfd fds[2];
      int n = 0;
      for (auto& s : streams)
        if (s.fd >= 0) fds[n++] = {s.fd, POLLIN, 0};
      if (n == 0) return;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (stop) return;
      }
      int rc = ::poll(fds, n, 50);
      if (rc < 0 && errno != EINTR) return;
      for (int i = 0; i < n; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Stream& s = streams[0].fd == fds[i].fd ? streams[0] : streams[1];
        ssize_t got = ::read(s.fd, buf, sizeof buf);
        if (got > 0) {
          append(s, buf, static_cast<std::size_t>(got));
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          // Only this thread writes the fds, but finish_drain() reads them under the lock.
          std::lock_guard<std::mutex> lock(mutex);
          ::close(s.fd);
          s.fd = -1;
        }
      }
    }
  }

  CapturedStream capture(int index) {
    std::lock_guard<std::mutex> lock(mutex);
    const Stream& s = streams[index];
    CapturedStream c;
    c.total_bytes = s.total;
    std::size_t kept_tail = std::min(s.tail.size(), half_cap);
    std::size_t omitted = s.total - s.head.size() - kept_tail;
    c.text = s.head;
    if (omitted > 0)
      c.text += "\n[... " + std::to_string(omitted) + " bytes omitted by ptxbench ...]\n";
    c.text += s.tail.substr(s.tail.size() - kept_tail);
    return c;
  }

  ~Drain() {
    for (auto& s : streams)
      if (s.fd >= 0) ::close(s.fd);
  }
};

namespace {

// The child's environment: the setup's (or ours), then the spec's overrides on top.
std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::vector<std::string> base;
  if (spec.setup) base = spec.setup->environment();
  if (base.empty())
    for (char** e = environ; *e; ++e) base.emplace_back(*e);
  std::vector<std::string> out;
  for (const auto& entry : base) {
    std::string key = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& o : spec.env_overrides) overridden = overridden || o.substr(0, o.find('=')) == key;
    if (!overridden) out.push_back(entry);
  }
  for (const auto& o : spec.env_overrides) out.push_back(o);
  return out;
}

// In the child, from clone to exec. Only system calls and async-signal-safe functions: the parent
// is threaded, and another thread may have held the allocator's lock at the clone.
[[noreturn]] void run_child(const ProcessSpec& spec, const std::string& exe, char* const* argv, char* const* envp,
                            pid_t parent, int devnull, int out_w, int err_w, int status_w, int go_r) {
  if (setpgid(0, 0) != 0) child_fail(status_w, 1);
  if (spec.die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent died before the request took effect (in a new PID namespace getppid() is 0).
    if (getppid() != parent && getppid() != 0) _exit(127);
  }
  if (spec.setup) {
    char go = 0;
    ssize_t got;
    do {
      got = ::read(go_r, &go, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) child_fail(status_w, 7);  // the parent could not adopt us (cgroup) and gave up
    if (int code = spec.setup->enter()) child_fail(status_w, kSetupEnter, code);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, nullptr);
  if (dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) child_fail(status_w, 2);
  if (spec.control_fd >= 0) {
    if (spec.control_fd == 3) {
      fcntl(3, F_SETFD, 0);
    } else if (dup2(spec.control_fd, 3) < 0) {
      child_fail(status_w, 2);
    }
  }
  int keep_status = fcntl(status_w, F_DUPFD_CLOEXEC, 1000);
  mark_cloexec_from(spec.control_fd >= 0 ? 4 : 3);
  if (keep_status >= 0) fcntl(keep_status, F_SETFD, FD_CLOEXEC);
  int sfd = keep_status >= 0 ? keep_status : status_w;
  set_limit(RLIMIT_CORE, spec.limits.core_bytes, sfd);
  set_limit(RLIMIT_NOFILE, spec.limits.open_files, sfd);
  set_limit(RLIMIT_FSIZE, spec.limits.file_size_bytes, sfd);
  set_limit(RLIMIT_CPU, spec.limits.cpu_seconds, sfd);
  set_limit(RLIMIT_DATA, spec.limits.data_bytes, sfd);
  set_limit(RLIMIT_NPROC, spec.limits.processes, sfd);
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) child_fail(sfd, 5);
  if (spec.setup) {
    if (int code = spec.setup->drop()) child_fail(sfd, kSetupDrop, code);
    // A change of user clears the parent-death signal (prctl(2)): arm it again, or a sandboxed
    // runner outlives a killed worker and keeps its GPU busy (seen on the H200, ServiceOnGpu).
    if (spec.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent && getppid() != 0) _exit(127);
    }
  }
  execve(exe.c_str(), argv, envp);
  child_fail(sfd, 6);
}

}  // namespace

ChildProcess::ChildProcess(const ProcessSpec& spec) {
  PTXB_ENSURE(!spec.argv.empty(), kLib, "empty argv");
  std::string exe = find_on_path(spec.argv[0]);
  if (exe.empty()) throw EnvironmentError(kLib, "program not found: " + spec.argv[0]);

  // A sandbox that the host cannot give in full is weakened once (best effort) and retried.
  for (int attempt = 0;; ++attempt) {
    std::string failure;
    bool setup_failed = false;
    try {
      start(spec, exe);
      return;
    } catch (const SetupFailure& f) {
      failure = f.what();
      setup_failed = true;
    }
    if (!setup_failed || attempt > 0 || !spec.setup || !spec.setup->degrade(failure))
      throw EnvironmentError(kLib, "cannot start " + exe + ": " + failure);
  }
}

void ChildProcess::start(const ProcessSpec& spec, const std::string& exe) {
  // Everything the child needs is built before the clone: after it only system calls.
  std::vector<std::string> env_strings = child_environment(spec);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = spec.argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  Pipe out, err, status, go;
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  PTXB_ENSURE(devnull >= 0, kLib, "cannot open /dev/null");

  const pid_t parent = getpid();
  const unsigned long flags = spec.setup ? spec.setup->clone_flags() : 0;
  // A raw clone with namespace flags behaves like fork (the child continues on a copy of the stack).
  pid_t pid = flags ? static_cast<pid_t>(syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, 0)) : fork();
  if (pid < 0) {
    int e = errno;
    ::close(devnull);
    if (flags) throw SetupFailure(std::string("clone with namespaces: ") + std::strerror(e));
    throw Error(kLib, std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) run_child(spec, exe, argv.data(), envp.data(), parent, devnull, out.w, err.w, status.w, go.r);

  ::close(devnull);
  m_pid = pid;
  // Also set here, so that the group exists before we might signal it (racing the child's own call).
  setpgid(pid, pid);
  out.close_w();
  err.close_w();
  status.close_w();
  go.close_r();
  if (spec.setup) {
    try {
      spec.setup->adopt(pid);
    } catch (...) {
      go.close_w();  // the child reads EOF and gives up
      int st = 0;
      ::kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      m_pid = -1;
      throw;
    }
    char ok = 1;
    ssize_t ignored = ::write(go.w, &ok, 1);
    (void)ignored;
  }
  go.close_w();
  ChildFailure failure{};
  ssize_t got;
  do {
    got = ::read(status.r, &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int st = 0;
    waitpid(pid, &st, 0);
    m_pid = -1;
    if (failure.stage == kSetupEnter || failure.stage == kSetupDrop)
      throw SetupFailure(spec.setup->describe(failure.detail, failure.err));
    throw EnvironmentError(kLib, "cannot start " + exe + ": " + stage_name(failure.stage) + ": " +
                                     std::strerror(failure.err));
  }

  m_drain = std::make_unique<Drain>();
  m_drain->half_cap = std::max<std::size_t>(spec.output_cap_bytes / 2, 1024);
  m_drain->streams[0].fd = out.r;
  m_drain->streams[1].fd = err.r;
  out.r = err.r = -1;
  m_drain_thread = std::thread([d = m_drain.get()] { d->run(); });
}

ChildProcess::~ChildProcess() {
  if (m_pid > 0 && !m_status) kill_and_wait();
  finish_drain();
}

std::optional<ExitStatus> ChildProcess::poll_exit() {
  if (m_status) return m_status;
  siginfo_t info{};
  // WNOWAIT leaves the zombie in place, so the group id cannot be reused while we clean it up.
  if (waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid == 0)
    return std::nullopt;
  ::kill(-m_pid, SIGKILL);  // stragglers the child left in its group
  int st = 0;
  waitpid(m_pid, &st, 0);
  ExitStatus s;
  if (WIFSIGNALED(st)) s.signal = WTERMSIG(st);
  else s.exit_code = WEXITSTATUS(st);
  m_status = s;
  return m_status;
}

std::optional<ExitStatus> ChildProcess::wait_for(double timeout_s) {
  auto start = std::chrono::steady_clock::now();
  auto sleep = std::chrono::microseconds(200);
  for (;;) {
    if (auto s = poll_exit()) return s;
    if (timeout_s >= 0) {
      std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
      if (waited.count() >= timeout_s) return std::nullopt;
    }
    std::this_thread::sleep_for(sleep);
    if (sleep < std::chrono::milliseconds(10)) sleep *= 2;
  }
}

ExitStatus ChildProcess::kill_and_wait() {
  if (m_status) return *m_status;
  ::kill(-m_pid, SIGKILL);
  ::kill(m_pid, SIGKILL);
  auto s = wait_for(-1);
  return *s;
}

void ChildProcess::finish_drain() {
  if (!m_drain_thread.joinable()) return;
  // Give the drain a moment to read what is left, then stop it even if a stray process that
  // escaped the group still holds the pipes open.
  for (int i = 0; i < 40; ++i) {
    bool open;
    {
      std::lock_guard<std::mutex> lock(m_drain->mutex);
      open = m_drain->streams[0].fd >= 0 || m_drain->streams[1].fd >= 0;
    }
    if (!open) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    std::lock_guard<std::mutex> lock(m_drain->mutex);
    m_drain->stop = true;
  }
  m_drain_thread.join();
}

CapturedStream ChildProcess::stdout_capture() {
  if (m_status) finish_drain();
  return m_drain->capture(0);
}

CapturedStream ChildProcess::stderr_capture() {
  if (m_status) finish_drain();
  return m_drain->capture(1);
}

ProcessResult run_process(const ProcessSpec& spec, double timeout_s) {
  auto start = std::chrono::steady_clock::now();
  ChildProcess child(spec);
  ProcessResult r;
  auto status = child.wait_for(timeout_s);
  if (!status) {
    r.timed_out = true;
    status = child.kill_and_wait();
  }
  r.status = *status;
  r.out = child.stdout_capture();
  r.err = child.stderr_capture();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace ptxbench
