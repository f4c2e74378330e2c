#include "report/agent_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/stats.h"
#include "report/report_export.h"
#include "report/report_format.h"

namespace ptxbench::report {
namespace {

// More resamples than this buy no visible precision and cost minutes on a paper-scale run.
constexpr int64_t kMaxResamples = 100000;

template <class T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::string joined(const std::vector<std::string>& v, const std::string& none = "none") {
  if (v.empty()) return none;
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string policy_of(const RunInfo& run) {
  if (run.config.is_object() && run.config.contains("policy") && run.config["policy"].is_string())
    return run.config["policy"].get<std::string>();
  return "";
}

std::size_t rule_slot(InstructionRule rule) {
  for (std::size_t i = 0; i < kComparisonRules.size(); ++i)
    if (kComparisonRules[i] == rule) return i;
  return 0;
}

TokenCounts tokens_of(const TurnRecord& r) {
  if (!r.usage) return {};
  return {r.usage->prompt_tokens, r.usage->completion_tokens, r.usage->reasoning_tokens, r.usage->cached_tokens};
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

std::set<std::pair<std::string, std::string>> option_values(const Provenance& p) {
  std::set<std::pair<std::string, std::string>> s;
  for (const auto& c : p.changed_options) s.insert({c.option, c.value});
  return s;
}

// The model names the stored calls of a run's trajectories record (the zero rows `ptxbench mcp`
// stores without a proxy name the MCP client, not a model, and are left out).
std::vector<std::string> call_models(const Report& r, const RunSummary& run) {
  std::vector<std::string> names;
  for (auto i : run.trajectories)
    for (const auto& rec : r.trajectories[i].records)
      if (rec.usage && !rec.usage->model.empty() && rec.usage->provider != "mcp") add_unique(names, rec.usage->model);
  return names;
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

void check_options(const AgentComparisonOptions& o) {
  if (o.requests && *o.requests < 1) throw InputError("report", "--requests: N is >= 1, got " + std::to_string(*o.requests));
  if (o.bootstrap.resamples < 1 || o.bootstrap.resamples > kMaxResamples)
    throw InputError("report", fmt::format("--bootstrap: B is 1 to {}, got {}", kMaxResamples, o.bootstrap.resamples));
  if (!(o.bootstrap.confidence > 0.0 && o.bootstrap.confidence < 1.0))
    throw InputError("report", fmt::format("--confidence: strictly between 0 and 1, got {}", o.bootstrap.confidence));
}

std::vector<std::string> comparability_warnings(const Report& r, const AgentComparison& c) {
  std::vector<std::string> w;
  const auto& a = c.agent;
  const auto& b = c.refinement;
  if (policy_of(a.info) != kAgentPolicy)
    w.push_back(fmt::format("the agent side {} is not a run of `ptxbench mcp` (policy '{}', not '{}'): compared as the agent anyway",
                            a.info.id, policy_of(a.info), kAgentPolicy));
  if (policy_of(b.info) == kAgentPolicy)
    w.push_back(fmt::format("the refinement side {} is a run of `ptxbench mcp` (policy '{}'): two agents are compared", b.info.id,
                            kAgentPolicy));
  if (a.num_turns != b.num_turns)
    w.push_back(fmt::format("the budgets differ: the agent run allows {} evaluation requests per trajectory, the refinement run "
                            "{} turns; both are compared at their first N = {}",
                            a.num_turns, b.num_turns, c.requests));
  std::vector<std::string> only_a, only_b;
  for (const auto& d : a.definitions)
    if (std::find(b.definitions.begin(), b.definitions.end(), d) == b.definitions.end()) only_a.push_back(d);
  for (const auto& d : b.definitions)
    if (std::find(a.definitions.begin(), a.definitions.end(), d) == a.definitions.end()) only_b.push_back(d);
  if (!only_a.empty() || !only_b.empty())
    w.push_back(fmt::format("the runs ran different definitions: only the {} both ran are compared (left out: agent only {}; "
                            "refinement only {}), and the pooled row pools those",
                            c.definitions.size(), joined(only_a), joined(only_b)));
  if (a.info.model != b.info.model) {
    auto ma = call_models(r, r.runs[0]), mb = call_models(r, r.runs[1]);
    bool shared = std::any_of(ma.begin(), ma.end(), [&](const std::string& m) { return std::find(mb.begin(), mb.end(), m) != mb.end(); });
    if (!shared)
      w.push_back(fmt::format("the model labels differ (agent '{}', refinement '{}') and the stored model calls name no common "
                              "model (agent: {}; refinement: {}): check that both used the same model",
                              a.info.model, b.info.model, joined(ma), joined(mb)));
  }
  if (!a.gpus.empty() && !b.gpus.empty() && a.gpus != b.gpus)
    w.push_back(fmt::format("the GPUs differ: agent {}; refinement {}", joined(a.gpus), joined(b.gpus)));
  if (a.tags != b.tags)
    w.push_back(fmt::format("the prompt tags differ (the task texts differ with them): agent {}; refinement {}", joined(a.tags, "-"),
                            joined(b.tags, "-")));
  if (option_values(a.provenance) != option_values(b.provenance))
    w.push_back(fmt::format("the evaluation options differ: agent: {}; refinement: {}",
                            a.provenance.options_changed() ? describe_changes(a.provenance) : "defaults",
                            b.provenance.options_changed() ? describe_changes(b.provenance) : "defaults"));
  for (const auto* run : {&a, &b}) {
    const char* side = run == &a ? "agent" : "refinement";
    int64_t total = 0;
    for (const auto& t : run->trajectories) total += t.obs.tokens.total();
    if (total == 0 && !run->trajectories.empty())
      w.push_back(fmt::format("the {} run {} records no prompt or completion tokens through request N ({}): its token medians are 0, "
                              "the token ratio is n/a or 0, and its Figure 14 curve sits left of the axis",
                              side, run->info.id,
                              run->info.imported() ? "an imported run holds reasoning tokens only"
                                                   : "no model proxy recorded the agent's calls"));
    if (run->info.status == RunStatus::running)
      w.push_back(fmt::format("the {} run {} is still running: its trajectories may gain turns", side, run->info.id));
    if (run->provenance.imported())
      w.push_back(fmt::format("the {} run {} is imported ({}): not measured here", side, run->info.id, run->info.origin));
  }
  return w;
}

// ---- terminal output

std::string clean(const std::string& s) { return terminal_safe(s); }

std::string wrap(const std::string& text, const std::string& indent, std::size_t cols = 100) {
  return wrap_words(clean(text), indent, cols);
}

std::string speedup_cell(const RuleBests& b) {
  if (!b.median) return "-";
  std::string s = format_number(*b.median, 3);
  if (b.band) s += " [" + format_number(b.band->lower, 3) + ", " + format_number(b.band->upper, 3) + "]";
  return s;
}

std::string qualified_cell(const RuleBests& b, int64_t counted_n) { return fmt::format("{}/{}", b.with_qualified, counted_n); }

// The median with its band, and "*" under the strict rule where it is a lower bound.
std::string rule_cell(const ComparisonSide& s, InstructionRule rule) {
  std::string cell = speedup_cell(s.rule(rule));
  if (rule == InstructionRule::strict && s.strict_unknown_turns > 0 && cell != "-") cell += "*";
  return cell;
}

// A curve's value at x: its value at the largest grid point <= x (the step function).
double curve_value(const TokenCurve& c, const CurveSide& side, double at_zero, double x) {
  auto it = std::upper_bound(c.tokens.begin(), c.tokens.end(), x);
  if (it == c.tokens.begin() || side.median.empty()) return at_zero;
  return side.median[static_cast<std::size_t>(it - c.tokens.begin() - 1)];
}

// 1-2-5 ticks within [lo, hi], then hi itself.
std::vector<double> nice_ticks(double lo, double hi) {
  std::vector<double> t;
  for (double decade = 1.0; decade <= hi * 10; decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (double x = m * decade; x >= lo && x < hi) t.push_back(x);
  t.push_back(hi);
  return t;
}

std::string title_tag(const AgentComparison& c) { return c.fake() ? std::string(" ") + kFakeTag : ""; }

}  // namespace

std::string rule_key(InstructionRule rule) {
  switch (rule) {
    case InstructionRule::paper: return "paper";
    case InstructionRule::strict: return "strict";
    case InstructionRule::unrestricted: return "unrestricted";
  }
  return "paper";
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
  check_options(options);
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
  if (c.requests < 1)
    throw InputError("report", "the agent run " + c.agent.info.id + " states no budget (num_turns) and holds no turn: give --requests N");
  for (const auto* run : {&c.agent, &c.refinement})
    if (run->num_turns < c.requests)
      throw InputError("report", fmt::format("N = {} evaluation requests per trajectory, but the {} run {} allows only {} per "
                                             "trajectory (num_turns): its trajectories were not given N requests, so nothing can "
                                             "be compared at N. Give --requests {} or less",
                                             c.requests, run == &c.agent ? "agent" : "refinement", run->info.id, run->num_turns,
                                             run->num_turns));
  for (const auto& d : c.agent.definitions)
    if (std::find(c.refinement.definitions.begin(), c.refinement.definitions.end(), d) != c.refinement.definitions.end())
      c.definitions.push_back(d);
  if (c.definitions.empty())
    throw InputError("report", fmt::format("the runs share no definition (agent run {}: {}; refinement run {}: {}): nothing to compare",
                                           c.agent.info.id, joined(c.agent.definitions), c.refinement.info.id,
                                           joined(c.refinement.definitions)));
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

// ---- outputs

std::string render_agent_comparison_text(const AgentComparison& c) {
  std::string out = fmt::format("ptxbench report: agent vs refinement - store {} - {}\n\n", clean(c.store), c.generated_at);
  if (c.fake()) out += wrap("*** " + fake_mark(c) + " ***", "") + "\n";
  out += "Runs" + title_tag(c) + "\n";
  {
    std::vector<std::vector<std::string>> rows = {{"", "Run", "Status", "Origin", "Policy", "Model", "num_turns", "Trajectories", "Name"}};
    for (const auto* run : {&c.agent, &c.refinement})
      rows.push_back({run == &c.agent ? "agent" : "refinement", run->info.id, to_string(run->info.status), run->info.origin,
                      policy_of(run->info), run->info.model, std::to_string(run->num_turns), std::to_string(run->trajectories.size()),
                      run->info.notes});
    out += text_table(rows, 9);
  }
  out += "\nWarnings\n";
  if (c.warnings.empty()) out += "  none: same budget, definitions, model, GPU, prompt tags and evaluation options\n";
  for (const auto& w : c.warnings) out += wrap("- " + w, "  ");

  const std::string pct = fmt::format("{:g}%", 100.0 * c.bootstrap.confidence);
  out += "\n" + wrap(fmt::format("Table 3. Agent vs refinement at N = {} evaluation requests per trajectory: median of per-trajectory "
                                 "best instruction-qualified speedups (no qualified turn = 0) [{} bootstrap interval], and the ratio "
                                 "of median cumulative tokens (agent / refinement){}",
                                 c.requests, pct, title_tag(c)),
                     "");
  {
    std::vector<std::vector<std::string>> rows = {{"Definition", "Traj A/R", "Agent", "k/n", "Refinement", "k/n", "Token ratio",
                                                   "Agent tokens", "Refinement tokens"}};
    for (const auto& row : c.rows)
      rows.push_back({row.definition, fmt::format("{} / {}", row.agent.counted, row.refinement.counted),
                      rule_cell(row.agent, InstructionRule::paper),
                      qualified_cell(row.agent.rule(InstructionRule::paper), row.agent.counted),
                      rule_cell(row.refinement, InstructionRule::paper),
                      qualified_cell(row.refinement.rule(InstructionRule::paper), row.refinement.counted),
                      format_optional(row.ratio.total, 3), format_optional(row.agent.tokens.median_total, 0),
                      format_optional(row.refinement.tokens.median_total, 0)});
    out += text_table(rows, 1);
  }
  out += wrap("Traj: counted trajectories. k/n: trajectories with a qualified timed turn. Tokens: median per trajectory of the "
              "cumulative prompt + completion tokens through request N, over all trajectories.",
              "  ");
  for (const auto& row : c.rows)
    if (auto notes = comparison_notes(row); !notes.empty()) out += wrap("Note, " + row.definition + ": " + notes, "  ");

  out += "\nThe same medians under the strict rule and unrestricted (any PASSED turn) [" + pct + " bootstrap interval]\n";
  {
    std::vector<std::vector<std::string>> rows = {{"Definition", "Agent strict", "Refinement strict", "Agent unrestricted",
                                                   "Refinement unrestricted"}};
    for (const auto& row : c.rows)
      rows.push_back({row.definition, rule_cell(row.agent, InstructionRule::strict), rule_cell(row.refinement, InstructionRule::strict),
                      rule_cell(row.agent, InstructionRule::unrestricted), rule_cell(row.refinement, InstructionRule::unrestricted)});
    out += text_table(rows, 1);
  }

  out += "\nToken ratio by kind (median cumulative tokens through N, agent / refinement)\n";
  {
    std::vector<std::vector<std::string>> rows = {{"Definition", "Prompt", "Completion", "Reasoning", "Cached", "Total"}};
    for (const auto& row : c.rows)
      rows.push_back({row.definition, format_optional(row.ratio.prompt, 3), format_optional(row.ratio.completion, 3),
                      format_optional(row.ratio.reasoning, 3), format_optional(row.ratio.cached, 3), format_optional(row.ratio.total, 3)});
    out += text_table(rows, 1);
  }

  out += "\n" + wrap(fmt::format("Figure 14. Median best instruction-qualified speedup within a per-trajectory token budget [{} "
                                 "pointwise bootstrap band], at 1-2-5 token budgets (every step point: --json, --csv, --html){}",
                                 pct, title_tag(c)),
                     "");
  for (const auto& curve : c.curves) {
    out += wrap(fmt::format("{} ({} agent, {} refinement counted trajectories; {} step points)", curve.definition,
                            curve.agent.trajectories, curve.refinement.trajectories, curve.tokens.size()),
                "  ");
    if (curve.tokens.empty()) {
      out += wrap(fmt::format("no turn spent tokens: agent {}, refinement {} at every budget", format_number(curve.agent_at_zero, 3),
                              format_number(curve.refinement_at_zero, 3)),
                  "    ");
      continue;
    }
    std::vector<std::vector<std::string>> rows = {{"Tokens <=", "Agent", "Refinement"}};
    auto cell = [&](const CurveSide& side, double at_zero, double x) {
      if (side.trajectories == 0) return std::string("-");
      auto it = std::upper_bound(curve.tokens.begin(), curve.tokens.end(), x);
      std::string s = format_number(curve_value(curve, side, at_zero, x), 3);
      if (it != curve.tokens.begin()) {
        const auto& band = side.band[static_cast<std::size_t>(it - curve.tokens.begin() - 1)];
        s += " [" + format_number(band.lower, 3) + ", " + format_number(band.upper, 3) + "]";
      }
      return s;
    };
    for (double x : nice_ticks(curve.tokens.front(), curve.tokens.back()))
      rows.push_back({format_number(x, 0), cell(curve.agent, curve.agent_at_zero, x), cell(curve.refinement, curve.refinement_at_zero, x)});
    out += text_table(rows, 0);
  }

  out += "\nDefinitions\n";
  for (const auto& d : agent_comparison_definitions(c)) out += wrap(d.name + ": " + d.text, "  ");
  return out;
}

ordered_json agent_comparison_json(const AgentComparison& c) {
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
  auto interval = [](const std::optional<Interval>& i) {
    return i ? ordered_json{{"lower", i->lower}, {"upper", i->upper}} : ordered_json(nullptr);
  };
  auto kinds = [&](const TokenSummary& s) {
    return ordered_json{{"prompt", opt(s.median_prompt)},       {"completion", opt(s.median_completion)},
                        {"reasoning", opt(s.median_reasoning)}, {"cached", opt(s.median_cached)},
                        {"total", opt(s.median_total)}};
  };
  ordered_json j = {{"schema", kAgentComparisonSchema},
                    {"schema_version", kAgentComparisonSchemaVersion},
                    {"generated_at", c.generated_at},
                    {"store", c.store},
                    {"requests", c.requests},
                    {"bootstrap", {{"resamples", c.bootstrap.resamples}, {"seed", c.bootstrap.seed}, {"confidence", c.bootstrap.confidence},
                                   {"percentiles", "nearest rank"}, {"generator", "SplitMix64, stream_seed(seed, name)"}}}};
  if (c.fake()) j["fake_backend"] = fake_mark(c);
  ordered_json defs = ordered_json::object();
  for (const auto& d : agent_comparison_definitions(c)) defs[d.key] = {{"name", d.name}, {"text", d.text}};
  j["definitions"] = defs;
  j["warnings"] = c.warnings;
  auto run_json = [&](const ComparedRun& run) {
    ordered_json ts = ordered_json::array();
    for (const auto& t : run.trajectories) {
      ordered_json turns = ordered_json::array();
      for (std::size_t i = 0; i < t.obs.turns.size(); ++i) {
        const auto& o = t.obs.turns[i];
        turns.push_back({{"turn", o.turn}, {"label", label_name(o.label)}, {"qualified", o.qualifies(InstructionRule::paper)},
                         {"strict", o.correct ? (o.strict ? ordered_json(*o.strict) : ordered_json(nullptr)) : ordered_json(false)},
                         {"speedup", opt(o.speedup)}, {"cumulative_tokens", t.cumulative_tokens[i]}});
      }
      ts.push_back({{"id", t.id}, {"definition", t.definition}, {"counted", counted(t.obs)}, {"incomplete", t.obs.incomplete},
                    {"tokens_through_n", {{"prompt", t.obs.tokens.prompt}, {"completion", t.obs.tokens.completion},
                                          {"reasoning", t.obs.tokens.reasoning}, {"cached", t.obs.tokens.cached},
                                          {"total", t.obs.tokens.total()}}},
                    {"turns", turns}});
    }
    ordered_json changes = ordered_json::array();
    for (const auto& ch : run.provenance.changed_options)
      changes.push_back({{"option", ch.option}, {"value", ch.value}, {"default", ch.default_value}, {"verdicts", ch.verdicts}});
    return ordered_json{{"id", run.info.id},
                        {"status", to_string(run.info.status)},
                        {"origin", run.info.origin},
                        {"policy", policy_of(run.info)},
                        {"model", run.info.model},
                        {"name", run.info.notes},
                        {"num_turns", run.num_turns},
                        {"definitions", run.definitions},
                        {"gpus", run.gpus},
                        {"prompt_tags", run.tags},
                        {"provenance", {{"verdicts", run.provenance.verdicts}, {"fake_backend_verdicts", run.provenance.fake_verdicts},
                                        {"changed_options", changes}, {"imported_trajectories", run.provenance.imported_trajectories}}},
                        {"trajectories", ts}};
  };
  j["agent"] = run_json(c.agent);
  j["refinement"] = run_json(c.refinement);
  j["definitions_compared"] = c.definitions;
  auto side_json = [&](const ComparisonSide& s) {
    ordered_json rules = ordered_json::object();
    for (auto rule : kComparisonRules) {
      const auto& b = s.rule(rule);
      rules[rule_key(rule)] = {{"median_best", opt(b.median)},
                               {"band", interval(b.band)},
                               {"with_qualified", b.with_qualified},
                               {"median_with_qualified", opt(b.median_with_qualified)},
                               {"max", opt(b.max)},
                               {"bests", b.bests}};
    }
    return ordered_json{{"trajectories", s.trajectories},
                        {"counted", s.counted},
                        {"incomplete", s.incomplete},
                        {"strict_unknown_turns", s.strict_unknown_turns},
                        {"rules", rules},
                        {"median_tokens_through_n", kinds(s.tokens)}};
  };
  ordered_json rows = ordered_json::array();
  for (const auto& row : c.rows)
    rows.push_back({{"definition", row.definition},
                    {"pooled", row.pooled},
                    {"agent", side_json(row.agent)},
                    {"refinement", side_json(row.refinement)},
                    {"token_ratio", {{"prompt", opt(row.ratio.prompt)}, {"completion", opt(row.ratio.completion)},
                                     {"reasoning", opt(row.ratio.reasoning)}, {"cached", opt(row.ratio.cached)},
                                     {"total", opt(row.ratio.total)}}}});
  j["rows"] = rows;
  auto curve_json = [](const CurveSide& s, double at_zero) {
    ordered_json lower = ordered_json::array(), upper = ordered_json::array();
    for (const auto& b : s.band) lower.push_back(b.lower), upper.push_back(b.upper);
    return ordered_json{{"trajectories", s.trajectories}, {"at_zero_tokens", at_zero}, {"median", s.median}, {"lower", lower}, {"upper", upper}};
  };
  ordered_json curves = ordered_json::array();
  for (const auto& curve : c.curves)
    curves.push_back({{"definition", curve.definition},
                      {"pooled", curve.pooled},
                      {"rule", rule_key(InstructionRule::paper)},
                      {"tokens", curve.tokens},
                      {"agent", curve_json(curve.agent, curve.agent_at_zero)},
                      {"refinement", curve_json(curve.refinement, curve.refinement_at_zero)}});
  j["curves"] = curves;
  return j;
}

std::string agent_comparison_csv(const AgentComparison& c) {
  std::string out = "agent_run,refinement_run,definition,side,rule,metric,tokens,value,lower,upper,metric_definition,provenance\n";
  const std::string runs = csv_field(c.agent.info.id) + "," + csv_field(c.refinement.info.id) + ",";
  const std::string flags = csv_field(provenance_flags(c.provenance));
  std::map<std::string, std::string> defs;
  for (const auto& d : agent_comparison_definitions(c)) defs[d.key] = csv_field(d.text);
  auto num = [](double v) { return fmt::format("{:.6g}", v); };
  auto o = [&](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
  auto row = [&](const std::string& definition, const std::string& side, const std::string& rule, const std::string& metric,
                 const std::string& tokens, const std::string& value, const std::string& lower, const std::string& upper,
                 const std::string& def) {
    out += runs + csv_field(definition) + "," + side + "," + rule + "," + metric + "," + tokens + "," + value + "," + lower + "," + upper +
           "," + defs[def] + "," + flags + "\n";
  };
  row("", "", "", "requests", "", std::to_string(c.requests), "", "", "requests");
  for (const auto& r : c.rows) {
    for (const auto* side : {&r.agent, &r.refinement}) {
      const std::string name = side == &r.agent ? "agent" : "refinement";
      row(r.definition, name, "", "trajectories", "", std::to_string(side->trajectories), "", "", "token_ratio");
      row(r.definition, name, "", "counted_trajectories", "", std::to_string(side->counted), "", "", "counted_trajectory");
      for (auto rule : kComparisonRules) {
        const auto& b = side->rule(rule);
        const std::string key = rule_key(rule);
        row(r.definition, name, key, "median_best_speedup", "", o(b.median), b.band ? num(b.band->lower) : "",
            b.band ? num(b.band->upper) : "", "median_best");
        row(r.definition, name, key, "with_qualified", "", std::to_string(b.with_qualified), "", "", "median_best");
        row(r.definition, name, key, "median_with_qualified", "", o(b.median_with_qualified), "", "", "median_best");
        row(r.definition, name, key, "max_best_speedup", "", o(b.max), "", "", "median_best");
      }
      const std::pair<const char*, std::optional<double>> medians[] = {
          {"prompt", side->tokens.median_prompt}, {"completion", side->tokens.median_completion},
          {"reasoning", side->tokens.median_reasoning}, {"cached", side->tokens.median_cached}, {"total", side->tokens.median_total}};
      for (const auto& [kind, v] : medians) row(r.definition, name, "", std::string("median_tokens_") + kind, "", o(v), "", "", "cumulative_tokens");
    }
    const std::pair<const char*, std::optional<double>> ratios[] = {{"prompt", r.ratio.prompt},       {"completion", r.ratio.completion},
                                                                    {"reasoning", r.ratio.reasoning}, {"cached", r.ratio.cached},
                                                                    {"total", r.ratio.total}};
    for (const auto& [kind, v] : ratios) row(r.definition, "", "", std::string("token_ratio_") + kind, "", o(v), "", "", "token_ratio");
  }
  for (const auto& curve : c.curves)
    for (const auto* side : {&curve.agent, &curve.refinement}) {
      const std::string name = side == &curve.agent ? "agent" : "refinement";
      row(curve.definition, name, "paper", "curve_at_zero_tokens", "0",
          num(side == &curve.agent ? curve.agent_at_zero : curve.refinement_at_zero), "", "", "token_curve");
      for (std::size_t g = 0; g < side->median.size(); ++g)
        row(curve.definition, name, "paper", "curve_median_best_speedup", num(curve.tokens[g]), num(side->median[g]), num(side->band[g].lower),
            num(side->band[g].upper), "bootstrap");
    }
  return out;
}

}  // namespace ptxbench::report
