// The run's progress display: on a terminal, a block redrawn in place (one line per trajectory in
// flight: turn and phase; then totals: trajectories, turns, PASSED, tokens, elapsed); elsewhere
// (logs, CI), one plain line per verdict and per finished trajectory. A run whose evaluations come
// from a fake backend (no GPU) says "fake" in every line, so nobody mistakes its verdicts for
// measurements.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "agent/turn_loop.h"

namespace ptxbench {

class ProgressDisplay {
 public:
  /// `labels`: trajectory id → "gemm_n7168_k5120/contract#2". `tty` decides the style. `fake`:
  /// the evaluation backend is known to be fake from the start; a fake verdict also sets it.
  ProgressDisplay(std::map<int64_t, std::string> labels, bool tty, std::FILE* out = stdout, bool fake = false);
  /// Thread-safe.
  void on_event(const TurnEvent& e);
  /// A line for the person watching (a retry, a re-run), on `notices` (stderr); on a terminal the
  /// block is cleared first and redrawn after it. Thread-safe.
  void notice(const std::string& line, std::FILE* notices = stderr);
  /// "[run]", or "[run fake-eval]" once the evaluation backend is known to be fake.
  [[nodiscard]] std::string prefix() const;
  [[nodiscard]] bool fake() const;
  /// The final totals line (and a last redraw on a terminal).
  void finish();

 private:
  struct Line {
    int64_t turn = 0;
    TurnPhase phase = TurnPhase::model;
    std::string last_status;
    bool finished = false;
  };
  void redraw_locked(bool force);
  [[nodiscard]] std::string totals_locked() const;
  std::map<int64_t, std::string> m_labels;
  std::map<int64_t, Line> m_lines;
  [[nodiscard]] std::string prefix_locked() const;
  bool m_tty;
  std::FILE* m_out;
  bool m_fake;
  mutable std::mutex m_mutex;
  int m_turns = 0, m_passed = 0, m_done = 0;
  int64_t m_tokens = 0;
  int m_drawn_lines = 0;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now(), m_last_draw{};
};

}  // namespace ptxbench
