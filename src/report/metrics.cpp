#include "report/metrics.h"

#include <algorithm>

#include "common/stats.h"

namespace ptxbench::report {
namespace {

struct LabelText {
  TurnLabel label;
  const char* name;
  const char* key;
  const char* short_name;
};
constexpr LabelText kLabelText[] = {
    {TurnLabel::correct, "Correct", "correct", "Correct"},
    {TurnLabel::numerical_error, "Numerical error", "numerical_error", "Numerical"},
    {TurnLabel::compilation_error, "Compilation error", "compilation_error", "Compilation"},
    {TurnLabel::runtime_error, "Runtime error", "runtime_error", "Runtime"},
    {TurnLabel::sanitize_timeout, "Sanitize timeout", "sanitize_timeout", "Sanitize TO"},
    {TurnLabel::kernel_timeout, "Kernel execution timeout", "kernel_timeout", "Kernel TO"},
    {TurnLabel::service_timeout, "Service timeout", "service_timeout", "Service TO"},
    {TurnLabel::extraction_error, "Extraction error", "extraction_error", "Extraction"},
    {TurnLabel::other, "Other", "other", "Other"},
    {TurnLabel::infra_error, "Infra error (excluded)", "infra_error", "Infra (excl.)"},
};

// Only the sanitize stage records per-run `timed_out`; its timeout message names the tool too.
bool sanitize_timed_out(const Verdict& v) {
  if (v.stages.sanitize && v.stages.sanitize->timed_out()) return true;
  return v.message.find("compute-sanitizer") != std::string::npos;
}

std::optional<double> max_of_present(const std::vector<std::optional<double>>& v) {
  std::optional<double> m;
  for (const auto& x : v)
    if (x && (!m || *x > *m)) m = x;
  return m;
}

std::optional<double> median_of_present(const std::vector<std::optional<double>>& v, int64_t& n) {
  std::vector<double> present;
  for (const auto& x : v)
    if (x) present.push_back(*x);
  n = static_cast<int64_t>(present.size());
  if (present.empty()) return std::nullopt;
  return median(present);
}

// The rules in the order budget_metrics keeps its per-rule bests.
constexpr std::array<InstructionRule, 3> kRules = {InstructionRule::unrestricted, InstructionRule::paper, InstructionRule::strict};

// part / whole; absent when whole is 0 (a rate over no slots, a mean over no trajectories).
std::optional<double> share(int64_t part, int64_t whole) {
  if (whole == 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(whole);
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b == 0.0) return std::nullopt;
  return *a / *b;
}

}  // namespace

std::string label_name(TurnLabel l) {
  for (const auto& t : kLabelText)
    if (t.label == l) return t.name;
  return "Other";
}

std::string label_short(TurnLabel l) {
  for (const auto& t : kLabelText)
    if (t.label == l) return t.short_name;
  return "Other";
}

std::string label_key(TurnLabel l) {
  for (const auto& t : kLabelText)
    if (t.label == l) return t.key;
  return "other";
}

TurnLabel label_for(const std::string& status, const Verdict* verdict) {
  if (status == "EXTRACTION_ERROR") return TurnLabel::extraction_error;
  if (status == "SERVICE_TIMEOUT") return TurnLabel::service_timeout;
  if (status == "SANITIZE_TIMEOUT") return TurnLabel::sanitize_timeout;  // imported runs (the original's label)
  auto s = parse_status(status);
  if (!s) return TurnLabel::other;
  switch (*s) {
    case Status::PASSED: return TurnLabel::correct;
    case Status::INCORRECT_NUMERICAL: return TurnLabel::numerical_error;
    case Status::COMPILE_ERROR:
    case Status::ABI_ERROR: return TurnLabel::compilation_error;
    case Status::RUNTIME_ERROR:
    case Status::SANITIZER_ERROR: return TurnLabel::runtime_error;
    case Status::TIMEOUT:
      return verdict && sanitize_timed_out(*verdict) ? TurnLabel::sanitize_timeout : TurnLabel::kernel_timeout;
    case Status::INFRA_ERROR: return TurnLabel::infra_error;
    case Status::BANNED_API:
    case Status::TIMING_ANOMALY: return TurnLabel::other;
  }
  return TurnLabel::other;
}

std::vector<LabelRule> label_mapping() {
  struct Row {
    const char* status;
    TurnLabel label;
    const char* note;
  };
  static const Row rows[] = {
      {"PASSED", TurnLabel::correct, "correct on every trial (TIMING_ANOMALY is not)"},
      {"INCORRECT_NUMERICAL", TurnLabel::numerical_error, "output outside the tolerance, NaN, or inputs modified"},
      {"COMPILE_ERROR", TurnLabel::compilation_error, "nvcc/ptxas failed or timed out"},
      {"ABI_ERROR", TurnLabel::compilation_error, "the build produced no loadable ptxb_run entry point (ELF/symbol check)"},
      {"RUNTIME_ERROR", TurnLabel::runtime_error, "the runner crashed, a CUDA call failed, or a call returned an error"},
      {"SANITIZER_ERROR", TurnLabel::runtime_error, "compute-sanitizer memcheck found memory errors (or guard bands were hit)"},
      {"TIMEOUT (sanitize stage)", TurnLabel::sanitize_timeout,
       "TIMEOUT whose verdict has a sanitize run with timed_out: true (or whose message names compute-sanitizer)"},
      {"TIMEOUT (any other stage)", TurnLabel::kernel_timeout,
       "a correctness call, a timing trial or the ncu profile did not finish in time"},
      {"SANITIZE_TIMEOUT", TurnLabel::sanitize_timeout, "only in runs imported from the original PTXBench (its own label)"},
      {"SERVICE_TIMEOUT", TurnLabel::service_timeout,
       "only in imported runs: our service returns no such status (a task it cannot finish comes back INFRA_ERROR, "
       "and an evaluation outlasting the run's eval_timeout_s leaves the turn unjudged)"},
      {"EXTRACTION_ERROR", TurnLabel::extraction_error, "no complete code block defining ptxb_run in the answer (stored by the agent)"},
      {"BANNED_API", TurnLabel::other, "a forbidden API, library or foreign kernel"},
      {"TIMING_ANOMALY", TurnLabel::other,
       "correct output but a time under the roofline floor, work outside the timed calls, or nothing launched"},
      {"OTHER_ERROR", TurnLabel::other, "only in imported runs (the original's 'Other error')"},
      {"any other status", TurnLabel::other, ""},
      {"INFRA_ERROR", TurnLabel::infra_error,
       "ours, not the model's: excluded from every rate's numerator and denominator, counted separately"},
  };
  std::vector<LabelRule> out;
  for (const auto& r : rows) out.push_back({r.status, label_name(r.label), r.note});
  return out;
}

bool counted(const TrajectoryObs& t) {
  return std::any_of(t.turns.begin(), t.turns.end(), [](const TurnObs& o) { return o.label != TurnLabel::infra_error; });
}

bool TurnObs::qualifies(InstructionRule rule) const {
  switch (rule) {
    case InstructionRule::unrestricted: return correct;
    case InstructionRule::paper: return correct && target;
    case InstructionRule::strict: return correct && strict.value_or(false);
  }
  return false;
}

const std::optional<double>& BudgetMetrics::rate(InstructionRule rule) const {
  return rule == InstructionRule::unrestricted ? correctness_rate : rule == InstructionRule::paper ? target_rate : strict_rate;
}

const std::vector<std::optional<double>>& BudgetMetrics::bests(InstructionRule rule) const {
  return rule == InstructionRule::unrestricted ? best : rule == InstructionRule::paper ? best_target : best_strict;
}

const std::optional<double>& BudgetMetrics::max_of_bests(InstructionRule rule) const {
  return rule == InstructionRule::unrestricted ? max_best : rule == InstructionRule::paper ? max_best_target : max_best_strict;
}

const std::optional<double>& BudgetMetrics::median_of_bests(InstructionRule rule) const {
  return rule == InstructionRule::unrestricted ? median_best
         : rule == InstructionRule::paper      ? median_best_target
                                               : median_best_strict;
}

int64_t BudgetMetrics::with_best_of(InstructionRule rule) const {
  return rule == InstructionRule::unrestricted ? with_best : rule == InstructionRule::paper ? with_best_target : with_best_strict;
}

int64_t BudgetMetrics::passed_of(InstructionRule rule) const {
  return rule == InstructionRule::unrestricted ? passed : rule == InstructionRule::paper ? passed_target : passed_strict;
}

std::optional<double> BudgetMetrics::pass_at(int64_t k, InstructionRule rule) const {
  if (!measured) return std::nullopt;
  return pass_at_k(trajectories, passed_of(rule), k);
}

std::string to_string(MissingTurns rule) { return rule == MissingTurns::carry_forward ? "carry_forward" : "not_correct"; }

std::string describe(MissingTurns rule) {
  return rule == MissingTurns::carry_forward
             ? "missing turns carry the last verdict forward (--carry-forward; not the paper's rule)"
             : "missing turns count as not correct (the paper's rule: denominator = trajectories x T)";
}

std::optional<double> pass_at_k(int64_t n, int64_t c, int64_t k) {
  if (k < 1 || k > n || c < 0 || c > n) return std::nullopt;
  if (n - c < k) return 1.0;
  // C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i): no large binomials (Chen et al.'s form).
  double none = 1.0;
  for (int64_t i = n - c + 1; i <= n; ++i) none *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - none;
}

BudgetMetrics budget_metrics(const std::vector<TrajectoryObs>& trajectories, int budget, MissingTurns missing) {
  BudgetMetrics m;
  m.budget = budget;
  m.missing_rule = missing;
  m.measured = budget > 0;
  for (const auto& t : trajectories) {
    if (!counted(t)) continue;
    ++m.trajectories;
    if (t.turn_budget < budget) m.measured = false;
  }
  if (!m.measured) return m;
  for (const auto& t : trajectories) {
    if (!counted(t)) continue;
    std::array<std::optional<double>, kRules.size()> best;  // per rule, in kRules order
    std::array<bool, kRules.size()> passed{};
    BudgetMetrics::Slots mine;
    const auto n = static_cast<int64_t>(t.turns.size());
    for (int64_t slot = 0; slot < budget; ++slot) {
      bool after = slot >= n;
      m.missing_slots += after;
      if (after && missing == MissingTurns::not_correct) {
        ++mine.slots;  // the paper's rule: a turn that was never run is not correct
        continue;
      }
      const TurnObs& o = after ? t.turns.back() : t.turns[static_cast<std::size_t>(slot)];
      m.carried_slots += after;
      if (o.label == TurnLabel::infra_error) {
        ++m.infra_slots;
        continue;
      }
      ++mine.slots;
      mine.correct += o.qualifies(InstructionRule::unrestricted);
      mine.target += o.qualifies(InstructionRule::paper);
      mine.strict += o.qualifies(InstructionRule::strict);
      m.strict_unknown_slots += o.strict_unknown();
      if (after) continue;
      for (std::size_t r = 0; r < kRules.size(); ++r) {
        if (!o.qualifies(kRules[r])) continue;
        passed[r] = true;
        if (o.speedup && (!best[r] || *o.speedup > *best[r])) best[r] = o.speedup;
      }
    }
    m.slots += mine.slots;
    m.correct_slots += mine.correct;
    m.target_slots += mine.target;
    m.strict_slots += mine.strict;
    m.per_trajectory.push_back(mine);
    m.passed += passed[0];
    m.passed_target += passed[1];
    m.passed_strict += passed[2];
    m.best.push_back(best[0]);
    m.best_target.push_back(best[1]);
    m.best_strict.push_back(best[2]);
  }
  m.correctness_rate = share(m.correct_slots, m.slots);
  m.target_rate = share(m.target_slots, m.slots);
  m.strict_rate = share(m.strict_slots, m.slots);
  m.max_best = max_of_present(m.best);
  m.max_best_target = max_of_present(m.best_target);
  m.max_best_strict = max_of_present(m.best_strict);
  m.median_best = median_of_present(m.best, m.with_best);
  m.median_best_target = median_of_present(m.best_target, m.with_best_target);
  m.median_best_strict = median_of_present(m.best_strict, m.with_best_strict);
  return m;
}

double fast_p(const std::vector<std::optional<double>>& bests, double p) {
  if (bests.empty()) return 0.0;
  auto above = std::count_if(bests.begin(), bests.end(), [p](const std::optional<double>& b) { return b && *b > p; });
  return static_cast<double>(above) / static_cast<double>(bests.size());
}

const std::vector<double>& fast_p_grid() {
  static const std::vector<double> grid = {0.0, 0.25, 0.5, 0.75, 0.8, 0.9, 1.0, 1.1, 1.2, 1.5, 2.0, 3.0};
  return grid;
}

LabelCounts label_counts(const std::vector<TrajectoryObs>& trajectories) {
  LabelCounts c;
  for (const auto& t : trajectories)
    for (std::size_t i = 0; i < t.turns.size(); ++i) {
      int l = label_index(t.turns[i].label);
      ++c.total[static_cast<std::size_t>(l)];
      if (c.per_turn.size() <= i) c.per_turn.resize(i + 1);
      ++c.per_turn[i][static_cast<std::size_t>(l)];
    }
  return c;
}

int64_t Transitions::total() const {
  int64_t n = 0;
  for (const auto& row : counts)
    for (auto x : row) n += x;
  return n;
}

Transitions transitions(const std::vector<TrajectoryObs>& trajectories) {
  Transitions tr;
  for (const auto& t : trajectories)
    for (std::size_t i = 1; i < t.turns.size(); ++i)
      ++tr.counts[static_cast<std::size_t>(label_index(t.turns[i - 1].label))]
                 [static_cast<std::size_t>(label_index(t.turns[i].label))];
  return tr;
}

TokenSummary token_summary(const std::vector<TrajectoryObs>& trajectories) {
  TokenSummary s;
  s.trajectories = static_cast<int64_t>(trajectories.size());
  for (const auto& t : trajectories) s.total += t.tokens;
  s.mean_prompt = share(s.total.prompt, s.trajectories);
  s.mean_completion = share(s.total.completion, s.trajectories);
  s.mean_reasoning = share(s.total.reasoning, s.trajectories);
  s.mean_cached = share(s.total.cached, s.trajectories);
  s.mean_total = share(s.total.total(), s.trajectories);
  auto median_of = [&](int64_t (*kind)(const TokenCounts&)) -> std::optional<double> {
    if (trajectories.empty()) return std::nullopt;
    std::vector<double> v;
    for (const auto& t : trajectories) v.push_back(static_cast<double>(kind(t.tokens)));
    return median(v);
  };
  s.median_prompt = median_of([](const TokenCounts& c) { return c.prompt; });
  s.median_completion = median_of([](const TokenCounts& c) { return c.completion; });
  s.median_reasoning = median_of([](const TokenCounts& c) { return c.reasoning; });
  s.median_cached = median_of([](const TokenCounts& c) { return c.cached; });
  s.median_total = median_of([](const TokenCounts& c) { return c.total(); });
  return s;
}

std::vector<TurnReasoning> reasoning_by_turn(const std::vector<TrajectoryObs>& trajectories) {
  std::vector<std::vector<double>> by_turn;
  for (const auto& t : trajectories)
    for (std::size_t i = 0; i < t.turn_tokens.size(); ++i)
      if (t.turn_tokens[i]) {
        if (by_turn.size() <= i) by_turn.resize(i + 1);
        by_turn[i].push_back(static_cast<double>(t.turn_tokens[i]->reasoning));
      }
  std::vector<TurnReasoning> out;
  for (std::size_t i = 0; i < by_turn.size(); ++i) {
    const auto& v = by_turn[i];
    if (v.empty()) continue;
    TurnReasoning r;
    r.turn = static_cast<int64_t>(i) + 1;
    r.calls = static_cast<int64_t>(v.size());
    r.median = median(v);
    double sum = 0.0;
    for (double x : v) sum += x;
    r.mean = sum / static_cast<double>(v.size());
    r.min = static_cast<int64_t>(*std::min_element(v.begin(), v.end()));
    r.max = static_cast<int64_t>(*std::max_element(v.begin(), v.end()));
    out.push_back(r);
  }
  return out;
}

GroupMetrics group_metrics(const std::vector<TrajectoryObs>& trajectories, const std::vector<int>& budgets, MissingTurns missing) {
  GroupMetrics g;
  g.trajectories = static_cast<int64_t>(trajectories.size());
  for (const auto& t : trajectories) {
    for (const auto& o : t.turns) {
      g.correct_turns += o.correct;
      g.strict_unknown_turns += o.strict_unknown();
    }
    if (!counted(t)) continue;
    ++g.counted;
    g.incomplete += t.incomplete;
    g.short_trajectories += static_cast<int64_t>(t.turns.size()) < t.turn_budget;
  }
  for (int b : budgets) g.budgets.push_back(budget_metrics(trajectories, b, missing));
  g.labels = label_counts(trajectories);
  g.transitions = transitions(trajectories);
  g.tokens = token_summary(trajectories);
  g.reasoning = reasoning_by_turn(trajectories);
  return g;
}

TokenRatio token_ratio(const TokenSummary& a, const TokenSummary& b) {
  return {ratio(a.median_prompt, b.median_prompt), ratio(a.median_completion, b.median_completion),
          ratio(a.median_reasoning, b.median_reasoning), ratio(a.median_cached, b.median_cached),
          ratio(a.median_total, b.median_total)};
}

}  // namespace ptxbench::report
