#include "report/agent_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/enum_names.h"
#include "common/error.h"
#include "common/stats.h"
#include "report/agent_comparison_checks.h"

namespace ptxbench::report {
namespace {

template <class T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

constexpr EnumName<InstructionRule> kRuleKeys[] = {
    {InstructionRule::paper, "paper"}, {InstructionRule::strict, "strict"}, {InstructionRule::unrestricted, "unrestricted"}};

std::size_t rule_slot(InstructionRule rule) {
  for (std::size_t i = 0; i < kComparisonRules.size(); ++i)
    if (kComparisonRules[i] == rule) return i;
  return 0;
}

std::vector<ComparedTrajectory> counted_only(const std::vector<ComparedTrajectory>& ts) {
  std::vector<ComparedTrajectory> out;
  for (const auto& t : ts)
    if (counted(t.obs)) out.push_back(t);
  return out;
}

// The median of values[units[0]], values[units[1]], ...: the statistic of one resample.
ResampleStatistic median_statistic(const std::vector<double>& values) {
  return [&values](const std::vector<std::size_t>& units, std::vector<double>& out) {
    std::vector<double> drawn(units.size());
    for (std::size_t i = 0; i < units.size(); ++i) drawn[i] = values[units[i]];
    out[0] = median_in_place(drawn);
  };
}

ComparisonSide compare_side(const std::string& stream, const std::vector<ComparedTrajectory>& ts, int requests,
                            const BootstrapOptions& options) {
  ComparisonSide s;
  std::vector<TrajectoryObs> obs;
  for (const auto& t : ts) {
    obs.push_back(t.obs);
    if (!counted(t.obs)) continue;
    ++s.counted;
    s.incomplete += t.obs.incomplete;
    for (const auto& o : t.obs.turns) s.strict_unknown_turns += o.strict_unknown();
  }
  s.trajectories = static_cast<int64_t>(ts.size());
  s.tokens = token_summary(obs);
  if (s.counted == 0) return s;
  BudgetMetrics m = budget_metrics(obs, requests);
  if (!m.measured)
    throw InputError("report", fmt::format("a trajectory of {} has fewer than N = {} turns in its run's budget: not measured",
                                           stream, requests));
  for (std::size_t r = 0; r < kComparisonRules.size(); ++r) {
    const InstructionRule rule = kComparisonRules[r];
    RuleBests& b = s.rules[r];
    for (const auto& x : m.bests(rule)) b.bests.push_back(x.value_or(0.0));
    b.median = median(b.bests);
    auto band = bootstrap_intervals(b.bests.size(), 1, median_statistic(b.bests), options, stream + "/" + rule_key(rule));
    b.band = band[0];
    b.with_qualified = m.with_best_of(rule);
    b.median_with_qualified = m.median_of_bests(rule);
    b.max = m.max_of_bests(rule);
  }
  return s;
}

CurveSide curve_side(const std::string& stream, const std::vector<ComparedTrajectory>& counted_ts, const std::vector<double>& grid,
                     const BootstrapOptions& options) {
  CurveSide c;
  c.trajectories = static_cast<int64_t>(counted_ts.size());
  if (counted_ts.empty() || grid.empty()) return c;
  // values[g][t]: trajectory t's best within grid[g] tokens.
  std::vector<std::vector<double>> values(grid.size(), std::vector<double>(counted_ts.size()));
  for (std::size_t t = 0; t < counted_ts.size(); ++t)
    for (std::size_t g = 0; g < grid.size(); ++g) values[g][t] = best_within_tokens(counted_ts[t], grid[g]);
  for (auto column : values) c.median.push_back(median_in_place(column));
  ResampleStatistic statistic = [&values](const std::vector<std::size_t>& units, std::vector<double>& out) {
    std::vector<double> drawn(units.size());
    for (std::size_t g = 0; g < values.size(); ++g) {
      for (std::size_t i = 0; i < units.size(); ++i) drawn[i] = values[g][units[i]];
      out[g] = median_in_place(drawn);
    }
  };
  c.band = bootstrap_intervals(counted_ts.size(), grid.size(), statistic, options, stream);
  return c;
}

double value_at_zero(const std::vector<ComparedTrajectory>& counted_ts) {
  if (counted_ts.empty()) return 0.0;
  std::vector<double> v;
  for (const auto& t : counted_ts) v.push_back(best_within_tokens(t, 0.0));
  return median(v);
}

std::vector<ComparedTrajectory> of_definition(const std::vector<ComparedTrajectory>& ts, const std::string& definition) {
  std::vector<ComparedTrajectory> out;
  for (const auto& t : ts)
    if (definition == kPooledDefinition || t.definition == definition) out.push_back(t);
  return out;
}

ComparedRun compared_run(const Report& r, const RunSummary& s) {
  ComparedRun c;
  c.info = s.info;
  c.num_turns = s.num_turns;
  for (auto i : s.trajectories) {
    const auto& t = r.trajectories[i];
    add_unique(c.definitions, t.info.key.definition);
    if (t.gpu != kUnknownGpu) add_unique(c.gpus, t.gpu);
    add_unique(c.tags, t.info.key.prompt_tag);
    c.provenance += t.provenance;
  }
  return c;
}

}  // namespace

std::string rule_key(InstructionRule rule) { return enum_name(kRuleKeys, rule); }

std::string run_policy(const RunInfo& run) {
  if (run.config.is_object() && run.config.contains("policy") && run.config["policy"].is_string())
    return run.config["policy"].get<std::string>();
  return "";
}

const RuleBests& ComparisonSide::rule(InstructionRule r) const { return rules[rule_slot(r)]; }

std::string comparison_notes(const ComparisonRow& row) {
  std::string s;
  for (const auto* side : {&row.agent, &row.refinement}) {
    std::string part;
    if (int64_t left_out = side->trajectories - side->counted)
      part += fmt::format("{} not counted (no judged turn other than INFRA_ERROR within N; in the token medians only)", left_out);
    if (side->incomplete)
      part += fmt::format("{}{} incomplete (failed or still running short of N: best over the turns run)", part.empty() ? "" : ", ",
                          side->incomplete);
    if (!part.empty()) s += (s.empty() ? "" : "; ") + std::string(side == &row.agent ? "agent: " : "refinement: ") + part;
  }
  return s;
}

std::string fake_mark(const AgentComparison& c) {
  if (!c.fake()) return "";
  return fmt::format("FAKE BACKEND: {} of {} verdicts come from the evaluation service's fake backend (no GPU ran; reported with "
                     "--allow-fake), not from measurements",
                     c.provenance.fake_verdicts, c.provenance.verdicts);
}

ComparedTrajectory compared_trajectory(const TrajectoryDetail& t, int requests) {
  ComparedTrajectory c;
  c.id = t.info.id;
  c.definition = t.info.key.definition;
  c.obs.turn_budget = t.obs.turn_budget;
  std::map<int64_t, int64_t> spent;  // turn -> total tokens of its calls
  for (const auto& rec : t.records) {
    if (rec.turn < 1 || rec.turn > requests) continue;
    c.obs.tokens += tokens_of(rec);
    spent[rec.turn] += tokens_of(rec).total();
  }
  for (std::size_t i = 0; i < t.obs.turn_tokens.size() && i < static_cast<std::size_t>(requests); ++i)
    c.obs.turn_tokens.push_back(t.obs.turn_tokens[i]);
  for (const auto& o : t.obs.turns) {
    if (o.turn > requests) continue;
    c.obs.turns.push_back(o);
    int64_t cumulative = 0;
    for (const auto& [turn, tokens] : spent)
      if (turn <= o.turn) cumulative += tokens;
    c.cumulative_tokens.push_back(cumulative);
  }
  c.obs.incomplete = t.obs.incomplete && static_cast<int64_t>(c.obs.turns.size()) < requests;
  return c;
}

double best_within_tokens(const ComparedTrajectory& t, double x, InstructionRule rule) {
  double best = 0.0;
  for (std::size_t i = 0; i < t.obs.turns.size() && i < t.cumulative_tokens.size(); ++i) {
    const auto& o = t.obs.turns[i];
    if (static_cast<double>(t.cumulative_tokens[i]) <= x && o.qualifies(rule) && o.speedup) best = std::max(best, *o.speedup);
  }
  return best;
}

ComparisonRow comparison_row(const std::string& definition, const std::vector<ComparedTrajectory>& agent,
                             const std::vector<ComparedTrajectory>& refinement, int requests, const BootstrapOptions& options) {
  ComparisonRow row;
  row.definition = definition;
  row.pooled = definition == kPooledDefinition;
  row.agent = compare_side("row/" + definition + "/agent", agent, requests, options);
  row.refinement = compare_side("row/" + definition + "/refinement", refinement, requests, options);
  row.ratio = token_ratio(row.agent.tokens, row.refinement.tokens);
  return row;
}

TokenCurve token_curve(const std::string& definition, const std::vector<ComparedTrajectory>& agent,
                       const std::vector<ComparedTrajectory>& refinement, const BootstrapOptions& options) {
  TokenCurve c;
  c.definition = definition;
  c.pooled = definition == kPooledDefinition;
  auto a = counted_only(agent), b = counted_only(refinement);
  std::set<int64_t> grid;
  for (const auto* side : {&a, &b})
    for (const auto& t : *side)
      for (auto x : t.cumulative_tokens)
        if (x > 0) grid.insert(x);
  for (auto x : grid) c.tokens.push_back(static_cast<double>(x));
  c.agent_at_zero = value_at_zero(a);
  c.refinement_at_zero = value_at_zero(b);
  c.agent = curve_side("curve/" + definition + "/agent", a, c.tokens, options);
  c.refinement = curve_side("curve/" + definition + "/refinement", b, c.tokens, options);
  return c;
}

AgentComparison compare_agent_runs(const RunStore& store, const std::string& agent_run, const std::string& refinement_run,
                                   const AgentComparisonOptions& options) {
  check_comparison_options(options);
  if (agent_run == refinement_run)
    throw InputError("report", "--against names the agent run itself (" + agent_run + "): give the refinement run to compare with");
  // Only the trajectories and their observations are read; the group metrics at budget 1 are unused.
  Report r = build_report(store, {agent_run, refinement_run}, {1}, options.fake);
  AgentComparison c;
  c.store = r.store;
  c.generated_at = r.generated_at;
  c.bootstrap = options.bootstrap;
  c.agent = compared_run(r, r.runs[0]);
  c.refinement = compared_run(r, r.runs[1]);
  c.requests = options.requests ? *options.requests : static_cast<int>(c.agent.num_turns);
  check_requests(c);
  c.definitions = shared_definitions(c.agent, c.refinement);
  for (std::size_t k = 0; k < 2; ++k) {
    ComparedRun& run = k == 0 ? c.agent : c.refinement;
    for (auto i : r.runs[k].trajectories) {
      const auto& t = r.trajectories[i];
      if (std::find(c.definitions.begin(), c.definitions.end(), t.info.key.definition) == c.definitions.end()) continue;
      run.trajectories.push_back(compared_trajectory(t, c.requests));
    }
  }
  c.provenance = c.agent.provenance;
  c.provenance += c.refinement.provenance;
  c.warnings = comparability_warnings(r, c);
  std::vector<std::string> keys = c.definitions;
  if (keys.size() > 1) keys.push_back(kPooledDefinition);
  for (const auto& d : keys) {
    auto a = of_definition(c.agent.trajectories, d), b = of_definition(c.refinement.trajectories, d);
    c.rows.push_back(comparison_row(d, a, b, c.requests, c.bootstrap));
    c.curves.push_back(token_curve(d, a, b, c.bootstrap));
  }
  return c;
}

std::vector<MetricDefinition> agent_comparison_definitions(const AgentComparison& c) {
  const double pct = 100.0 * c.bootstrap.confidence;
  return {
      {"requests", "Evaluation requests N",
       fmt::format("Each trajectory's first N = {} evaluation requests: for the agent run its first N `evaluate` calls (stored as "
                   "turns 1..N by `ptxbench mcp`); for the refinement run its first N turns (one model answer and one evaluation "
                   "each). Turns after N are left out. A trajectory that stopped earlier (the refinement's early stop at the "
                   "speedup target, the agent ending its session, a failure) counts with the turns it ran.",
                   c.requests)},
      {"counted_trajectory", "Counted trajectory", definition_text("counted_trajectory")},
      {"qualified", "Instruction-qualified turn (the paper's rule)",
       "A turn that is PASSED and whose verdict affirms target_instruction.correct: the target instructions (wgmma/TMA on "
       "sm_90a, tcgen05 on sm_100a) were seen executing in the runtime SASS - the rule of the report's target-instruction "
       "metrics (TurnObs::qualifies). Missing SASS data (no target_instruction section, profile skipped, correct not true) is "
       "NOT qualified. A qualified turn without a measured speedup has no speedup to count."},
      {"median_best", "Median best instruction-qualified speedup (Table 3)",
       "Per counted trajectory: the largest speedup (baseline time / candidate time) of its instruction-qualified turns among its "
       "first N requests, and 0 when it has none (the paper's Table 3 convention). The median over the run's counted trajectories, "
       "zeros included, with its bootstrap interval; k/n: k of the n counted trajectories have a qualified timed turn. The report's "
       "Table 1 median is over the trajectories that have one ([n=K]); JSON and CSV give it too (median_with_qualified)."},
      {"strict_target_rule", "Strict rule and unrestricted",
       "The same medians counting only turns whose verdict affirms target_instruction.strict_correct (" + strict_target_rule() +
           "; '*': a lower bound, some correct turns have no strict verdict), and counting every PASSED turn (unrestricted)."},
      {"cumulative_tokens", "Cumulative tokens",
       "Of a trajectory through request k: prompt + completion tokens of every stored model call of its turns 1..k (reasoning is "
       "part of completion, cached part of prompt). For the refinement run, turn k's call is the model answer that produced "
       "candidate k; for the agent run, the usage stored with its k-th evaluate call: the tokens it spent since its previous "
       "evaluation, as the model proxy recorded them. Tokens after request N (and an agent's tokens after its last evaluation) "
       "are not counted."},
      {"token_ratio", "Token ratio (agent / refinement)",
       "The median over ALL trajectories of the agent run (counted or not: their calls cost tokens) of the cumulative tokens "
       "through N, over the same median of the refinement run: a ratio of medians, as the paper's Tables 3 and 8; per definition "
       "and pooled, for each kind (prompt, completion, reasoning, cached, total)."},
      {"token_curve", "Median best speedup within a token budget (Figure 14)",
       "For a shared per-trajectory token budget x: each counted trajectory's best instruction-qualified speedup among its first "
       "N turns whose cumulative tokens are <= x, 0 when none; the curve is the median over the run's counted trajectories. A "
       "step function, exact at every grid point (every distinct positive cumulative token count of a judged turn of either "
       "run) and constant up to the next; x on a log axis. Past a trajectory's tokens through N it reaches its Table 3 best, so "
       "each curve ends at its Table 3 median."},
      {"bootstrap", "Bootstrap bands",
       fmt::format("Pointwise {:g}% percentile bootstrap: B = {} resamples of each run's counted trajectories with replacement "
                   "(n draws of n), the statistic (a median) recomputed on each; the interval is the ceil(B(1-c)/2)-th to the "
                   "ceil(B(1+c)/2)-th smallest resampled value (nearest rank, c = {:g}). Each band covers its own point, not the "
                   "whole curve at once. Deterministic: SplitMix64 seeded with stream_seed(seed = {}, the statistic's name), so "
                   "the same seed gives the same bands and adding a definition moves no other band. The Table 3 medians carry "
                   "the same interval.",
                   pct, c.bootstrap.resamples, c.bootstrap.confidence, c.bootstrap.seed)},
      {"comparable", "Comparable runs",
       "Refused (exit 2) unless both runs gave their trajectories N requests (num_turns >= N) and share a definition; only "
       "the definitions both ran are compared, and the pooled row pools those. Differences that leave the runs comparable are "
       "warnings in every output: budgets that differ above N, definitions only one ran, model labels whose stored calls name no "
       "common model, GPUs, prompt tags, evaluation options off their defaults, runs without token counts, runs still running or "
       "imported."},
      {"fake_backend", "Fake backend", definition_text("fake_backend")},
  };
}

}  // namespace ptxbench::report
