// ptxbench-sandbox-probe: a test helper that does, from inside a sandbox, what a hostile candidate
// would try, and prints what happened one line per attempt ("name: ok" or "name: <errno name>").
//
//   whoami                  uid, pid, ppid, the entries of / and the pids /proc shows
//   peek PID ADDR LEN       read another process's memory through /proc/PID/mem
//   hog MIB                 allocate and touch MIB mebibytes of host memory
//   seccomp PROFILE         install the runner's filter (session | tool_target), then try
//                           forbidden and allowed system calls, then list the recorded violations
//   sleep                   wait 60 s (for tests of what ends it)
//   proc-view               wipe the start-up block and hide /proc as the runner does before a candidate
//                           loads (sandbox/process_traces.h), then read what a detector would, from this
//                           thread and from a thread started afterwards
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/process_traces.h"
#include "sandbox/seccomp_filter.h"

namespace {

void report(const char* what, long rc) {
  if (rc >= 0) std::printf("%s: ok\n", what);
  else std::printf("%s: %s\n", what, strerrorname_np(errno) ? strerrorname_np(errno) : "error");
  std::fflush(stdout);
}

std::vector<std::string> entries(const char* dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir)) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    closedir(d);
  }
  return out;
}

int whoami() {
  std::printf("uid %d\npid %d\nppid %d\n", getuid(), getpid(), getppid());
  std::printf("root:");
  for (const auto& e : entries("/")) std::printf(" %s", e.c_str());
  std::printf("\nprocs:");
  for (const auto& e : entries("/proc"))
    if (e.find_first_not_of("0123456789") == std::string::npos) std::printf(" %s", e.c_str());
  std::printf("\n");
  return 0;
}

int peek(const char* pid, const char* addr, const char* len) {
  std::string path = std::string("/proc/") + pid + "/mem";
  int fd = open(path.c_str(), O_RDONLY);
  report("open mem", fd);
  if (fd < 0) return 0;
  std::vector<char> buf(std::strtoul(len, nullptr, 10));
  ssize_t n = pread(fd, buf.data(), buf.size(), static_cast<off_t>(std::strtoull(addr, nullptr, 0)));
  report("read mem", n);
  if (n > 0) std::printf("data: %.*s\n", static_cast<int>(n), buf.data());
  return 0;
}

int hog(const char* mib) {
  std::size_t total = std::strtoull(mib, nullptr, 10) << 20;
  std::vector<char*> blocks;
  for (std::size_t done = 0; done < total; done += 64 << 20) {
    char* p = static_cast<char*>(std::malloc(64 << 20));
    if (!p) {
      std::printf("malloc failed after %zu MiB\n", done >> 20);
      return 3;
    }
    std::memset(p, 1, 64 << 20);
    blocks.push_back(p);
  }
  std::printf("allocated %zu MiB\n", total >> 20);
  return 0;
}

int try_seccomp(const char* profile) {
  ptxbench::install_seccomp_filter(std::string(profile) == "session" ? ptxbench::SeccompProfile::session
                                                                    : ptxbench::SeccompProfile::tool_target);
  pid_t child = fork();
  if (child == 0) _exit(0);
  if (child > 0) waitpid(child, nullptr, 0);
  report("fork", child);
  bool started = false;
  try {
    std::thread([&] { started = true; }).join();
  } catch (const std::system_error&) {
  }
  std::printf("thread: %s\n", started ? "ok" : "EPERM");
  report("socket", socket(AF_INET, SOCK_STREAM, 0));
  report("ptrace", ptrace(PTRACE_ATTACH, 1, nullptr, nullptr));
  report("mount", mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND, nullptr));
  report("unshare", unshare(CLONE_NEWNS));
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  report("sigaction SIGSYS", sigaction(SIGSYS, &sa, nullptr));
  // The raw instruction, no C library: the filter sees it all the same.
  long rc;
  asm volatile("syscall" : "=a"(rc) : "a"(static_cast<long>(SYS_socket)), "D"(AF_UNIX), "S"(SOCK_STREAM), "d"(0L)
               : "rcx", "r11", "memory");
  if (rc < 0) errno = static_cast<int>(-rc);
  report("raw socket", rc < 0 ? -1 : rc);
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  report("execve", execve("/bin/true", argv, environ));
  report("open /dev/null", open("/dev/null", O_RDONLY));
  std::printf("violations:");
  for (const auto& v : ptxbench::seccomp_violations()) std::printf(" %s", v.c_str());
  std::printf("\n");
  return 0;
}

// Bytes of `path` that are not NUL ("-1" when it cannot be opened).
long visible_bytes(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[4096];
  long n = 0;
  for (long got; (got = ::read(fd, buf, sizeof buf)) > 0;)
    for (long i = 0; i < got; ++i) n += buf[i] != 0;
  ::close(fd);
  return n;
}

int proc_view() {
  std::string wiped = ptxbench::wipe_start_block();
  std::printf("wipe: %s\n", wiped.c_str());
  std::printf("cmdline bytes: %ld\nenviron bytes: %ld\n", visible_bytes("/proc/self/cmdline"), visible_bytes("/proc/self/environ"));
  std::string view = ptxbench::restrict_proc_view();
  std::printf("view: %s\n", view.c_str());
  auto attempt = [](const char* label) {
    for (const char* path : {"/proc/self/maps", "/proc/self/environ", "/proc/self/cmdline", "/proc/self/smaps",
                             "/proc/self/task", "/proc/1/cmdline", "/proc/self/status", "/proc/cpuinfo", "/etc/passwd"}) {
      std::string what = std::string(label) + " " + path;
      report(what.c_str(), ::open(path, O_RDONLY | O_CLOEXEC));
    }
  };
  attempt("main");
  std::thread([&] { attempt("thread"); }).join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "whoami") return whoami();
  if (cmd == "peek" && argc == 5) return peek(argv[2], argv[3], argv[4]);
  if (cmd == "hog" && argc == 3) return hog(argv[2]);
  if (cmd == "seccomp" && argc == 3) return try_seccomp(argv[2]);
  if (cmd == "sleep") return sleep(60) == 0 ? 0 : 1;
  if (cmd == "proc-view") return proc_view();
  std::fprintf(stderr, "usage: ptxbench-sandbox-probe whoami | peek PID ADDR LEN | hog MIB | seccomp PROFILE | sleep\n");
  return 2;
}
