#include "report/report_export.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/report_format.h"

namespace ptxbench::report {
namespace {

ordered_json opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

ordered_json tokens_json(const TokenCounts& t) {
  return {{"prompt", t.prompt}, {"completion", t.completion}, {"reasoning", t.reasoning}, {"cached", t.cached}, {"total", t.total()}};
}

ordered_json token_summary_json(const TokenSummary& s) {
  return {{"trajectories", s.trajectories},
          {"total", tokens_json(s.total)},
          {"mean_per_trajectory",
           {{"prompt", opt(s.mean_prompt)},
            {"completion", opt(s.mean_completion)},
            {"reasoning", opt(s.mean_reasoning)},
            {"cached", opt(s.mean_cached)},
            {"total", opt(s.mean_total)}}},
          {"median_per_trajectory",
           {{"prompt", opt(s.median_prompt)},
            {"completion", opt(s.median_completion)},
            {"reasoning", opt(s.median_reasoning)},
            {"cached", opt(s.median_cached)},
            {"total", opt(s.median_total)}}}};
}

ordered_json reasoning_json(const std::vector<TurnReasoning>& by_turn) {
  ordered_json a = ordered_json::array();
  for (const auto& x : by_turn)
    a.push_back({{"turn", x.turn}, {"calls", x.calls}, {"median", x.median}, {"mean", x.mean}, {"min", x.min}, {"max", x.max}});
  return a;
}

ordered_json ratio_json(const TokenRatio& r) {
  return {{"prompt", opt(r.prompt)}, {"completion", opt(r.completion)}, {"reasoning", opt(r.reasoning)}, {"cached", opt(r.cached)},
          {"total", opt(r.total)}};
}

std::vector<int64_t> counted_ids(const Report& r, const Group& g) {
  std::vector<int64_t> ids;
  for (auto i : g.members)
    if (counted(r.trajectories[i].obs)) ids.push_back(r.trajectories[i].info.id);
  return ids;
}

ordered_json fast_json(const std::vector<std::optional<double>>& bests) {
  ordered_json p = ordered_json::array(), v = ordered_json::array();
  for (double x : fast_p_grid()) {
    p.push_back(x);
    v.push_back(fast_p(bests, x));
  }
  return {{"p", p}, {"value", v}};
}

// How each target-instruction rule's metrics are named in JSON and CSV, and the definition that
// states them. The paper-rule names are the published ones; the strict ones sit beside them.
struct RuleNames {
  InstructionRule rule;
  const char* rate;
  const char* best;
  const char* fast;
  const char* per_trajectory;
  const char* rate_definition;
  const char* best_definition;
  const char* fast_definition;
};
constexpr RuleNames kRuleNames[] = {
    {InstructionRule::unrestricted, "turn_correctness_rate", "best_speedup", "fast_p", "best", "turn_correctness_rate",
     "best_speedup", "fast_p"},
    {InstructionRule::paper, "target_correctness_rate", "best_target_speedup", "fast_inst_p", "best_target",
     "target_correctness_rate", "best_target_speedup", "fast_p"},
    {InstructionRule::strict, "strict_correctness_rate", "best_strict_speedup", "fast_inst_strict_p", "best_strict",
     "strict_target_rule", "strict_target_rule", "strict_target_rule"},
};

ordered_json budget_json(const BudgetMetrics& m, const std::vector<int64_t>& ids) {
  ordered_json j = {{"T", m.budget}, {"measured", m.measured}, {"trajectories", m.trajectories}};
  if (!m.measured) {
    j["why"] = "T is above the run's num_turns: not measured";
    return j;
  }
  j["slots"] = m.slots;
  j["infra_slots"] = m.infra_slots;
  j["carried_slots"] = m.carried_slots;
  j["correct_slots"] = m.correct_slots;
  j["target_slots"] = m.target_slots;
  j["strict_slots"] = m.strict_slots;
  j["strict_unknown_slots"] = m.strict_unknown_slots;
  for (const auto& n : kRuleNames) j[n.rate] = opt(m.rate(n.rule));
  for (const auto& n : kRuleNames)
    j[n.best] = {{"max", opt(m.max_of_bests(n.rule))}, {"median", opt(m.median_of_bests(n.rule))}, {"with_best", m.with_best_of(n.rule)}};
  for (const auto& n : kRuleNames) j[n.fast] = fast_json(m.bests(n.rule));
  ordered_json per = ordered_json::array();
  for (std::size_t i = 0; i < m.best.size() && i < ids.size(); ++i) {
    ordered_json t = {{"trajectory", ids[i]}};
    for (const auto& n : kRuleNames) t[n.per_trajectory] = opt(m.bests(n.rule)[i]);
    per.push_back(t);
  }
  j["per_trajectory"] = per;
  return j;
}

ordered_json provenance_json(const Provenance& p) {
  ordered_json changes = ordered_json::array();
  for (const auto& c : p.changed_options)
    changes.push_back({{"option", c.option}, {"value", c.value}, {"default", c.default_value}, {"verdicts", c.verdicts}});
  return {{"verdicts", p.verdicts},
          {"fake_backend_verdicts", p.fake_verdicts},
          {"changed_options", changes},
          {"imported_trajectories", p.imported_trajectories}};
}

ordered_json labels_json(const std::array<int64_t, kLabelCount>& counts) {
  ordered_json j = ordered_json::object();
  for (auto l : kAllLabels) j[label_name(l)] = counts[static_cast<std::size_t>(label_index(l))];
  return j;
}

}  // namespace

ordered_json report_json(const Report& r) {
  ordered_json j = {{"schema", kReportSchema}, {"schema_version", kReportSchemaVersion}, {"generated_at", r.generated_at},
                    {"store", r.store}, {"budgets", r.budgets}, {"group_by", to_string(r.by)}};
  ordered_json defs = ordered_json::object();
  for (const auto& d : metric_definitions()) defs[d.key] = {{"name", d.name}, {"text", d.text}};
  j["definitions"] = defs;
  ordered_json mapping = ordered_json::array();
  for (const auto& m : label_mapping()) mapping.push_back({{"status", m.status}, {"label", m.label}, {"note", m.note}});
  j["label_mapping"] = mapping;
  j["rates"] = "fractions in [0, 1]; speedups are baseline time / candidate time";
  j["provenance"] = provenance_json(r.provenance);
  if (r.provenance.fake()) j["fake_backend"] = fake_mark(r);

  ordered_json runs = ordered_json::array();
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& s = r.runs[i];
    runs.push_back({{"label", "R" + std::to_string(i + 1)}, {"id", s.info.id}, {"status", to_string(s.info.status)},
                    {"origin", s.info.origin}, {"language", s.language}, {"model", s.info.model}, {"name", s.info.notes}, {"num_turns", s.num_turns}, {"condition", s.condition},
                    {"trajectories", s.trajectories.size()}, {"config", s.info.config}});
  }
  j["runs"] = runs;

  auto group_json = [&](const Group& g) {
    auto ids = counted_ids(r, g);
    ordered_json budgets = ordered_json::array();
    for (const auto& m : g.metrics.budgets) budgets.push_back(budget_json(m, ids));
    ordered_json per_turn = ordered_json::array();
    for (const auto& c : g.metrics.labels.per_turn) per_turn.push_back(labels_json(c));
    ordered_json tr = ordered_json::array();
    for (auto a : kAllLabels)
      for (auto b : kAllLabels)
        if (auto n = g.metrics.transitions.counts[static_cast<std::size_t>(label_index(a))][static_cast<std::size_t>(label_index(b))])
          tr.push_back({{"from", label_name(a)}, {"to", label_name(b)}, {"count", n}});
    ordered_json members = ordered_json::array();
    for (auto i : g.members) members.push_back(r.trajectories[i].info.id);
    return ordered_json{{"run", g.run_id},
                      {"language", g.language},
                      {"model", g.model},
                      {"definition", g.definition},
                      {"tag", r.by == GroupBy::tag ? ordered_json(g.tag) : ordered_json(nullptr)},
                      {"gpu", g.gpu},
                      {"pooled", g.pooled},
                      {"trajectories", g.metrics.trajectories},
                      {"counted", g.metrics.counted},
                      {"incomplete", g.metrics.incomplete},
                      {"correct_turns", g.metrics.correct_turns},
                      {"strict_unknown_turns", g.metrics.strict_unknown_turns},
                      {"provenance", provenance_json(g.provenance)},
                      {"budgets", budgets},
                      {"turn_labels", {{"total", labels_json(g.metrics.labels.total)}, {"per_turn", per_turn}}},
                      {"transitions", tr},
                      {"tokens", token_summary_json(g.metrics.tokens)},
                      {"reasoning_by_turn", reasoning_json(g.metrics.reasoning)},
                      {"members", members}};
  };
  ordered_json groups = ordered_json::array();
  for (const auto& g : r.groups) groups.push_back(group_json(g));
  j["groups"] = groups;
  // CUDA-PTX beside Triton: every reported run of a language pooled (run ""; report_data.h).
  ordered_json languages = ordered_json::array();
  for (const auto& g : r.language_groups) languages.push_back(group_json(g));
  j["languages"] = languages;

  ordered_json comparisons = ordered_json::array();
  for (const auto& c : r.comparisons)
    comparisons.push_back({{"reference_run", c.reference_run}, {"run", c.run}, {"definition", c.definition},
                           {"reference_tokens", token_summary_json(c.reference)}, {"run_tokens", token_summary_json(c.other)},
                           {"ratio", ratio_json(c.ratio)}});
  j["comparisons"] = comparisons;

  ordered_json trajectories = ordered_json::array();
  for (const auto& t : r.trajectories) {
    ordered_json turns = ordered_json::array();
    for (std::size_t k = 0; k < t.records.size(); ++k) {
      const auto& rec = t.records[k];
      ordered_json tj = {{"turn", rec.turn}, {"step", to_string(rec.step)}, {"status", rec.status}, {"judged", bool(t.judged[k])}};
      if (t.judged[k]) tj["label"] = label_name(t.labels[k]);
      tj["correct"] = rec.correct;
      tj["target_instruction"] = rec.correct && rec.target_instruction;
      // Strict: true / false, or null when a correct turn's verdict holds no strict verdict.
      tj["strict_target_instruction"] = rec.verdict && rec.verdict->tensor_core_coverage
                                            ? ordered_json(rec.correct && rec.verdict->target_instruction_strict)
                                            : rec.correct ? ordered_json(nullptr) : ordered_json(false);
      tj["tensor_core_coverage"] = rec.verdict ? opt(rec.verdict->tensor_core_coverage) : ordered_json(nullptr);
      tj["fake_backend"] = rec.verdict && from_fake_backend(*rec.verdict);
      tj["speedup"] = opt(rec.speedup);
      tj["gpu"] = rec.verdict ? verdict_gpu(*rec.verdict) : "";
      TokenCounts tc;
      if (rec.usage) tc = {rec.usage->prompt_tokens, rec.usage->completion_tokens, rec.usage->reasoning_tokens, rec.usage->cached_tokens};
      tj["tokens"] = tokens_json(tc);
      tj["latency_s"] = rec.usage ? ordered_json(rec.usage->latency_s) : ordered_json(nullptr);
      tj["candidate_sha256"] = rec.candidate_sha256 ? ordered_json(*rec.candidate_sha256) : ordered_json(nullptr);
      turns.push_back(tj);
    }
    trajectories.push_back({{"id", t.info.id},
                            {"run", t.info.run_id},
                            {"model", t.model},
                            {"definition", t.info.key.definition},
                            {"workload", t.info.key.workload_uuid},
                            {"prompt_tag", t.info.key.prompt_tag},
                            {"index", t.info.key.index},
                            {"gpu", t.gpu},
                            {"status", to_string(t.info.status)},
                            {"stop_reason", t.info.stop_reason},
                            {"counted", counted(t.obs)},
                            {"incomplete", t.obs.incomplete},
                            {"best_speedup", opt(t.info.best_speedup)},
                            {"best_target_speedup", opt(t.info.best_target_speedup)},
                            {"tokens", tokens_json(t.obs.tokens)},
                            {"provenance", provenance_json(t.provenance)},
                            {"turns", turns}});
  }
  j["trajectories"] = trajectories;
  return j;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string report_csv(const Report& r) {
  std::string out =
      "run,model,definition,tag,gpu,trajectories,metric,budget,p,label,to_label,other_run,value,metric_definition,provenance,language\n";
  auto num = [](double v) { return fmt::format("{:.6g}", v); };
  // The groups of each run, then the language groups (run empty: every run of the language pooled).
  std::vector<const Group*> all;
  for (const auto& g : r.groups) all.push_back(&g);
  for (const auto& g : r.language_groups) all.push_back(&g);
  for (const Group* gp : all) {
    const Group& g = *gp;
    std::string key = csv_field(g.run_id) + "," + csv_field(g.model) + "," + csv_field(g.definition) + "," + csv_field(g.tag) + "," +
                      csv_field(g.gpu) + "," +
                      std::to_string(g.metrics.counted) + ",";
    std::string flags = csv_field(provenance_flags(g.provenance));
    auto row = [&](const std::string& metric, const std::string& budget, const std::string& p, const std::string& label,
                   const std::string& to, const std::string& value, const std::string& def) {
      out += key + metric + "," + budget + "," + p + "," + csv_field(label) + "," + csv_field(to) + ",," + value + "," +
             csv_field(definition_text(def)) + "," + flags + "," + csv_field(g.language) + "\n";
    };
    auto o = [&](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
    row("trajectories_not_counted", "", "", "", "", std::to_string(g.metrics.trajectories - g.metrics.counted), "counted_trajectory");
    row("trajectories_incomplete", "", "", "", "", std::to_string(g.metrics.incomplete), "carry_forward");
    row("strict_unknown_turns", "", "", "", "", std::to_string(g.metrics.strict_unknown_turns), "strict_target_rule");
    row("verdicts", "", "", "", "", std::to_string(g.provenance.verdicts), "fake_backend");
    row("fake_backend_verdicts", "", "", "", "", std::to_string(g.provenance.fake_verdicts), "fake_backend");
    for (const auto& c : g.provenance.changed_options)
      row("evaluation_option_changed", "", "", c.option + " = " + c.value, "default " + c.default_value, std::to_string(c.verdicts),
          "evaluation_options");
    for (const auto& m : g.metrics.budgets) {
      std::string T = std::to_string(m.budget);
      if (!m.measured) {
        row("turn_correctness_rate", T, "", "", "", "", "budget");
        continue;
      }
      row("slots", T, "", "", "", std::to_string(m.slots), "turn_correctness_rate");
      row("infra_slots", T, "", "", "", std::to_string(m.infra_slots), "turn_correctness_rate");
      row("carried_slots", T, "", "", "", std::to_string(m.carried_slots), "carry_forward");
      row("strict_unknown_slots", T, "", "", "", std::to_string(m.strict_unknown_slots), "strict_target_rule");
      for (const auto& n : kRuleNames) {
        row(n.rate, T, "", "", "", o(m.rate(n.rule)), n.rate_definition);
        row(std::string(n.best) + "_max", T, "", "", "", o(m.max_of_bests(n.rule)), n.best_definition);
        row(std::string(n.best) + "_median", T, "", "", "", o(m.median_of_bests(n.rule)), n.best_definition);
        row(std::string(n.best) + "_with_best", T, "", "", "", std::to_string(m.with_best_of(n.rule)), n.best_definition);
      }
      for (double p : fast_p_grid())
        for (const auto& n : kRuleNames) row(n.fast, T, num(p), "", "", num(fast_p(m.bests(n.rule), p)), n.fast_definition);
    }
    for (auto l : kAllLabels)
      row("turn_label_count", "", "", label_name(l), "", std::to_string(g.metrics.labels.total[static_cast<std::size_t>(label_index(l))]),
          "turn_labels");
    for (auto a : kAllLabels)
      for (auto b : kAllLabels)
        if (auto n = g.metrics.transitions.counts[static_cast<std::size_t>(label_index(a))][static_cast<std::size_t>(label_index(b))])
          row("transition_count", "", "", label_name(a), label_name(b), std::to_string(n), "transitions");
    const auto& s = g.metrics.tokens;
    const std::pair<const char*, std::pair<int64_t, std::optional<double>>> kinds[] = {
        {"prompt", {s.total.prompt, s.mean_prompt}},       {"completion", {s.total.completion, s.mean_completion}},
        {"reasoning", {s.total.reasoning, s.mean_reasoning}}, {"cached", {s.total.cached, s.mean_cached}},
        {"total", {s.total.total(), s.mean_total}}};
    for (const auto& [kind, v] : kinds) {
      row(std::string("tokens_") + kind + "_sum", "", "", "", "", std::to_string(v.first), "tokens");
      row(std::string("tokens_") + kind + "_mean_per_trajectory", "", "", "", "", o(v.second), "tokens");
    }
    const std::pair<const char*, std::optional<double>> medians[] = {
        {"prompt", s.median_prompt}, {"completion", s.median_completion}, {"reasoning", s.median_reasoning},
        {"cached", s.median_cached}, {"total", s.median_total}};
    for (const auto& [kind, v] : medians) row(std::string("tokens_") + kind + "_median_per_trajectory", "", "", "", "", o(v), "tokens");
    for (const auto& x : g.metrics.reasoning) {
      std::string turn = "turn " + std::to_string(x.turn);
      row("reasoning_tokens_by_turn_median", "", "", turn, "", num(x.median), "reasoning_by_turn");
      row("reasoning_tokens_by_turn_calls", "", "", turn, "", std::to_string(x.calls), "reasoning_by_turn");
    }
  }
  const std::string flags = csv_field(provenance_flags(r.provenance));
  for (const auto& c : r.comparisons) {
    const std::pair<const char*, std::optional<double>> kinds[] = {{"prompt", c.ratio.prompt},
                                                                   {"completion", c.ratio.completion},
                                                                   {"reasoning", c.ratio.reasoning},
                                                                   {"cached", c.ratio.cached},
                                                                   {"total", c.ratio.total}};
    for (const auto& [kind, v] : kinds)
      out += csv_field(c.reference_run) + ",," + csv_field(c.definition) + ",,,," + "token_ratio_" + kind + ",,,,," +
             csv_field(c.run) + "," + (v ? num(*v) : "") + "," + csv_field(definition_text("token_ratio")) + "," + flags + ",\n";
  }
  return out;
}

}  // namespace ptxbench::report
