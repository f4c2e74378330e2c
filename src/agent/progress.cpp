#include "agent/progress.h"

#include <fmt/format.h>

namespace ptxbench {

ProgressDisplay::ProgressDisplay(std::map<int64_t, std::string> labels, bool tty, std::FILE* out, bool fake)
    : m_labels(std::move(labels)), m_tty(tty), m_out(out), m_fake(fake) {}

std::string ProgressDisplay::prefix_locked() const { return m_fake ? "[run fake-eval]" : "[run]"; }

std::string ProgressDisplay::prefix() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return prefix_locked();
}

bool ProgressDisplay::fake() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_fake;
}

std::string ProgressDisplay::totals_locked() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  return fmt::format("trajectories {}/{} done, {} turns evaluated, {} PASSED, {} tokens, {:.0f} s elapsed{}", m_done,
                     m_labels.size(), m_turns, m_passed, m_tokens, elapsed,
                     m_fake ? " (fake evaluation backend: no verdict was measured on a GPU)" : "");
}

void ProgressDisplay::notice(const std::string& line, std::FILE* notices) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_tty && m_drawn_lines > 0) {
    // Clear the block, print the line where it stood, and draw the block again below it.
    std::fputs(fmt::format("\x1b[{}F\x1b[J", m_drawn_lines).c_str(), m_out);
    std::fflush(m_out);
    m_drawn_lines = 0;
  }
  fmt::print(notices, "{}\n", line);
  std::fflush(notices);
  if (m_tty) redraw_locked(true);
}

void ProgressDisplay::on_event(const TurnEvent& e) {
  std::lock_guard<std::mutex> lock(m_mutex);
  Line& l = m_lines[e.trajectory_id];
  l.turn = e.turn;
  l.phase = e.phase;
  if (e.fake) m_fake = true;
  const bool judged = e.phase == TurnPhase::verdict || (e.phase == TurnPhase::extract && e.detail == kExtractionErrorStatus);
  const bool ended = e.phase == TurnPhase::done || e.phase == TurnPhase::failed;
  if (e.phase == TurnPhase::answered) m_tokens += e.tokens;
  if (judged) {
    ++m_turns;
    l.last_status = e.detail;
    if (e.detail == to_string(Status::PASSED)) ++m_passed;
  }
  if (ended && !l.finished) {
    l.finished = true;
    ++m_done;
  }
  if (m_tty) {
    redraw_locked(ended);
    return;
  }
  std::string label = m_labels.count(e.trajectory_id) ? m_labels.at(e.trajectory_id) : std::to_string(e.trajectory_id);
  if (judged)
    fmt::print(m_out, "{} {} turn {}: {}\n", prefix_locked(), label, e.turn, e.detail);
  else if (ended)
    fmt::print(m_out, "{} {} {}{}  ({})\n", prefix_locked(), label, to_string(e.phase), e.detail.empty() ? "" : ": " + e.detail,
               totals_locked());
  else
    return;
  std::fflush(m_out);
}

void ProgressDisplay::redraw_locked(bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && now - m_last_draw < std::chrono::milliseconds(250)) return;
  m_last_draw = now;
  std::string block;
  if (m_drawn_lines > 0) block += fmt::format("\x1b[{}F", m_drawn_lines);  // back to the block's first line
  int lines = 0;
  for (const auto& [id, l] : m_lines) {
    if (l.finished || lines >= 24) continue;
    std::string label = m_labels.count(id) ? m_labels.at(id) : std::to_string(id);
    block += fmt::format("\x1b[2K  {:<44} turn {:>2}  {:<9} last: {}\n", label, l.turn, to_string(l.phase),
                         l.last_status.empty() ? "-" : l.last_status);
    ++lines;
  }
  block += "\x1b[2K" + totals_locked() + "\n";
  ++lines;
  for (int extra = lines; extra < m_drawn_lines; ++extra) block += "\x1b[2K\n";  // clear what the last draw left
  m_drawn_lines = std::max(lines, m_drawn_lines);
  std::fputs(block.c_str(), m_out);
  std::fflush(m_out);
}

void ProgressDisplay::finish() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_tty) redraw_locked(true);
  else fmt::print(m_out, "{} {}\n", prefix_locked(), totals_locked());
  std::fflush(m_out);
}

}  // namespace ptxbench
