// A stand-in candidate library for the runner's exit interception (tests/cpu/runner/
// test_candidate_exit.cpp): it calls exit(), abort() and assert() as a candidate's code would, from
// a call, from its constructor and from its destructor. Built like a candidate: a shared library
// whose exit/abort references the dynamic linker binds at load time.
#undef NDEBUG  // the assert must fire in every build type
#include <cassert>
#include <cstdio>
#include <cstdlib>

namespace {
int g_exit_in_destructor = -1;
}

// Test code, not a candidate: the environment says what the constructor does.
__attribute__((constructor)) static void on_load() {
  if (const char* code = std::getenv("EXIT_PROBE_EXIT_ON_LOAD")) std::exit(std::atoi(code));
}

__attribute__((destructor)) static void on_unload() {
  if (g_exit_in_destructor >= 0) std::exit(g_exit_in_destructor);
}

extern "C" __attribute__((visibility("default"))) void candidate_exit(int code) {
  std::fprintf(stderr, "candidate: giving up with %d\n", code);
  std::exit(code);
}

extern "C" __attribute__((visibility("default"))) void candidate_abort() { std::abort(); }

extern "C" __attribute__((visibility("default"))) void candidate_assert(int ok) {
  assert(ok && "the candidate's own check");
  (void)ok;
}

extern "C" __attribute__((visibility("default"))) void candidate_exit_in_destructor(int code) {
  g_exit_in_destructor = code;
}
