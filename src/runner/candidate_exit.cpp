#include "runner/candidate_exit.h"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "runner/runner_exit.h"

namespace ptxbench {
namespace {

struct Scope {
  bool loading = false;
};
thread_local Scope t_scope_storage;
thread_local Scope* t_scope = nullptr;  // &t_scope_storage inside a scope

std::function<void(const CandidateExit&)>& exit_report() {
  static std::function<void(const CandidateExit&)> report;
  return report;
}

using ExitFunction = void (*)(int);
using AbortFunction = void (*)();
template <class F>
F next_definition(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}
// The C library's own, looked up before main (before the system-call filter is installed).
const ExitFunction g_next_exit = next_definition<ExitFunction>("exit");
const AbortFunction g_next_abort = next_definition<AbortFunction>("abort");

std::atomic<int> g_exit_calls{0};
std::atomic<int> g_runner_status{0};

[[noreturn]] void end_candidate(const CandidateExit& e) {
  t_scope = nullptr;  // whatever the report does, it is the runner's code
  std::fflush(stdout);
  std::fprintf(stderr, "ptxbench-runner: %s\n", e.describe().c_str());
  if (auto& report = exit_report()) {
    try {
      report(e);
    } catch (...) {
    }
  }
  std::fflush(nullptr);
  _exit(kRunnerCallFailedExit);
}

// Async-signal-safe: write(2) of fixed text, then _exit.
void on_sigabrt(int) {
  if (Scope* s = t_scope) {
    static const char kCall[] = "ptxbench-runner: the candidate aborted (SIGABRT, a failed assert?) during a call\n";
    static const char kLoad[] =
        "ptxbench-runner: the candidate aborted (SIGABRT, a failed assert?) while its library was loading\n";
    const char* text = s->loading ? kLoad : kCall;
    ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
    _exit(kRunnerCallFailedExit);
  }
  // Not candidate code: die of the signal as before (it is blocked here, so it lands on return).
  signal(SIGABRT, SIG_DFL);
  raise(SIGABRT);
}

}  // namespace

std::string CandidateExit::describe() const {
  std::string what = aborted ? "called abort()" : "called exit(" + std::to_string(code) + ")";
  return "the candidate " + what + (loading ? " while its library was loading" : " during a call");
}

CandidateCodeScope::CandidateCodeScope(bool loading) {
  t_scope_storage = Scope{loading};
  t_scope = &t_scope_storage;
}

CandidateCodeScope::~CandidateCodeScope() { t_scope = nullptr; }

bool candidate_code_running() noexcept { return t_scope != nullptr; }

void set_candidate_exit_report(std::function<void(const CandidateExit&)> report) {
  exit_report() = std::move(report);
}

void install_candidate_abort_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigabrt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGABRT, &sa, nullptr);
}

void exit_runner(int status) { std::exit(status); }

}  // namespace ptxbench

// The definitions candidate libraries bind to (exported by runner_symbols.list).

extern "C" void exit(int status) noexcept {
  using namespace ptxbench;
  if (Scope* s = t_scope) end_candidate(CandidateExit{false, status, s->loading});
  // Called again while the exit handlers run (a candidate's static destructor): the first call's
  // status stands.
  if (g_exit_calls.fetch_add(1) > 0) {
    std::fflush(nullptr);
    _exit(g_runner_status.load());
  }
  g_runner_status.store(status);
  if (g_next_exit) g_next_exit(status);
  _exit(status);
}

extern "C" void abort() noexcept {
  using namespace ptxbench;
  if (Scope* s = t_scope) end_candidate(CandidateExit{true, SIGABRT, s->loading});
  if (g_next_abort) g_next_abort();
  _exit(128 + SIGABRT);
}
