#include "adapt/seed_selection.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace ptxbench {

std::vector<int64_t> apportion(const std::vector<int64_t>& sizes, int64_t total) {
  const int64_t sum = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (sum <= total) return sizes;
  std::vector<int64_t> out(sizes.size());
  std::vector<std::pair<int64_t, std::size_t>> remainders;  // (size·total mod sum, stratum)
  int64_t given = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    // Exact integer arithmetic: floor(size·total/sum) and its remainder, no rounding.
    out[i] = sizes[i] * total / sum;
    given += out[i];
    remainders.push_back({sizes[i] * total % sum, i});
  }
  std::stable_sort(remainders.begin(), remainders.end(), [&](const auto& a, const auto& b) {
    return std::tie(a.first, sizes[a.second]) > std::tie(b.first, sizes[b.second]);
  });
  for (const auto& [rem, i] : remainders) {
    if (given >= total) break;
    if (out[i] >= sizes[i]) continue;
    ++out[i];
    ++given;
  }
  return out;
}

ordered_json SeedSelection::to_json() const {
  ordered_json s = ordered_json::array();
  for (const auto& x : strata)
    s.push_back({{"definition", x.definition}, {"label", x.label}, {"turn", x.turn}, {"available", x.available}, {"kept", x.kept}});
  return {{"candidates", candidates}, {"no_kernel", no_kernel}, {"kept", kept.size()}, {"underfilled", underfilled},
          {"strata", s}};
}

SeedSelection select_seeds(const SourceSet& sources, const SeedRule& rule) {
  SeedSelection out;
  TurnFilter filter{rule.turn_from, rule.turn_to, rule.labels, PairSource::trajectories};
  // Per definition, per (label, turn) stratum, the candidates in stable order.
  using StratumKey = std::pair<std::string, int64_t>;  // (label key, turn)
  std::map<std::string, std::map<StratumKey, std::vector<FailedTurn>>> by_definition;
  for (const auto& f : select_failed_turns(sources, filter)) {
    const auto& r = sources.trajectories[f.source].turns[f.turn_index];
    if (!r.candidate_source || !r.feedback || r.feedback->empty()) {
      ++out.no_kernel;
      continue;
    }
    ++out.candidates;
    by_definition[f.definition][{report::label_key(f.label), f.turn}].push_back(f);
  }
  for (auto& [definition, strata] : by_definition) {
    std::vector<int64_t> sizes;
    for (const auto& [key, items] : strata) sizes.push_back(static_cast<int64_t>(items.size()));
    if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) < rule.per_definition) out.underfilled.push_back(definition);
    std::vector<int64_t> quota = apportion(sizes, rule.per_definition);
    std::vector<FailedTurn> kept;
    std::size_t k = 0;
    for (auto& [key, items] : strata) {
      const int64_t n = quota[k++];
      std::vector<std::size_t> order(items.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      if (rule.seed)
        order = seeded_permutation(items.size(), derive_seed(*rule.seed, "seeds/" + definition + "/" + key.first + "/" +
                                                                             std::to_string(key.second)));
      std::vector<std::size_t> chosen(order.begin(), order.begin() + n);
      std::sort(chosen.begin(), chosen.end());
      for (auto i : chosen) kept.push_back(items[i]);
      out.strata.push_back({definition, key.first, key.second, static_cast<int64_t>(items.size()), n});
    }
    // Stable order within the definition: turn, then the trajectories' canonical order.
    std::sort(kept.begin(), kept.end(), [](const FailedTurn& a, const FailedTurn& b) {
      return std::tie(a.turn, a.source) < std::tie(b.turn, b.source);
    });
    out.kept.insert(out.kept.end(), kept.begin(), kept.end());
  }
  return out;
}

ordered_json seed_line(const SourceSet& sources, const FailedTurn& f, const std::string& store_path) {
  const SourceTrajectory& t = sources.trajectories.at(f.source);
  const TurnRecord& r = t.turns.at(f.turn_index);
  ordered_json j = {{"definition", t.definition()},
                    {"wrong_source", r.candidate_source.value_or("")},
                    {"feedback", r.feedback.value_or("")},
                    {"status", r.status}};
  if (r.verdict) j["verdict"] = r.verdict->to_json();
  j["origin"] = {{"store", store_path},
                 {"run", t.run_id},
                 {"trajectory", t.info.id},
                 {"turn", r.turn},
                 {"label", report::label_key(f.label)},
                 {"workload", t.info.key.workload_uuid},
                 {"prompt_tag", t.info.key.prompt_tag},
                 {"index", t.info.key.index},
                 {"model", t.model}};
  return j;
}

}  // namespace ptxbench
