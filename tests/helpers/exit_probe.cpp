// ptxbench-exit-probe: the runner's exit interception (src/runner/candidate_exit.cpp) linked as the
// runner links it (--dynamic-list src/runner/runner_symbols.list), driving a stand-in candidate
// library (exit_probe_candidate.cpp). Used by tests/cpu/runner/test_candidate_exit.cpp.
//
//   ptxbench-exit-probe LIBRARY exit CODE        the library calls exit(CODE) in a call
//   ptxbench-exit-probe LIBRARY abort            ... abort() in a call
//   ptxbench-exit-probe LIBRARY assert           ... a failed assert() in a call (SIGABRT)
//   ptxbench-exit-probe LIBRARY load             loads it (its constructor may exit: the test's environment)
//   ptxbench-exit-probe LIBRARY outside CODE     ... exit(CODE) outside any scope: the C library's exit
//   ptxbench-exit-probe LIBRARY destructor CODE  the runner exits 3; the library's destructor calls exit(CODE)
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runner/candidate_exit.h"

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string mode = argv[2];
  const int code = argc > 3 ? std::atoi(argv[3]) : 0;
  ptxbench::install_candidate_abort_handler();
  ptxbench::set_candidate_exit_report([](const ptxbench::CandidateExit& e) {
    std::printf("report: aborted=%d code=%d loading=%d\n", e.aborted ? 1 : 0, e.code, e.loading ? 1 : 0);
  });
  std::atexit([] { std::printf("runner atexit handler ran\n"); });
  void* lib = nullptr;
  {
    ptxbench::CandidateCodeScope scope(true);
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  auto exit_fn = reinterpret_cast<void (*)(int)>(dlsym(lib, "candidate_exit"));
  auto abort_fn = reinterpret_cast<void (*)()>(dlsym(lib, "candidate_abort"));
  auto assert_fn = reinterpret_cast<void (*)(int)>(dlsym(lib, "candidate_assert"));
  auto destructor_fn = reinterpret_cast<void (*)(int)>(dlsym(lib, "candidate_exit_in_destructor"));
  if (mode == "exit" || mode == "abort" || mode == "assert") {
    ptxbench::CandidateCodeScope scope(false);
    if (mode == "exit") exit_fn(code);
    else if (mode == "abort") abort_fn();
    else assert_fn(0);
    std::printf("the call returned\n");
    return 0;
  }
  if (mode == "load") ptxbench::exit_runner(0);
  if (mode == "outside") exit_fn(code);
  if (mode == "destructor") {
    destructor_fn(code);
    ptxbench::exit_runner(3);
  }
  return 2;
}
