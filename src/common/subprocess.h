// Child processes owned by RAII handles: own process group, hard kill of the whole group,
// resource limits, an optional ChildSetup (the sandbox: namespaces, filesystem view, identity,
// cgroup; src/sandbox/), and capped capture of stdout/stderr (a child that floods its output is
// truncated, never blocks, never exhausts our memory).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench {

/// Limits applied in the child before exec (setrlimit). Unset fields keep the parent's value.
struct ResourceLimits {
  std::optional<unsigned long> core_bytes = 0;  ///< no core dumps by default
  std::optional<unsigned long> open_files;
  std::optional<unsigned long> file_size_bytes;
  std::optional<unsigned long> cpu_seconds;
  std::optional<unsigned long> data_bytes;      ///< RLIMIT_DATA (heap and private writable maps)
  std::optional<unsigned long> processes;       ///< RLIMIT_NPROC (per user: threads count too)
};

/// Work between clone and exec, prepared in the parent before the clone (everything that
/// allocates), so the child only makes system calls (it is the child of a threaded process).
class ChildSetup {
 public:
  virtual ~ChildSetup() = default;
  /// CLONE_NEW* flags the child is created with; 0: a plain fork.
  [[nodiscard]] virtual unsigned long clone_flags() const noexcept = 0;
  /// In the parent, before the child may go past its first step (e.g. join a cgroup). May throw.
  virtual void adopt(int child_pid) = 0;
  /// In the child, first: namespaces' contents (the filesystem view). 0, or a code for describe();
  /// errno is kept for the message.
  [[nodiscard]] virtual int enter() const noexcept = 0;
  /// In the child, last before exec: identity, privileges. 0 or a code, as enter().
  [[nodiscard]] virtual int drop() const noexcept = 0;
  /// What a failure code of enter()/drop() means, with its errno.
  [[nodiscard]] virtual std::string describe(int code, int err) const = 0;
  /// After a failure of the clone or of enter(): weaken to what the host permits and say why;
  /// false when that is not allowed (the sandbox is required), and the failure stands.
  virtual bool degrade(const std::string& reason) = 0;
  /// The child's whole environment before overrides (names=values); empty: inherit ours.
  [[nodiscard]] virtual std::vector<std::string> environment() const = 0;
};

struct ProcessSpec {
  std::vector<std::string> argv;          ///< argv[0] is looked up on PATH when it has no '/'
  std::vector<std::string> env_overrides; ///< "NAME=value" entries added to (or replacing) ours
  std::string cwd;                        ///< empty: inherit
  ResourceLimits limits;
  /// The sandbox (src/sandbox/sandbox.h), or none. Shared: the caller may read what it recorded.
  std::shared_ptr<ChildSetup> setup;
  std::size_t output_cap_bytes = 1 << 20; ///< bytes kept per stream (head and tail halves)
  int control_fd = -1;                    ///< when >= 0, becomes fd 3 in the child
  /// SIGKILL the child when the thread that started it exits (PR_SET_PDEATHSIG): runners and
  /// workers must not outlive a killed worker or service.
  bool die_with_parent = false;
};

struct ExitStatus {
  int exit_code = -1;  ///< valid when signal == 0
  int signal = 0;      ///< the terminating signal, or 0
  [[nodiscard]] bool success() const noexcept { return signal == 0 && exit_code == 0; }
  [[nodiscard]] std::string describe() const;
};

/// What a stream produced: kept text (head + tail when over the cap) and the true total size.
struct CapturedStream {
  std::string text;
  std::size_t total_bytes = 0;
  [[nodiscard]] bool truncated() const noexcept { return total_bytes > text.size(); }
};

/// A running child. The destructor kills the process group and reaps the child.
class ChildProcess {
 public:
  explicit ChildProcess(const ProcessSpec& spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return m_pid; }
  /// Non-blocking: the exit status once the child has exited.
  std::optional<ExitStatus> poll_exit();
  /// Waits up to timeout_s (negative: forever); nullopt when the child is still running.
  std::optional<ExitStatus> wait_for(double timeout_s);
  /// SIGKILL to the whole process group, then reap.
  ExitStatus kill_and_wait();
  /// Output captured so far; complete once the child and its group have exited.
  [[nodiscard]] CapturedStream stdout_capture();
  [[nodiscard]] CapturedStream stderr_capture();

 private:
  struct Drain;
  void start(const ProcessSpec& spec, const std::string& exe);
  void finish_drain();
  pid_t m_pid = -1;
  std::optional<ExitStatus> m_status;
  std::unique_ptr<Drain> m_drain;
  std::thread m_drain_thread;
};

struct ProcessResult {
  ExitStatus status;
  bool timed_out = false;
  CapturedStream out;
  CapturedStream err;
  double wall_s = 0.0;
};

/// Runs to completion or until timeout_s, then kills the group. Throws only when it cannot start.
ProcessResult run_process(const ProcessSpec& spec, double timeout_s);

/// SIGKILLs every process (other than us) whose command line contains `marker`, for children that
/// left our process group (a tool that re-parents or re-groups its target). Returns how many.
int kill_processes_mentioning(const std::string& marker);

/// SIGKILLs every process (other than us) whose command line names `dir` or whose working
/// directory lies in it: what a killed worker or service left behind in its scratch folders
/// (a session runner's command line names no folder, but it works in one). Returns how many.
int kill_processes_in(const std::string& dir);

/// For a process started by a tool (compute-sanitizer, ncu) rather than by us: a thread that
/// SIGKILLs this process once its parent process has died (it was re-parented) or, when `owner` is
/// given, once that process (the worker that started the tool) has exited, polling every `poll_s`.
/// PR_SET_PDEATHSIG cannot do it here: it follows the parent *thread* that forked, which a tool may
/// end while its target runs; and the parent alone is not enough: compute-sanitizer starts its
/// target under a helper of its own that outlives the tool, so the target is never re-parented.
void exit_when_orphaned(double poll_s = 0.2, pid_t owner = 0);

/// The absolute path of `name` on PATH, or empty.
std::string find_on_path(const std::string& name);

}  // namespace ptxbench
