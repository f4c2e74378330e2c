#include "sandbox/seccomp_filter.h"

#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <ucontext.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "common/error.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "seccomp";
constexpr int kMaxRecorded = 32;

std::atomic<int> g_recorded{0};
std::atomic<int> g_numbers[kMaxRecorded];

// Async-signal-safe: records the call and makes it return -EPERM.
void on_sigsys(int, siginfo_t* info, void* context) {
  int n = g_recorded.load(std::memory_order_relaxed);
  bool seen = false;
  for (int i = 0; i < n && i < kMaxRecorded; ++i) seen = seen || g_numbers[i].load() == info->si_syscall;
  if (!seen && n < kMaxRecorded) {
    g_numbers[n].store(info->si_syscall);
    g_recorded.store(n + 1);
  }
#if defined(__x86_64__)
  static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
  static_cast<ucontext_t*>(context)->uc_mcontext.regs[0] = static_cast<unsigned long>(-EPERM);
#endif
}

// System calls no candidate needs and a hostile one would use to reach outside its process.
const char* const kDenied[] = {
    // other processes' memory and descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd", "kcmp",
    // the filesystem view and namespaces
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
    "fsconfig", "fspick", "mount_setattr", "unshare", "setns", "open_by_handle_at", "name_to_handle_at",
    // new processes and programs
    "fork", "vfork", "execve", "execveat",
    // new sockets (the control channel exists already)
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    // the kernel itself
    "bpf", "perf_event_open", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "keyctl", "add_key", "request_key", "userfaultfd",
    // io_uring performs calls that seccomp never sees
    "io_uring_setup", "io_uring_enter", "io_uring_register",
};

struct CtxDeleter {
  void operator()(scmp_filter_ctx c) const { seccomp_release(c); }
};

void add(scmp_filter_ctx ctx, uint32_t action, const char* name, unsigned count = 0,
         scmp_arg_cmp cmp = scmp_arg_cmp{}) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return;  // not a system call of this architecture
  int rc = count ? seccomp_rule_add(ctx, action, nr, count, cmp) : seccomp_rule_add(ctx, action, nr, 0);
  if (rc != 0 && rc != -EEXIST)
    throw EnvironmentError(kLib, std::string("cannot add the rule for ") + name + ": " + std::strerror(-rc));
}

}  // namespace

std::string to_string(SeccompProfile p) { return p == SeccompProfile::session ? "session" : "tool_target"; }

bool seccomp_available() { return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0; }

void install_seccomp_filter(SeccompProfile profile) {
  struct sigaction sa {};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, nullptr) != 0) throw EnvironmentError(kLib, "cannot install the SIGSYS handler");

  std::unique_ptr<void, CtxDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) throw EnvironmentError(kLib, "seccomp_init failed");
  scmp_filter_ctx c = ctx.get();
  // The same rules for the other x86 system-call ABIs (i386 via int 0x80, x32), which would
  // otherwise reach the kernel under different numbers.
#if defined(__x86_64__)
  seccomp_arch_add(c, SCMP_ARCH_X86);
  seccomp_arch_add(c, SCMP_ARCH_X32);
#endif
  seccomp_attr_set(c, SCMP_FLTATR_CTL_TSYNC, 1);
  const uint32_t trap = SCMP_ACT_TRAP;
  for (const char* name : kDenied) add(c, trap, name);
  // New processes (clone without CLONE_THREAD) are trapped and recorded. Threads: the session
  // runner may start none after setup. They fail with a plain EPERM, not a trap: the C library
  // blocks every signal around its clone, and a trap with SIGSYS blocked kills the process.
  add(c, trap, "clone", 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  if (profile == SeccompProfile::session)
    add(c, SCMP_ACT_ERRNO(EPERM), "clone", 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library use clone.
  add(c, SCMP_ACT_ERRNO(ENOSYS), "clone3");
  // Nobody replaces the trap handler (it keeps the record of denied calls).
  add(c, trap, "rt_sigaction", 1, SCMP_A0(SCMP_CMP_EQ, SIGSYS));
  int rc = seccomp_load(c);  // sets no_new_privs first
  if (rc != 0) throw EnvironmentError(kLib, std::string("seccomp_load failed: ") + std::strerror(-rc));
}

std::vector<std::string> seccomp_violations() {
  std::vector<std::string> out;
  int n = std::min(g_recorded.load(), kMaxRecorded);
  for (int i = 0; i < n; ++i) {
    int nr = g_numbers[i].load();
    char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    out.push_back(name ? name : "syscall " + std::to_string(nr));
    std::free(name);
  }
  return out;
}

}  // namespace ptxbench
