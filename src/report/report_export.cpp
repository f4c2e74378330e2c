#include "report/report_export.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/metrics_json.h"
#include "report/report_format.h"

namespace ptxbench::report {
namespace {

ordered_json reasoning_json(const std::vector<TurnReasoning>& by_turn) {
  ordered_json a = ordered_json::array();
  for (const auto& x : by_turn)
    a.push_back({{"turn", x.turn}, {"calls", x.calls}, {"median", x.median}, {"mean", x.mean}, {"min", x.min}, {"max", x.max}});
  return a;
}

std::vector<int64_t> counted_ids(const Report& r, const Group& g) {
  std::vector<int64_t> ids;
  for (auto i : g.members)
    if (counted(r.trajectories[i].obs)) ids.push_back(r.trajectories[i].info.id);
  return ids;
}

ordered_json interval_json(const std::optional<Interval>& iv) {
  return iv ? ordered_json::array({iv->lower, iv->upper}) : ordered_json(nullptr);
}

ordered_json fast_json(const std::vector<std::optional<double>>& bests, const BudgetIntervals& iv, InstructionRule rule) {
  ordered_json p = ordered_json::array(), v = ordered_json::array(), lo = ordered_json::array(), hi = ordered_json::array();
  for (double x : fast_p_grid()) {
    p.push_back(x);
    v.push_back(fast_p(bests, x));
    auto i = iv.fast_of(rule, x);
    lo.push_back(i ? ordered_json(i->lower) : ordered_json(nullptr));
    hi.push_back(i ? ordered_json(i->upper) : ordered_json(nullptr));
  }
  return {{"p", p}, {"value", v}, {"lower", lo}, {"upper", hi}};
}

// How each target-instruction rule's metrics are named in JSON and CSV, and the definition that
// states them. The paper-rule names are the published ones; the strict ones sit beside them.
struct RuleNames {
  InstructionRule rule;
  const char* rate;
  const char* best;
  const char* fast;
  const char* pass;
  const char* per_trajectory;
  const char* rate_definition;
  const char* best_definition;
  const char* fast_definition;
};
constexpr RuleNames kRuleNames[] = {
    {InstructionRule::unrestricted, "turn_correctness_rate", "best_speedup", "fast_p", "pass_at_k", "best", "turn_correctness_rate",
     "best_speedup", "fast_p"},
    {InstructionRule::paper, "target_correctness_rate", "best_target_speedup", "fast_inst_p", "target_pass_at_k", "best_target",
     "target_correctness_rate", "best_target_speedup", "fast_p"},
    {InstructionRule::strict, "strict_correctness_rate", "best_strict_speedup", "fast_inst_strict_p", "strict_pass_at_k",
     "best_strict", "strict_target_rule", "strict_target_rule", "strict_target_rule"},
};

// A strict value where no correct slot has a strict verdict is unknown: null, never a lower bound.
bool unknown(const BudgetMetrics& m, InstructionRule rule) { return rule == InstructionRule::strict && m.strict_unknown_only(); }

ordered_json budget_json(const BudgetMetrics& m, const BudgetIntervals& iv, const std::vector<int64_t>& ids,
                         const std::vector<int>& pass_k) {
  ordered_json j = {{"T", m.budget}, {"measured", m.measured}, {"trajectories", m.trajectories}};
  if (!m.measured) {
    j["why"] = "T is above the run's num_turns: not measured";
    return j;
  }
  j["slots"] = m.slots;
  j["infra_slots"] = m.infra_slots;
  j["missing_turns"] = to_string(m.missing_rule);
  j["missing_slots"] = m.missing_slots;
  j["carried_slots"] = m.carried_slots;
  j["correct_slots"] = m.correct_slots;
  j["target_slots"] = m.target_slots;
  j["strict_slots"] = m.strict_slots;
  j["strict_unknown_slots"] = m.strict_unknown_slots;
  j["strict_known"] = !m.strict_unknown_only();
  for (const auto& n : kRuleNames) {
    j[n.rate] = unknown(m, n.rule) ? ordered_json(nullptr) : optional_json(m.rate(n.rule));
    j[std::string(n.rate) + "_interval"] = interval_json(iv.rate_of(n.rule));
  }
  for (const auto& n : kRuleNames)
    j[n.best] = unknown(m, n.rule) ? ordered_json{{"max", nullptr}, {"max_interval", nullptr}, {"median", nullptr}, {"with_best", nullptr}}
                                   : ordered_json{{"max", optional_json(m.max_of_bests(n.rule))},
                                                  {"max_interval", interval_json(iv.max_best_of(n.rule))},
                                                  {"median", optional_json(m.median_of_bests(n.rule))},
                                                  {"with_best", m.with_best_of(n.rule)}};
  for (const auto& n : kRuleNames) j[n.fast] = unknown(m, n.rule) ? ordered_json(nullptr) : fast_json(m.bests(n.rule), iv, n.rule);
  ordered_json pass = ordered_json::object();
  for (const auto& n : kRuleNames) {
    ordered_json at = ordered_json::object();
    for (int k : pass_k) at[std::to_string(k)] = unknown(m, n.rule) ? ordered_json(nullptr) : optional_json(m.pass_at(k, n.rule));
    pass[n.pass] = {{"passed", unknown(m, n.rule) ? ordered_json(nullptr) : ordered_json(m.passed_of(n.rule))}, {"at", at}};
  }
  j["pass_at_k"] = pass;
  ordered_json per = ordered_json::array();
  for (std::size_t i = 0; i < m.best.size() && i < ids.size(); ++i) {
    ordered_json t = {{"trajectory", ids[i]}};
    for (const auto& n : kRuleNames) t[n.per_trajectory] = optional_json(m.bests(n.rule)[i]);
    per.push_back(t);
  }
  j["per_trajectory"] = per;
  return j;
}

ordered_json labels_json(const std::array<int64_t, kLabelCount>& counts) {
  ordered_json j = ordered_json::object();
  for (auto l : kAllLabels) j[label_name(l)] = counts[static_cast<std::size_t>(label_index(l))];
  return j;
}

// The document's head: schema, settings, the definitions and the label mapping, provenance.
ordered_json header_json(const Report& r) {
  ordered_json j = {{"schema", kReportSchema}, {"schema_version", kReportSchemaVersion}, {"generated_at", r.generated_at},
                    {"store", r.store}, {"budgets", r.budgets}, {"group_by", to_string(r.by)}};
  j["missing_turns"] = {{"rule", to_string(r.missing)}, {"text", describe(r.missing)}};
  j["bootstrap"] = {{"resamples", r.bootstrap.resamples}, {"seed", r.bootstrap.seed}, {"confidence", r.bootstrap.confidence},
                    {"over", "the counted trajectories of each group"}};
  j["pass_k"] = r.pass_k;
  j["filters"] = {{"models", r.filters.models}, {"definitions", r.filters.definitions}, {"tags", r.filters.tags}};
  ordered_json defs = ordered_json::object();
  for (const auto& d : metric_definitions()) defs[d.key] = {{"name", d.name}, {"text", d.text}};
  j["definitions"] = defs;
  ordered_json mapping = ordered_json::array();
  for (const auto& m : label_mapping()) mapping.push_back({{"status", m.status}, {"label", m.label}, {"note", m.note}});
  j["label_mapping"] = mapping;
  j["rates"] = "fractions in [0, 1]; speedups are baseline time / candidate time";
  j["provenance"] = provenance_json(r.provenance);
  if (r.provenance.fake()) j["fake_backend"] = fake_mark(r);
  return j;
}

ordered_json runs_json(const Report& r) {
  ordered_json runs = ordered_json::array();
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& s = r.runs[i];
    runs.push_back({{"label", "R" + std::to_string(i + 1)}, {"id", s.info.id}, {"status", to_string(s.info.status)},
                    {"origin", s.info.origin}, {"language", s.language}, {"model", s.info.model}, {"name", s.info.notes},
                    {"num_turns", s.num_turns}, {"condition", s.condition}, {"trajectories", s.trajectories.size()},
                    {"no_pooled_row", s.no_pooled_row.empty() ? ordered_json(nullptr) : ordered_json(s.no_pooled_row)},
                    {"config", s.info.config}});
  }
  return runs;
}

// Turn n -> n+1 label pairs that occur, with their counts.
ordered_json transitions_json(const Transitions& t) {
  ordered_json tr = ordered_json::array();
  for (auto a : kAllLabels)
    for (auto b : kAllLabels)
      if (auto n = t.counts[static_cast<std::size_t>(label_index(a))][static_cast<std::size_t>(label_index(b))])
        tr.push_back({{"from", label_name(a)}, {"to", label_name(b)}, {"count", n}});
  return tr;
}

ordered_json group_json(const Report& r, const Group& g) {
  auto ids = counted_ids(r, g);
  ordered_json budgets = ordered_json::array();
  for (std::size_t i = 0; i < g.metrics.budgets.size(); ++i)
    budgets.push_back(budget_json(g.metrics.budgets[i], i < g.intervals.size() ? g.intervals[i] : BudgetIntervals{}, ids, r.pass_k));
  ordered_json per_turn = ordered_json::array();
  for (const auto& c : g.metrics.labels.per_turn) per_turn.push_back(labels_json(c));
  ordered_json members = ordered_json::array();
  for (auto i : g.members) members.push_back(r.trajectories[i].info.id);
  return ordered_json{{"run", g.run_id},
                      {"language", g.language},
                      {"model", g.model},
                      {"definition", g.definition},
                      {"tag", r.by == GroupBy::tag ? ordered_json(g.tag) : ordered_json(nullptr)},
                      {"experiment", g.experiment.empty() ? ordered_json(nullptr) : ordered_json(g.experiment)},
                      {"gpu", g.gpu},
                      {"pooled", g.pooled},
                      {"trajectories", g.metrics.trajectories},
                      {"counted", g.metrics.counted},
                      {"incomplete", g.metrics.incomplete},
                      {"short_trajectories", g.metrics.short_trajectories},
                      {"correct_turns", g.metrics.correct_turns},
                      {"strict_unknown_turns", g.metrics.strict_unknown_turns},
                      {"provenance", provenance_json(g.provenance)},
                      {"budgets", budgets},
                      {"turn_labels", {{"total", labels_json(g.metrics.labels.total)}, {"per_turn", per_turn}}},
                      {"transitions", transitions_json(g.metrics.transitions)},
                      {"tokens", token_summary_json(g.metrics.tokens)},
                      {"reasoning_by_turn", reasoning_json(g.metrics.reasoning)},
                      {"members", members}};
}

ordered_json groups_json(const Report& r, const std::vector<Group>& groups) {
  ordered_json out = ordered_json::array();
  for (const auto& g : groups) out.push_back(group_json(r, g));
  return out;
}

ordered_json comparisons_json(const Report& r) {
  ordered_json comparisons = ordered_json::array();
  for (const auto& c : r.comparisons)
    comparisons.push_back({{"reference_run", c.reference_run}, {"run", c.run}, {"definition", c.definition},
                           {"reference_tokens", token_summary_json(c.reference)}, {"run_tokens", token_summary_json(c.other)},
                           {"ratio", token_ratio_json(c.ratio)}});
  return comparisons;
}

// One stored turn of the drill-down.
ordered_json turn_json(const TrajectoryDetail& t, std::size_t k) {
  const auto& rec = t.records[k];
  ordered_json tj = {{"turn", rec.turn}, {"step", to_string(rec.step)}, {"status", rec.status}, {"judged", bool(t.judged[k])}};
  if (t.judged[k]) tj["label"] = label_name(t.labels[k]);
  tj["correct"] = rec.correct;
  tj["target_instruction"] = rec.correct && rec.target_instruction;
  // Strict: true / false, or null when a correct turn's verdict holds no strict verdict.
  tj["strict_target_instruction"] = rec.verdict && rec.verdict->tensor_core_coverage
                                        ? ordered_json(rec.correct && rec.verdict->target_instruction_strict)
                                        : rec.correct ? ordered_json(nullptr) : ordered_json(false);
  tj["tensor_core_coverage"] = rec.verdict ? optional_json(rec.verdict->tensor_core_coverage) : ordered_json(nullptr);
  tj["fake_backend"] = rec.verdict && from_fake_backend(*rec.verdict);
  tj["speedup"] = optional_json(rec.speedup);
  tj["gpu"] = rec.verdict ? verdict_gpu(*rec.verdict) : "";
  tj["tokens"] = tokens_json(tokens_of(rec));
  tj["latency_s"] = rec.usage ? ordered_json(rec.usage->latency_s) : ordered_json(nullptr);
  tj["candidate_sha256"] = rec.candidate_sha256 ? ordered_json(*rec.candidate_sha256) : ordered_json(nullptr);
  return tj;
}

ordered_json trajectory_json(const TrajectoryDetail& t) {
  ordered_json turns = ordered_json::array();
  for (std::size_t k = 0; k < t.records.size(); ++k) turns.push_back(turn_json(t, k));
  return {{"id", t.info.id},
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
          {"best_speedup", optional_json(t.info.best_speedup)},
          {"best_target_speedup", optional_json(t.info.best_target_speedup)},
          {"tokens", tokens_json(t.obs.tokens)},
          {"provenance", provenance_json(t.provenance)},
          {"turns", turns}};
}

}  // namespace

ordered_json report_json(const Report& r) {
  ordered_json j = header_json(r);
  j["runs"] = runs_json(r);
  j["groups"] = groups_json(r, r.groups);
  // CUDA-PTX beside Triton: every reported run of a language pooled (run ""; report_data.h).
  j["languages"] = groups_json(r, r.language_groups);
  j["comparisons"] = comparisons_json(r);
  ordered_json trajectories = ordered_json::array();
  for (const auto& t : r.trajectories) trajectories.push_back(trajectory_json(t));
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

namespace {

// The tidy CSV: one row per group x metric x budget (x p, k or label), no text repeated per row;
// which definition states each metric is collected for the side file (report_csv_metrics).
class TidyCsv {
 public:
  explicit TidyCsv(const Report& r) : m_missing(to_string(r.missing)) {
    m_out = "run,model,definition,experiment,tag,gpu,language,trajectories,metric,budget,p,k,label,to_label,other_run,value,lower,"
            "upper,missing_turns,provenance\n";
  }
  void group(const Group& g) {
    m_key = csv_field(g.run_id) + "," + csv_field(g.model) + "," + csv_field(g.definition) + "," + csv_field(g.experiment) + "," +
            csv_field(g.tag) + "," + csv_field(g.gpu) + "," + csv_field(g.language) + "," + std::to_string(g.metrics.counted) + ",";
    m_flags = csv_field(provenance_flags(g.provenance));
  }
  struct Cell {
    std::string budget{}, p{}, k{}, label{}, to{}, other{}, value{};
    std::optional<Interval> interval{};
  };
  void row(const std::string& metric, const Cell& c, const std::string& definition) {
    note(metric, definition);
    m_out += m_key + metric + "," + c.budget + "," + c.p + "," + c.k + "," + csv_field(c.label) + "," + csv_field(c.to) + "," +
             csv_field(c.other) + "," + c.value + "," + (c.interval ? num(c.interval->lower) : "") + "," +
             (c.interval ? num(c.interval->upper) : "") + "," + m_missing + "," + m_flags + "\n";
  }
  void raw(const std::string& line, const std::string& metric, const std::string& definition) {
    note(metric, definition);
    m_out += line;
  }
  static std::string num(double v) { return fmt::format("{:.6g}", v); }
  [[nodiscard]] const std::string& text() const { return m_out; }
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& metrics() const { return m_metrics; }

 private:
  void note(const std::string& metric, const std::string& definition) {
    for (const auto& [m, d] : m_metrics)
      if (m == metric) return;
    m_metrics.emplace_back(metric, definition);
  }
  std::string m_missing, m_key, m_flags, m_out;
  std::vector<std::pair<std::string, std::string>> m_metrics;  // metric -> definition key, in first-seen order
};

TidyCsv tidy_csv(const Report& r) {
  TidyCsv csv(r);
  auto o = [](const std::optional<double>& v) { return v ? TidyCsv::num(*v) : std::string(); };
  auto n = [](int64_t v) { return std::to_string(v); };
  // The groups of each run, then the language groups (run empty: every run of the language pooled).
  std::vector<const Group*> all;
  for (const auto& g : r.groups) all.push_back(&g);
  for (const auto& g : r.language_groups) all.push_back(&g);
  for (const Group* gp : all) {
    const Group& g = *gp;
    csv.group(g);
    csv.row("trajectories_not_counted", {.value = n(g.metrics.trajectories - g.metrics.counted)}, "counted_trajectory");
    csv.row("trajectories_incomplete", {.value = n(g.metrics.incomplete)}, "missing_turns");
    csv.row("trajectories_short", {.value = n(g.metrics.short_trajectories)}, "missing_turns");
    csv.row("strict_unknown_turns", {.value = n(g.metrics.strict_unknown_turns)}, "strict_target_rule");
    csv.row("verdicts", {.value = n(g.provenance.verdicts)}, "fake_backend");
    csv.row("fake_backend_verdicts", {.value = n(g.provenance.fake_verdicts)}, "fake_backend");
    for (const auto& c : g.provenance.changed_options)
      csv.row("evaluation_option_changed", {.label = c.option + " = " + c.value, .to = "default " + c.default_value, .value = n(c.verdicts)},
              "evaluation_options");
    for (std::size_t i = 0; i < g.metrics.budgets.size(); ++i) {
      const auto& m = g.metrics.budgets[i];
      const BudgetIntervals iv = i < g.intervals.size() ? g.intervals[i] : BudgetIntervals{};
      std::string T = std::to_string(m.budget);
      if (!m.measured) {
        csv.row("turn_correctness_rate", {.budget = T}, "budget");
        continue;
      }
      csv.row("slots", {.budget = T, .value = n(m.slots)}, "turn_correctness_rate");
      csv.row("infra_slots", {.budget = T, .value = n(m.infra_slots)}, "turn_correctness_rate");
      csv.row("missing_slots", {.budget = T, .value = n(m.missing_slots)}, "missing_turns");
      csv.row("carried_slots", {.budget = T, .value = n(m.carried_slots)}, "missing_turns");
      csv.row("strict_unknown_slots", {.budget = T, .value = n(m.strict_unknown_slots)}, "strict_target_rule");
      for (const auto& names : kRuleNames) {
        const bool u = unknown(m, names.rule);
        csv.row(names.rate, {.budget = T, .value = u ? "" : o(m.rate(names.rule)), .interval = iv.rate_of(names.rule)}, names.rate_definition);
        csv.row(std::string(names.best) + "_max",
                {.budget = T, .value = u ? "" : o(m.max_of_bests(names.rule)), .interval = iv.max_best_of(names.rule)},
                names.best_definition);
        csv.row(std::string(names.best) + "_median", {.budget = T, .value = u ? "" : o(m.median_of_bests(names.rule))}, names.best_definition);
        csv.row(std::string(names.best) + "_with_best", {.budget = T, .value = u ? "" : n(m.with_best_of(names.rule))}, names.best_definition);
        for (int k : r.pass_k)
          csv.row(names.pass, {.budget = T, .k = std::to_string(k), .value = u ? "" : o(m.pass_at(k, names.rule))}, "pass_at_k");
      }
      for (double p : fast_p_grid())
        for (const auto& names : kRuleNames) {
          const bool u = unknown(m, names.rule);
          csv.row(names.fast,
                  {.budget = T, .p = TidyCsv::num(p), .value = u ? "" : TidyCsv::num(fast_p(m.bests(names.rule), p)),
                   .interval = u ? std::nullopt : iv.fast_of(names.rule, p)},
                  names.fast_definition);
        }
    }
    for (auto l : kAllLabels)
      csv.row("turn_label_count", {.label = label_name(l), .value = n(g.metrics.labels.total[static_cast<std::size_t>(label_index(l))])},
              "turn_labels");
    for (auto a : kAllLabels)
      for (auto b : kAllLabels)
        if (auto c = g.metrics.transitions.counts[static_cast<std::size_t>(label_index(a))][static_cast<std::size_t>(label_index(b))])
          csv.row("transition_count", {.label = label_name(a), .to = label_name(b), .value = n(c)}, "transitions");
    const auto& s = g.metrics.tokens;
    const std::pair<const char*, std::pair<int64_t, std::optional<double>>> kinds[] = {
        {"prompt", {s.total.prompt, s.mean_prompt}},       {"completion", {s.total.completion, s.mean_completion}},
        {"reasoning", {s.total.reasoning, s.mean_reasoning}}, {"cached", {s.total.cached, s.mean_cached}},
        {"total", {s.total.total(), s.mean_total}}};
    for (const auto& [kind, v] : kinds) {
      csv.row(std::string("tokens_") + kind + "_sum", {.value = n(v.first)}, "tokens");
      csv.row(std::string("tokens_") + kind + "_mean_per_trajectory", {.value = o(v.second)}, "tokens");
    }
    const std::pair<const char*, std::optional<double>> medians[] = {
        {"prompt", s.median_prompt}, {"completion", s.median_completion}, {"reasoning", s.median_reasoning},
        {"cached", s.median_cached}, {"total", s.median_total}};
    for (const auto& [kind, v] : medians) csv.row(std::string("tokens_") + kind + "_median_per_trajectory", {.value = o(v)}, "tokens");
    for (const auto& x : g.metrics.reasoning) {
      std::string turn = "turn " + std::to_string(x.turn);
      csv.row("reasoning_tokens_by_turn_median", {.label = turn, .value = TidyCsv::num(x.median)}, "reasoning_by_turn");
      csv.row("reasoning_tokens_by_turn_calls", {.label = turn, .value = n(x.calls)}, "reasoning_by_turn");
    }
  }
  const std::string flags = csv_field(provenance_flags(r.provenance));
  for (const auto& c : r.comparisons) {
    const std::pair<const char*, std::optional<double>> kinds[] = {{"prompt", c.ratio.prompt},
                                                                   {"completion", c.ratio.completion},
                                                                   {"reasoning", c.ratio.reasoning},
                                                                   {"cached", c.ratio.cached},
                                                                   {"total", c.ratio.total}};
    for (const auto& [kind, v] : kinds) {
      const std::string metric = std::string("token_ratio_") + kind;
      csv.raw(csv_field(c.reference_run) + ",," + csv_field(c.definition) + ",,,,,," + metric + ",,,,,," + csv_field(c.run) + "," +
                  (v ? TidyCsv::num(*v) : "") + ",,," + to_string(r.missing) + "," + flags + "\n",
              metric, "token_ratio");
    }
  }
  return csv;
}

}  // namespace

std::string report_csv(const Report& r) { return tidy_csv(r).text(); }

std::string metrics_csv_path(const std::string& csv_path) {
  const std::string ext = ".csv";
  std::string stem = csv_path;
  if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0) stem.resize(stem.size() - ext.size());
  return stem + ".metrics.csv";
}

std::string report_csv_metrics(const Report& r) {
  std::string out = "metric,definition,name,text\n";
  const TidyCsv csv = tidy_csv(r);  // named: metrics() refers into it
  for (const auto& [metric, key] : csv.metrics()) {
    std::string name;
    for (const auto& d : metric_definitions())
      if (d.key == key) name = d.name;
    out += csv_field(metric) + "," + csv_field(key) + "," + csv_field(name) + "," + csv_field(definition_text(key)) + "\n";
  }
  // The rules every row follows, named by the CSV's columns.
  out += "missing_turns," + std::string("missing_turns,") + csv_field("Missing turns (column missing_turns: " + to_string(r.missing) + ")") +
         "," + csv_field(describe(r.missing) + ". " + definition_text("missing_turns")) + "\n";
  out += "lower/upper,bootstrap,Bootstrap intervals," + csv_field(definition_text("bootstrap")) + "\n";
  return out;
}

}  // namespace ptxbench::report
