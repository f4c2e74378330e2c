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

namespace {
// A repair seed as the turn it stands for: turn 0, complete, with the kernel, status, feedback
// and (when the seed carried it) verdict; never a speedup (it was not measured in this run).
TurnRecord seed_record(int64_t trajectory_id, const SeedTurn& seed) {
  TurnRecord r;
  r.trajectory_id = trajectory_id;
  r.turn = 0;
  r.step = TurnStep::complete;
  r.candidate_source = seed.source;
  r.candidate_sha256 = sha256_hex(seed.source);
  r.candidate_language = seed.language;
  r.status = seed.status;
  r.correct = seed.status == to_string(Status::PASSED);
  r.feedback = seed.feedback;
  if (seed.verdict) {
    r.verdict = Verdict::from_json(*seed.verdict);
    r.target_instruction = r.verdict->target_instruction_correct;
  }
  return r;
}
}  // namespace

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
      if (auto seed = store.seed_turn(info.id)) {
        t.turns.insert(t.turns.begin(), seed_record(info.id, *seed));
        t.seeded = true;
        t.seed_origin = seed->origin;
      }
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

namespace {
constexpr EnumName<PairSource> kPairSources[] = {
    {PairSource::all, "all"}, {PairSource::seeds, "seeds"}, {PairSource::trajectories, "trajectories"}};
}  // namespace

std::string to_string(PairSource source) { return enum_name(kPairSources, source); }
PairSource parse_pair_source(std::string_view text) { return parse_enum(kPairSources, text, "pair source"); }

int64_t selection_turn(const SourceTrajectory& t, std::size_t turn_index) {
  if (t.seeded && turn_index == 0) return t.seed_origin ? t.seed_origin->turn : 0;
  return t.turns.at(turn_index).turn;
}

std::vector<FailedTurn> select_failed_turns(const SourceSet& sources, const TurnFilter& filter) {
  std::vector<FailedTurn> out;
  for (std::size_t s = 0; s < sources.trajectories.size(); ++s) {
    const auto& t = sources.trajectories[s];
    for (std::size_t i = 0; i < t.turns.size(); ++i) {
      const bool seed = t.seeded && i == 0;
      if ((seed && filter.from == PairSource::trajectories) || (!seed && filter.from == PairSource::seeds)) continue;
      const int64_t turn = selection_turn(t, i);
      if (t.turns[i].status.empty() || turn < filter.turn_from || turn > filter.turn_to) continue;
      auto label = t.labels[i];
      if (!is_failure_label(label) || std::find(filter.labels.begin(), filter.labels.end(), label) == filter.labels.end())
        continue;
      out.push_back({s, i, turn, label, t.definition()});
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

namespace {
constexpr EnumName<BalanceStrata> kBalanceStrata[] = {{BalanceStrata::definition_label, "definition_label"},
                                                      {BalanceStrata::definition, "definition"}};
constexpr EnumName<BalanceKeep> kBalanceKeep[] = {{BalanceKeep::random, "random"}, {BalanceKeep::fastest, "fastest"}};

// Caps each stratum at `cap`; `order(stratum, n)` gives the order in which a stratum's n items
// (positions in its canonical list) are kept when it is over the cap.
template <class Order>
BalanceResult balance_groups(const std::vector<Stratum>& item_strata, std::optional<int64_t> cap, Order order) {
  std::map<Stratum, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < item_strata.size(); ++i) groups[item_strata[i]].push_back(i);
  BalanceResult out;
  for (const auto& [stratum, items] : groups) {
    StratumCount count{stratum, static_cast<int64_t>(items.size()), 0};
    if (!cap || static_cast<int64_t>(items.size()) <= *cap) {
      out.kept.insert(out.kept.end(), items.begin(), items.end());
    } else {
      std::vector<std::size_t> positions = order(stratum, items);
      for (int64_t k = 0; k < *cap; ++k) out.kept.push_back(items[positions[static_cast<std::size_t>(k)]]);
    }
    count.kept = std::min<int64_t>(count.available, cap.value_or(count.available));
    out.strata.push_back(count);
  }
  std::sort(out.kept.begin(), out.kept.end());
  return out;
}
}  // namespace

std::string to_string(BalanceStrata strata) { return enum_name(kBalanceStrata, strata); }
BalanceStrata parse_balance_strata(std::string_view text) { return parse_enum(kBalanceStrata, text, "balance strata"); }
std::string to_string(BalanceKeep keep) { return enum_name(kBalanceKeep, keep); }
BalanceKeep parse_balance_keep(std::string_view text) { return parse_enum(kBalanceKeep, text, "balance keep"); }

BalanceResult balance_strata(const std::vector<Stratum>& item_strata, std::optional<int64_t> cap, uint64_t seed) {
  return balance_groups(item_strata, cap, [seed](const Stratum& stratum, const std::vector<std::size_t>& items) {
    return seeded_permutation(items.size(), derive_seed(seed, "balance/" + stratum.definition + "/" + stratum.label));
  });
}

BalanceResult balance_strata_by_rank(const std::vector<Stratum>& item_strata, std::optional<int64_t> cap,
                                     const std::vector<double>& rank) {
  PTXB_ENSURE(rank.size() == item_strata.size(), "data", "one rank per item");
  return balance_groups(item_strata, cap, [&rank](const Stratum&, const std::vector<std::size_t>& items) {
    std::vector<std::size_t> positions(items.size());
    for (std::size_t k = 0; k < positions.size(); ++k) positions[k] = k;
    std::stable_sort(positions.begin(), positions.end(),
                     [&](std::size_t a, std::size_t b) { return rank[items[a]] > rank[items[b]]; });
    return positions;
  });
}

}  // namespace ptxbench
