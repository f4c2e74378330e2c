// The run's progress display: plain lines (logs, CI) and the redrawn block on a terminal.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "agent/progress.h"
#include "common/error.h"

using namespace ptxbench;

namespace {
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  return out;
}
}  // namespace

TEST(ProgressDisplay, PlainLinesNameTheTrajectoryTurnVerdictAndTotals) {
  std::FILE* f = std::tmpfile();
  ProgressDisplay p({{1, "gemm/contract#0"}, {2, "gemm/params#0"}}, false, f);
  p.on_event({1, 1, TurnPhase::model, "", 0});
  p.on_event({1, 1, TurnPhase::answered, "stop", 1500});
  p.on_event({1, 1, TurnPhase::extract, "EXTRACTION_ERROR", 0});
  p.on_event({2, 1, TurnPhase::verdict, "PASSED", 0});
  p.on_event({2, 1, TurnPhase::done, "PASSED with speedup 1.3 >= target 1.2", 0});
  p.finish();
  std::string out = contents(f);
  std::fclose(f);
  EXPECT_EQ(out.find("model"), std::string::npos) << "phases without news print nothing";
  EXPECT_NE(out.find("[run] gemm/contract#0 turn 1: EXTRACTION_ERROR\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[run] gemm/params#0 turn 1: PASSED\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[run] gemm/params#0 done: PASSED with speedup 1.3"), std::string::npos) << out;
  EXPECT_NE(out.find("trajectories 1/2 done, 2 turns evaluated, 1 PASSED, 1500 tokens"), std::string::npos) << out;
}

// A run on a fake evaluation backend says so in every line: known from the start (a local
// service with fake GPUs), or from the first fake verdict on.
TEST(ProgressDisplay, EveryLineOfAFakeBackendRunSaysFake) {
  std::FILE* f = std::tmpfile();
  ProgressDisplay known({{1, "gemm/params#0"}}, false, f, true);
  known.on_event({1, 1, TurnPhase::extract, "EXTRACTION_ERROR", 0});
  known.on_event({1, 2, TurnPhase::verdict, "PASSED", 0, true});
  known.on_event({1, 2, TurnPhase::done, "PASSED with speedup 1.3 >= target 1.2", 0});
  known.finish();
  std::string out = contents(f);
  std::fclose(f);
  int lines = 0;
  for (std::size_t start = 0; start < out.size();) {
    std::size_t end = out.find('\n', start);
    std::string line = out.substr(start, end - start);
    EXPECT_EQ(line.rfind("[run fake-eval] ", 0), 0u) << line;
    ++lines;
    start = end + 1;
  }
  EXPECT_EQ(lines, 4);
  EXPECT_NE(out.find("(fake evaluation backend: no verdict was measured on a GPU)"), std::string::npos) << out;

  std::FILE* g = std::tmpfile();
  ProgressDisplay learned({{1, "gemm/params#0"}}, false, g);
  learned.on_event({1, 1, TurnPhase::verdict, "COMPILE_ERROR", 0, false});
  learned.on_event({1, 2, TurnPhase::verdict, "PASSED", 0, true});
  std::string seen = contents(g);
  std::fclose(g);
  EXPECT_NE(seen.find("[run] gemm/params#0 turn 1: COMPILE_ERROR\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("[run fake-eval] gemm/params#0 turn 2: PASSED\n"), std::string::npos) << seen;
}

// A notice (a retry, a re-run) goes to its own stream, and on a terminal the block is drawn again
// below it.
TEST(ProgressDisplay, NoticesGoToTheirStreamAndKeepTheBlockWhole) {
  std::FILE* f = std::tmpfile();
  std::FILE* notes = std::tmpfile();
  ProgressDisplay p({{1, "fwd/contract#0"}}, true, f);
  p.on_event({1, 1, TurnPhase::done, "turn budget", 0});
  p.notice("[model] openai m: attempt 1 of 9 failed (HTTP 503); retrying in 1.0 s", notes);
  std::string out = contents(f), said = contents(notes);
  std::fclose(f);
  std::fclose(notes);
  EXPECT_EQ(said, "[model] openai m: attempt 1 of 9 failed (HTTP 503); retrying in 1.0 s\n");
  EXPECT_NE(out.find("\x1b[J"), std::string::npos) << "the block is cleared before the notice";
  EXPECT_GT(out.rfind("trajectories 1/1 done"), out.find("\x1b[J")) << "and drawn again after it";
}

TEST(ProgressDisplay, PhasesHaveNamesAndBadNamesAreRefused) {
  EXPECT_EQ(to_string(TurnPhase::evaluate), "evaluate");
  EXPECT_EQ(parse_turn_phase("verdict"), TurnPhase::verdict);
  try {
    (void)parse_turn_phase("judging");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown turn phase 'judging' (expected model, answered, extract, evaluate, verdict, done or failed)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ProgressDisplay, TerminalRedrawsOneLinePerTrajectoryInFlight) {
  std::FILE* f = std::tmpfile();
  ProgressDisplay p({{1, "fwd/contract#0"}, {2, "bwd/contract#0"}}, true, f);
  p.on_event({1, 2, TurnPhase::evaluate, "", 0});
  p.on_event({2, 1, TurnPhase::done, "turn budget", 0});  // forces a redraw
  p.finish();
  std::string out = contents(f);
  std::fclose(f);
  EXPECT_NE(out.find("\x1b[2K  fwd/contract#0"), std::string::npos) << "in flight: drawn";
  EXPECT_NE(out.find("evaluate"), std::string::npos);
  EXPECT_NE(out.find("\x1b["), std::string::npos) << "cursor movement to redraw in place";
  EXPECT_NE(out.find("trajectories 1/2 done"), std::string::npos);
  // A finished trajectory leaves the block; the last draw lists only the one in flight.
  std::string last = out.substr(out.rfind("\x1b[2F") == std::string::npos ? 0 : out.rfind("\x1b[2F"));
  EXPECT_EQ(last.find("bwd/contract#0"), std::string::npos) << last;
}
