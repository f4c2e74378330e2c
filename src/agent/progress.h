// The run's progress display: on a terminal, a block redrawn in place (one line per trajectory in
// flight: turn and phase; then totals: trajectories, turns, PASSED, tokens, elapsed); elsewhere
// (logs, CI), one plain line per verdict and per finished trajectory.
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
  /// `labels`: trajectory id → "gemm_n7168_k5120/contract#2". `tty` decides the style.
  ProgressDisplay(std::map<int64_t, std::string> labels, bool tty, std::FILE* out = stdout);
  /// Thread-safe.
  void on_event(const TurnEvent& e);
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
  bool m_tty;
  std::FILE* m_out;
  std::mutex m_mutex;
  int m_turns = 0, m_passed = 0, m_done = 0;
  int64_t m_tokens = 0;
  int m_drawn_lines = 0;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now(), m_last_draw{};
};

}  // namespace ptxbench
