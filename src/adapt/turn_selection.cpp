#include "adapt/turn_selection.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "common/enum_names.h"
#include "common/sha256.h"
#include "report/report_data.h"

namespace ptxbench {
namespace {

constexpr EnumName<BalanceMode> kBalanceModes[] = {
    {BalanceMode::none, "none"}, {BalanceMode::pre, "pre"}, {BalanceMode::post, "post"}};

auto trajectory_key(const SourceTrajectory& t) {
  const auto& k = t.info.key;
  return std::tie(t.run_id, k.definition, k.workload_uuid, k.prompt_tag, k.index);
}

}  // namespace

// ---- held out

HeldOutDefinitions::HeldOutDefinitions(std::vector<std::string> names) : m_names(std::move(names)) {
  std::sort(m_names.begin(), m_names.end());
  m_names.erase(std::unique(m_names.begin(), m_names.end()), m_names.end());
}

bool HeldOutDefinitions::contains(std::string_view definition) const {
  return std::binary_search(m_names.begin(), m_names.end(), definition,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

void HeldOutDefinitions::check(std::string_view definition, std::string_view what) const {
  if (contains(definition))
    throw HeldOutViolation(std::string(what) + " of definition '" + std::string(definition) +
                           "', which is held out from training");
}

// ---- reading

bool canonical_less(const SourceTrajectory& a, const SourceTrajectory& b) { return trajectory_key(a) < trajectory_key(b); }

ordered_json SourceCounts::to_json() const {
  return {{"runs", runs},
          {"trajectories_read", trajectories_read},
          {"held_out_skipped", held_out_skipped},
          {"outside_problem_set", outside_problem_set}};
}

SourceSet read_sources(const RunStore& store, const SourceFilter& filter, const HeldOutDefinitions& held_out) {
  SourceSet out;
  std::set<std::string> wanted;
  if (filter.definitions) wanted.insert(filter.definitions->begin(), filter.definitions->end());
  std::set<std::string> seen_runs;
  for (const auto& run_id : filter.runs) {
    if (!seen_runs.insert(run_id).second) continue;
    auto run = store.find_run(run_id);
    if (!run) throw InputError("data", "no run '" + run_id + "' in the store " + store.path());
    if (run->imported())
      throw InputError("data", "run " + run_id + " is imported (" + run->origin +
                                   "): it holds outcomes only, no kernels or feedback to train on");
    ++out.counts.runs;
    for (const auto& info : store.list_trajectories(run_id)) {
      // The guard comes first: a held-out definition's turns and messages are never read.
      if (held_out.contains(info.key.definition)) {
        ++out.counts.held_out_skipped;
        continue;
      }
      if (filter.definitions && !wanted.count(info.key.definition)) {
        ++out.counts.outside_problem_set;
        continue;
      }
      SourceTrajectory t;
      t.run_id = run_id;
      t.model = run->model;
      t.info = info;
      for (const auto& m : store.messages(info.id)) {
        if (m.turn != 0) continue;
        if (m.role == "system" && t.system.empty()) t.system = m.content;
        if (m.role == "user" && t.task.empty()) t.task = m.content;
      }
      t.turns = store.turns(info.id);
      for (const auto& r : t.turns) {
        if (r.verdict && !filter.allow_fake_verdicts && report::from_fake_backend(*r.verdict))
          throw InputError("data", "run " + run_id + " holds verdicts of the service's fake backend (trajectory " +
                                       std::to_string(info.id) + ", turn " + std::to_string(r.turn) +
                                       "): no GPU measured them. Set \"allow_fake_verdicts\": true in the recipe "
                                       "only for tests");
        t.labels.push_back(r.status.empty() ? report::TurnLabel::other
                                            : report::label_for(r.status, r.verdict ? &*r.verdict : nullptr));
      }
      ++out.counts.trajectories_read;
      out.trajectories.push_back(std::move(t));
    }
  }
  std::sort(out.trajectories.begin(), out.trajectories.end(), canonical_less);
  return out;
}

// ---- labels and failed turns

report::TurnLabel parse_label_key(std::string_view key) {
  for (auto l : report::kAllLabels)
    if (report::label_key(l) == key) return l;
  std::string keys;
  for (auto l : report::kAllLabels) keys += (keys.empty() ? "" : ", ") + report::label_key(l);
  throw InputError("data", "unknown turn label '" + std::string(key) + "' (expected one of " + keys + ")");
}

std::vector<report::TurnLabel> default_failure_labels() {
  return {report::TurnLabel::compilation_error, report::TurnLabel::numerical_error, report::TurnLabel::runtime_error,
          report::TurnLabel::kernel_timeout};
}

bool is_failure_label(report::TurnLabel label) {
  return label != report::TurnLabel::correct && label != report::TurnLabel::infra_error;
}

std::vector<FailedTurn> select_failed_turns(const SourceSet& sources, const TurnFilter& filter) {
  std::vector<FailedTurn> out;
  for (std::size_t s = 0; s < sources.trajectories.size(); ++s) {
    const auto& t = sources.trajectories[s];
    for (std::size_t i = 0; i < t.turns.size(); ++i) {
      const auto& r = t.turns[i];
      if (r.status.empty() || r.turn < filter.turn_from || r.turn > filter.turn_to) continue;
      auto label = t.labels[i];
      if (!is_failure_label(label) || std::find(filter.labels.begin(), filter.labels.end(), label) == filter.labels.end())
        continue;
      out.push_back({s, i, r.turn, label, t.definition()});
    }
  }
  return out;
}

// ---- balance

std::string to_string(BalanceMode mode) { return enum_name(kBalanceModes, mode); }
BalanceMode parse_balance_mode(std::string_view text) { return parse_enum(kBalanceModes, text, "balance mode"); }

ordered_json to_json(const std::vector<StratumCount>& strata) {
  ordered_json out = ordered_json::array();
  for (const auto& s : strata)
    out.push_back({{"definition", s.stratum.definition}, {"label", s.stratum.label}, {"available", s.available}, {"kept", s.kept}});
  return out;
}

uint64_t derive_seed(uint64_t seed, std::string_view purpose) {
  std::string digest = Sha256().field(std::to_string(seed)).field(purpose).hex_digest();
  return std::stoull(digest.substr(0, 16), nullptr, 16);
}

std::vector<std::size_t> seeded_permutation(std::size_t n, uint64_t seed) {
  std::vector<std::size_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = i;
  std::mt19937_64 engine(seed);
  for (std::size_t i = n; i > 1; --i) {
    auto j = static_cast<std::size_t>(engine() % i);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

BalanceResult balance_strata(const std::vector<Stratum>& item_strata, std::optional<int64_t> cap, uint64_t seed) {
  std::map<Stratum, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < item_strata.size(); ++i) groups[item_strata[i]].push_back(i);
  BalanceResult out;
  for (const auto& [stratum, items] : groups) {
    StratumCount count{stratum, static_cast<int64_t>(items.size()), 0};
    if (!cap || static_cast<int64_t>(items.size()) <= *cap) {
      out.kept.insert(out.kept.end(), items.begin(), items.end());
    } else {
      auto order = seeded_permutation(items.size(), derive_seed(seed, "balance/" + stratum.definition + "/" + stratum.label));
      for (int64_t k = 0; k < *cap; ++k) out.kept.push_back(items[order[static_cast<std::size_t>(k)]]);
    }
    count.kept = std::min<int64_t>(count.available, cap.value_or(count.available));
    out.strata.push_back(count);
  }
  std::sort(out.kept.begin(), out.kept.end());
  return out;
}

}  // namespace ptxbench
