#include "report/agent_comparison_export.h"

#include <fmt/format.h>

#include <map>

#include "report/agent_comparison.h"
#include "report/metrics_json.h"
#include "report/report_export.h"
#include "report/report_format.h"

namespace ptxbench::report {
namespace {

ordered_json interval_json(const std::optional<Interval>& i) {
  return i ? ordered_json{{"lower", i->lower}, {"upper", i->upper}} : ordered_json(nullptr);
}

ordered_json compared_trajectory_json(const ComparedTrajectory& t) {
  ordered_json turns = ordered_json::array();
  for (std::size_t i = 0; i < t.obs.turns.size(); ++i) {
    const auto& o = t.obs.turns[i];
    turns.push_back({{"turn", o.turn}, {"label", label_name(o.label)}, {"qualified", o.qualifies(InstructionRule::paper)},
                     {"strict", o.correct ? (o.strict ? ordered_json(*o.strict) : ordered_json(nullptr)) : ordered_json(false)},
                     {"speedup", optional_json(o.speedup)}, {"cumulative_tokens", t.cumulative_tokens[i]}});
  }
  return {{"id", t.id}, {"definition", t.definition}, {"counted", counted(t.obs)}, {"incomplete", t.obs.incomplete},
          {"tokens_through_n", tokens_json(t.obs.tokens)}, {"turns", turns}};
}

ordered_json compared_run_json(const ComparedRun& run) {
  ordered_json ts = ordered_json::array();
  for (const auto& t : run.trajectories) ts.push_back(compared_trajectory_json(t));
  return {{"id", run.info.id},
          {"status", to_string(run.info.status)},
          {"origin", run.info.origin},
          {"policy", run_policy(run.info)},
          {"model", run.info.model},
          {"name", run.info.notes},
          {"num_turns", run.num_turns},
          {"definitions", run.definitions},
          {"gpus", run.gpus},
          {"prompt_tags", run.tags},
          {"provenance", provenance_json(run.provenance)},
          {"trajectories", ts}};
}

ordered_json side_json(const ComparisonSide& s) {
  ordered_json rules = ordered_json::object();
  for (auto rule : kComparisonRules) {
    const auto& b = s.rule(rule);
    rules[rule_key(rule)] = {{"median_best", optional_json(b.median)},
                             {"band", interval_json(b.band)},
                             {"with_qualified", b.with_qualified},
                             {"median_with_qualified", optional_json(b.median_with_qualified)},
                             {"max", optional_json(b.max)},
                             {"bests", b.bests}};
  }
  return {{"trajectories", s.trajectories},
          {"counted", s.counted},
          {"incomplete", s.incomplete},
          {"strict_unknown_turns", s.strict_unknown_turns},
          {"rules", rules},
          {"median_tokens_through_n", token_medians_json(s.tokens)}};
}

ordered_json curve_side_json(const CurveSide& s, double at_zero) {
  ordered_json lower = ordered_json::array(), upper = ordered_json::array();
  for (const auto& b : s.band) lower.push_back(b.lower), upper.push_back(b.upper);
  return {{"trajectories", s.trajectories}, {"at_zero_tokens", at_zero}, {"median", s.median}, {"lower", lower}, {"upper", upper}};
}

}  // namespace

ordered_json agent_comparison_json(const AgentComparison& c) {
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
  j["agent"] = compared_run_json(c.agent);
  j["refinement"] = compared_run_json(c.refinement);
  j["definitions_compared"] = c.definitions;
  ordered_json rows = ordered_json::array();
  for (const auto& row : c.rows)
    rows.push_back({{"definition", row.definition}, {"pooled", row.pooled}, {"agent", side_json(row.agent)},
                    {"refinement", side_json(row.refinement)}, {"token_ratio", token_ratio_json(row.ratio)}});
  j["rows"] = rows;
  ordered_json curves = ordered_json::array();
  for (const auto& curve : c.curves)
    curves.push_back({{"definition", curve.definition},
                      {"pooled", curve.pooled},
                      {"rule", rule_key(InstructionRule::paper)},
                      {"tokens", curve.tokens},
                      {"agent", curve_side_json(curve.agent, curve.agent_at_zero)},
                      {"refinement", curve_side_json(curve.refinement, curve.refinement_at_zero)}});
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
