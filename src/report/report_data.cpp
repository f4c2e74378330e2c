#include "report/report_data.h"

#include <algorithm>
#include <map>
#include <set>

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

int64_t config_turns(const ordered_json& config) {
  if (config.is_object() && config.contains("num_turns") && config["num_turns"].is_number_integer())
    return std::max<int64_t>(0, config["num_turns"].get<int64_t>());
  return 0;
}

TokenCounts tokens_of(const TurnRecord& r) {
  TokenCounts t;
  if (r.usage) t = {r.usage->prompt_tokens, r.usage->completion_tokens, r.usage->reasoning_tokens, r.usage->cached_tokens};
  return t;
}

std::vector<TrajectoryObs> observations(const Report& r, const std::vector<std::size_t>& members) {
  std::vector<TrajectoryObs> out;
  out.reserve(members.size());
  for (auto i : members) out.push_back(r.trajectories[i].obs);
  return out;
}

}  // namespace

std::string verdict_gpu(const Verdict& v) { return v.environment ? v.environment->gpu.name : ""; }

Report build_report(const RunStore& store, const std::vector<std::string>& runs, const std::vector<int>& budgets_in) {
  Report r;
  r.store = store.path();
  r.generated_at = utc_now_iso8601();
  r.budgets = budgets_in;
  std::sort(r.budgets.begin(), r.budgets.end());
  r.budgets.erase(std::unique(r.budgets.begin(), r.budgets.end()), r.budgets.end());
  if (r.budgets.empty()) throw InputError("report", "--budgets: give at least one turn budget");
  for (int b : r.budgets)
    if (b < 1) throw InputError("report", "--budgets: turn budgets are >= 1, got " + std::to_string(b));

  for (const auto& id : resolve_runs(store, runs)) {
    RunSummary s;
    s.info = store.run(id);
    s.num_turns = config_turns(s.info.config);
    int64_t most = 0;
    for (const auto& info : store.list_trajectories(id)) {
      TrajectoryDetail d;
      d.info = info;
      d.model = s.info.model;
      d.records = store.turns(info.id);
      std::set<std::string> gpus;
      for (const auto& rec : d.records) {
        bool judged = !rec.status.empty();
        TurnLabel label = judged ? label_for(rec.status, rec.verdict ? &*rec.verdict : nullptr) : TurnLabel::other;
        d.judged.push_back(judged);
        d.labels.push_back(label);
        d.obs.tokens += tokens_of(rec);
        if (judged) d.obs.turns.push_back({rec.turn, label, rec.correct, rec.correct && rec.target_instruction, rec.speedup});
        if (rec.verdict)
          if (auto g = verdict_gpu(*rec.verdict); !g.empty()) gpus.insert(g);
      }
      for (const auto& g : gpus) d.gpu += (d.gpu.empty() ? "" : "+") + g;
      most = std::max<int64_t>(most, static_cast<int64_t>(d.obs.turns.size()));
      s.trajectories.push_back(r.trajectories.size());
      r.trajectories.push_back(std::move(d));
    }
    if (s.num_turns == 0) s.num_turns = most;
    // Trajectories whose verdicts name no GPU take the one GPU their run and definition name.
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
        d.gpu = n.size() == 1 ? *n.begin() : kUnknownGpu;
      }
    }
    r.runs.push_back(std::move(s));
  }

  // Groups in the order first seen; a pooled row per run x model x GPU when a run has several definitions.
  for (const auto& s : r.runs) {
    std::vector<Group> per_definition, pooled;
    auto find = [](std::vector<Group>& gs, const std::string& model, const std::string& def, const std::string& gpu) -> Group* {
      for (auto& g : gs)
        if (g.model == model && g.definition == def && g.gpu == gpu) return &g;
      return nullptr;
    };
    std::set<std::string> definitions;
    for (auto i : s.trajectories) {
      const auto& d = r.trajectories[i];
      definitions.insert(d.info.key.definition);
      Group* g = find(per_definition, d.model, d.info.key.definition, d.gpu);
      if (!g) {
        per_definition.push_back({s.info.id, d.model, d.info.key.definition, d.gpu, false, {}, {}});
        g = &per_definition.back();
      }
      g->members.push_back(i);
      Group* p = find(pooled, d.model, kPooledDefinition, d.gpu);
      if (!p) {
        pooled.push_back({s.info.id, d.model, kPooledDefinition, d.gpu, true, {}, {}});
        p = &pooled.back();
      }
      p->members.push_back(i);
    }
    for (auto& g : per_definition) r.groups.push_back(std::move(g));
    if (definitions.size() > 1)
      for (auto& g : pooled) r.groups.push_back(std::move(g));
  }
  for (auto& g : r.groups) g.metrics = group_metrics(observations(r, g.members), r.budgets);

  // Token ratios: the first run against each other one, per definition both ran and pooled.
  for (std::size_t k = 1; k < r.runs.size(); ++k) {
    const auto& a = r.runs[0];
    const auto& b = r.runs[k];
    std::vector<std::string> defs;
    for (auto i : a.trajectories) {
      const auto& def = r.trajectories[i].info.key.definition;
      if (std::find(defs.begin(), defs.end(), def) == defs.end()) defs.push_back(def);
    }
    auto members = [&](const RunSummary& s, const std::string& def) {
      std::vector<std::size_t> m;
      for (auto i : s.trajectories)
        if (def == kPooledDefinition || r.trajectories[i].info.key.definition == def) m.push_back(i);
      return m;
    };
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
  return r;
}

}  // namespace ptxbench::report
