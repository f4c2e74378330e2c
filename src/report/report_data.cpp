#include "report/report_data.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "verdict/verdict.h"

namespace ptxbench::report {
namespace {

std::vector<std::string> resolve_runs(const RunStore& store, const std::vector<std::string>& wanted) {
  auto all = store.list_runs();
  auto known = [&] {
    std::string s;
    for (std::size_t i = 0; i < all.size() && i < 10; ++i) s += (i ? ", " : "") + all[i].id;
    if (all.size() > 10) s += ", ...";
    return s.empty() ? std::string("none") : s;
  };
  if (wanted.empty()) throw InputError("report", "name at least one RUN (stored runs: " + known() + ")");
  std::vector<std::string> ids;
  for (const auto& w : wanted) {
    std::vector<std::string> hits;
    for (const auto& r : all) {
      if (r.id == w) {
        hits = {r.id};
        break;
      }
      if (r.id.rfind(w, 0) == 0) hits.push_back(r.id);
    }
    if (hits.empty()) throw InputError("report", "no run '" + w + "' in " + store.path() + " (stored runs: " + known() + ")");
    if (hits.size() > 1) throw InputError("report", "'" + w + "' matches " + std::to_string(hits.size()) + " runs; give more of the id");
    if (std::find(ids.begin(), ids.end(), hits[0]) != ids.end())
      throw InputError("report", "run " + hits[0] + " named twice");
    ids.push_back(hits[0]);
  }
  return ids;
}

}  // namespace

std::string run_condition(const ordered_json& config) {
  std::vector<std::string> parts;
  if (!config.is_object()) return "-";
  if (config.contains("repair_from") && config["repair_from"].is_object()) parts.push_back("repair seeds");
  if (config.contains("repair_notes") && config["repair_notes"].is_object()) {
    const ordered_json& n = config["repair_notes"];
    const std::string mode = n.contains("mode") && n["mode"].is_string() ? n["mode"].get<std::string>() : "?";
    if (mode != "off")
      parts.push_back(mode + (n.contains("k") && n["k"].is_number_integer() ? " (k " + std::to_string(n["k"].get<int64_t>()) + ")" : ""));
  }
  if (parts.empty()) return "-";
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string run_language(const ordered_json& config) {
  if (config.is_object() && config.contains("language") && config["language"].is_string() &&
      !config["language"].get<std::string>().empty())
    return config["language"].get<std::string>();
  return kCudaLanguage;
}

bool Report::several_languages() const {
  for (const auto& s : runs)
    if (s.language != runs.front().language) return true;
  return false;
}

namespace {

int64_t config_turns(const ordered_json& config) {
  if (config.is_object() && config.contains("num_turns") && config["num_turns"].is_number_integer())
    return std::max<int64_t>(0, config["num_turns"].get<int64_t>());
  return 0;
}

std::vector<TrajectoryObs> observations(const Report& r, const std::vector<std::size_t>& members) {
  std::vector<TrajectoryObs> out;
  out.reserve(members.size());
  for (auto i : members) out.push_back(r.trajectories[i].obs);
  return out;
}

}  // namespace

std::string to_string(GroupBy by) { return by == GroupBy::tag ? "tag" : "definition"; }

std::string verdict_gpu(const Verdict& v) { return v.environment ? v.environment->gpu.name : ""; }

TokenCounts tokens_of(const TurnRecord& r) {
  TokenCounts t;
  if (r.usage) t = {r.usage->prompt_tokens, r.usage->completion_tokens, r.usage->reasoning_tokens, r.usage->cached_tokens};
  return t;
}

std::string ReportFilters::describe() const {
  std::string s;
  auto add = [&s](const char* option, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::string joined;
    for (const auto& v : values) joined += (joined.empty() ? "" : ",") + v;
    s += (s.empty() ? "" : " ") + std::string(option) + " " + joined;
  };
  add("--model", models);
  add("--definition", definitions);
  add("--tag", tags);
  return s;
}

namespace {

bool keeps(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

// Every filter value must name something the runs hold: a typo would otherwise report nothing.
void check_filter(const char* option, const std::vector<std::string>& wanted, const std::set<std::string>& seen) {
  for (const auto& w : wanted) {
    if (seen.count(w)) continue;
    std::string known;
    std::size_t n = 0;
    for (const auto& v : seen) {
      if (n++ == 20) {
        known += ", ...";
        break;
      }
      known += (known.empty() ? "" : ", ") + v;
    }
    throw InputError("report", fmt::format("{} '{}' matches no trajectory of the runs (they hold: {})", option, w,
                                           known.empty() ? "none" : known));
  }
}

// The random stream of a group's intervals at one budget: its name, so that adding a group or a
// budget moves no other interval.
std::string interval_stream(const Group& g, int budget) {
  return fmt::format("report\n{}\n{}\n{}\n{}\n{}\n{}\n{}\nT{}", g.run_id, g.language, g.model, g.definition, g.tag, g.experiment,
                     g.gpu, budget);
}

// Sorted, each value once.
std::vector<int> sorted_unique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// An empty report with the settings of `options`, checked (InputError for a bad budget, k,
// resample count or confidence).
Report report_settings(const RunStore& store, const ReportOptions& options) {
  Report r;
  r.store = store.path();
  r.by = options.by;
  r.missing = options.missing;
  r.filters = options.filters;
  r.bootstrap = options.bootstrap;
  r.generated_at = utc_now_iso8601();
  r.budgets = sorted_unique(options.budgets);
  if (r.budgets.empty()) throw InputError("report", "--budgets: give at least one turn budget");
  for (int b : r.budgets)
    if (b < 1) throw InputError("report", "--budgets: turn budgets are >= 1, got " + std::to_string(b));
  r.pass_k = sorted_unique(options.pass_k);
  for (int k : r.pass_k)
    if (k < 1) throw InputError("report", "--pass-k: k is >= 1, got " + std::to_string(k));
  if (r.bootstrap.resamples < 1) throw InputError("report", "--bootstrap: at least 1 resample");
  if (!(r.bootstrap.confidence > 0.0 && r.bootstrap.confidence < 1.0))
    throw InputError("report", "--confidence: strictly between 0 and 1");
  return r;
}

// One stored trajectory with every turn labelled and reduced for the metrics, and the provenance
// of its verdicts. Its GPU: the GPUs its verdicts name, joined by '+' ("" when none names one).
TrajectoryDetail trajectory_detail(const RunStore& store, const TrajectoryInfo& info, const RunInfo& run) {
  TrajectoryDetail d;
  d.info = info;
  d.model = run.model;
  d.records = store.turns(info.id);
  d.provenance.imported_trajectories = run.imported() ? 1 : 0;
  std::set<std::string> gpus;
  for (const auto& rec : d.records) {
    bool judged = !rec.status.empty();
    TurnLabel label = judged ? label_for(rec.status, rec.verdict ? &*rec.verdict : nullptr) : TurnLabel::other;
    d.judged.push_back(judged);
    d.labels.push_back(label);
    d.obs.tokens += tokens_of(rec);
    if (rec.usage && rec.turn >= 1) {
      auto at = static_cast<std::size_t>(rec.turn - 1);
      if (d.obs.turn_tokens.size() <= at) d.obs.turn_tokens.resize(at + 1);
      d.obs.turn_tokens[at] = tokens_of(rec);
    }
    if (judged) {
      // The strict verdict is written with the coverage it rests on; without it, it is unknown.
      std::optional<bool> strict;
      if (rec.verdict && rec.verdict->tensor_core_coverage) strict = rec.verdict->target_instruction_strict;
      d.obs.turns.push_back({rec.turn, label, rec.correct, rec.correct && rec.target_instruction, rec.speedup, strict});
    }
    if (rec.verdict) {
      if (auto g = verdict_gpu(*rec.verdict); !g.empty()) gpus.insert(g);
      Provenance p;
      p.verdicts = 1;
      p.fake_verdicts = from_fake_backend(*rec.verdict);
      p.changed_options = changed_options(*rec.verdict);
      d.provenance += p;
    }
  }
  for (const auto& g : gpus) d.gpu += (d.gpu.empty() ? "" : "+") + g;
  return d;
}

// The names every trajectory of the runs holds, kept by the filters or not (for check_filter).
struct HeldNames {
  std::set<std::string> models, definitions, tags;
};

// Gives a run's trajectories its turn budget and whether they are incomplete; those whose verdicts
// name no GPU take the one GPU their run and definition name.
void complete_run_trajectories(Report& r, const RunSummary& s) {
  std::map<std::string, std::set<std::string>> named;
  for (auto i : s.trajectories)
    if (!r.trajectories[i].gpu.empty()) named[r.trajectories[i].info.key.definition].insert(r.trajectories[i].gpu);
  for (auto i : s.trajectories) {
    auto& d = r.trajectories[i];
    d.obs.turn_budget = s.num_turns;
    d.obs.incomplete = (d.info.status == TrajectoryStatus::failed || d.info.status == TrajectoryStatus::running) &&
                       static_cast<int64_t>(d.obs.turns.size()) < s.num_turns;
    if (d.gpu.empty()) {
      const auto& n = named[d.info.key.definition];
      d.gpu = n.size() == 1 ? *n.begin() : !s.info.gpu.empty() ? s.info.gpu : kUnknownGpu;
    }
  }
}

// Reads run `id` and the trajectories of it the filters keep (appended to r.trajectories).
RunSummary read_run(const RunStore& store, const std::string& id, const ReportFilters& filters, Report& r, HeldNames& held) {
  RunSummary s;
  s.info = store.run(id);
  s.num_turns = config_turns(s.info.config);
  s.condition = run_condition(s.info.config);
  s.language = run_language(s.info.config);
  int64_t most = 0;
  held.models.insert(s.info.model);
  for (const auto& info : store.list_trajectories(id)) {
    held.definitions.insert(info.key.definition);
    held.tags.insert(info.key.prompt_tag);
    if (!keeps(filters.models, s.info.model) || !keeps(filters.definitions, info.key.definition) ||
        !keeps(filters.tags, info.key.prompt_tag))
      continue;
    TrajectoryDetail d = trajectory_detail(store, info, s.info);
    most = std::max<int64_t>(most, static_cast<int64_t>(d.obs.turns.size()));
    s.trajectories.push_back(r.trajectories.size());
    r.trajectories.push_back(std::move(d));
  }
  if (s.num_turns == 0) s.num_turns = most;
  complete_run_trajectories(r, s);
  return s;
}

// Reads every run into `r` (runs, trajectories, provenance); then refuses filter values that match
// nothing and, unless allowed, fake-backend verdicts.
void read_runs(const RunStore& store, const std::vector<std::string>& runs, const ReportOptions& options, Report& r) {
  HeldNames held;
  std::string fake_runs;  // "run ID (n of m verdicts), ..."
  for (const auto& id : resolve_runs(store, runs)) {
    RunSummary s = read_run(store, id, options.filters, r, held);
    Provenance run_provenance;
    for (auto i : s.trajectories) run_provenance += r.trajectories[i].provenance;
    if (run_provenance.fake())
      fake_runs += fmt::format("{}run {} ({} of {} verdicts)", fake_runs.empty() ? "" : ", ", s.info.id, run_provenance.fake_verdicts,
                               run_provenance.verdicts);
    r.provenance += run_provenance;
    r.runs.push_back(std::move(s));
  }
  check_filter("--model", options.filters.models, held.models);
  check_filter("--definition", options.filters.definitions, held.definitions);
  check_filter("--tag", options.filters.tags, held.tags);
  if (!fake_runs.empty() && options.fake == FakeVerdicts::refuse)
    throw InputError("report", "verdicts from the evaluation service's fake backend (serve --fake-gpus: no GPU ran, the "
                               "candidate's markers dictated status and speedup) in " + fake_runs +
                                   "; these are test data, not measurements. Give --allow-fake to report them anyway, "
                                   "marked as such in every output");
}

// Adds trajectory i to the group of `groups` that `same` finds for `key`, made from the key when
// there is none yet (so groups stay in the order first seen).
template <class Same>
void add_member(std::vector<Group>& groups, Group key, std::size_t i, Same same) {
  auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return same(x, key); });
  if (g == groups.end()) g = groups.insert(groups.end(), std::move(key));
  g->members.push_back(i);
}

bool same_run_group(const Group& a, const Group& b) {
  return a.model == b.model && a.definition == b.definition && a.gpu == b.gpu && a.tag == b.tag && a.experiment == b.experiment;
}

bool same_language_group(const Group& a, const Group& b) {
  return a.language == b.language && a.model == b.model && a.definition == b.definition && a.gpu == b.gpu;
}

// A run's groups in the order first seen; a pooled row per run x model x GPU (x tag) when that pools
// several definitions. An imported run is split by experiment too (metrics "groups").
void add_run_groups(Report& r, RunSummary& s) {
  std::vector<Group> per_definition, pooled;
  std::map<std::string, std::set<std::string>> definitions;                     // by the pooled row's tag
  std::map<std::string, std::map<std::string, std::set<std::string>>> experiments;  // tag -> definition -> experiments
  for (auto i : s.trajectories) {
    const auto& d = r.trajectories[i];
    std::string tag = r.by == GroupBy::tag ? d.info.key.prompt_tag : "";
    std::string experiment = s.info.imported() && r.by != GroupBy::tag ? d.info.key.prompt_tag : "";
    definitions[tag].insert(d.info.key.definition);
    experiments[tag][d.info.key.definition].insert(experiment);
    add_member(per_definition, {s.info.id, d.model, d.info.key.definition, d.gpu, s.language, tag, experiment, false, {}, {}, {}, {}}, i,
               same_run_group);
    add_member(pooled, {s.info.id, d.model, kPooledDefinition, d.gpu, s.language, tag, "", true, {}, {}, {}, {}}, i, same_run_group);
  }
  for (auto& g : per_definition) r.groups.push_back(std::move(g));
  for (auto& g : pooled) {
    if (definitions[g.tag].size() < 2) continue;
    bool mixed = false;
    for (const auto& [def, exps] : experiments[g.tag]) mixed |= exps.size() > 1;
    if (mixed) {
      s.no_pooled_row = "no '(all)' row: the run holds several experiments of one definition, which it would mix";
      continue;
    }
    r.groups.push_back(std::move(g));
  }
}

// Languages side by side: every run of a language pooled, by model, definition and GPU; an '(all)'
// row per language x model x GPU that pools several definitions. Languages in the order first seen,
// each language's rows together.
void add_language_groups(Report& r) {
  std::vector<Group> per_definition, pooled;
  std::map<std::string, std::set<std::string>> definitions;  // by language x model x GPU
  for (const auto& s : r.runs)
    for (auto i : s.trajectories) {
      const auto& d = r.trajectories[i];
      definitions[s.language + '\n' + d.model + '\n' + d.gpu].insert(d.info.key.definition);
      add_member(per_definition, {"", d.model, d.info.key.definition, d.gpu, s.language, "", "", false, {}, {}, {}, {}}, i,
                 same_language_group);
      add_member(pooled, {"", d.model, kPooledDefinition, d.gpu, s.language, "", "", true, {}, {}, {}, {}}, i, same_language_group);
    }
  std::vector<std::string> order;
  for (const auto& s : r.runs)
    if (std::find(order.begin(), order.end(), s.language) == order.end()) order.push_back(s.language);
  for (const auto& language : order) {
    for (auto& g : per_definition)
      if (g.language == language) r.language_groups.push_back(g);
    for (auto& g : pooled)
      if (g.language == language && definitions[g.language + '\n' + g.model + '\n' + g.gpu].size() > 1) r.language_groups.push_back(g);
  }
}

// Every group's metrics, intervals and provenance.
void compute_group_metrics(Report& r) {
  for (auto* groups : {&r.groups, &r.language_groups})
    for (auto& g : *groups) {
      g.metrics = group_metrics(observations(r, g.members), r.budgets, r.missing);
      for (const auto& m : g.metrics.budgets) g.intervals.push_back(budget_intervals(m, r.bootstrap, interval_stream(g, m.budget)));
      for (auto i : g.members) g.provenance += r.trajectories[i].provenance;
    }
}

// Token ratios: the first run against each other one, per definition both ran and pooled.
void add_token_comparisons(Report& r) {
  auto members = [&r](const RunSummary& s, const std::string& def) {
    std::vector<std::size_t> m;
    for (auto i : s.trajectories)
      if (def == kPooledDefinition || r.trajectories[i].info.key.definition == def) m.push_back(i);
    return m;
  };
  for (std::size_t k = 1; k < r.runs.size(); ++k) {
    const auto& a = r.runs[0];
    const auto& b = r.runs[k];
    std::vector<std::string> defs;
    for (auto i : a.trajectories) {
      const auto& def = r.trajectories[i].info.key.definition;
      if (std::find(defs.begin(), defs.end(), def) == defs.end()) defs.push_back(def);
    }
    defs.push_back(kPooledDefinition);
    for (const auto& def : defs) {
      auto ma = members(a, def), mb = members(b, def);
      if (ma.empty() || mb.empty()) continue;
      Comparison c;
      c.reference_run = a.info.id;
      c.run = b.info.id;
      c.definition = def;
      c.reference = token_summary(observations(r, ma));
      c.other = token_summary(observations(r, mb));
      c.ratio = token_ratio(c.reference, c.other);
      r.comparisons.push_back(std::move(c));
    }
  }
}

}  // namespace

Report build_report(const RunStore& store, const std::vector<std::string>& runs, const std::vector<int>& budgets,
                    FakeVerdicts fake, GroupBy by) {
  ReportOptions o;
  o.budgets = budgets;
  o.fake = fake;
  o.by = by;
  return build_report(store, runs, o);
}

Report build_report(const RunStore& store, const std::vector<std::string>& runs, const ReportOptions& options) {
  Report r = report_settings(store, options);
  read_runs(store, runs, options, r);
  for (auto& s : r.runs) add_run_groups(r, s);
  add_language_groups(r);
  compute_group_metrics(r);
  add_token_comparisons(r);
  return r;
}

}  // namespace ptxbench::report
