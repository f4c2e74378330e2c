#include "report/metrics_json.h"

namespace ptxbench::report {
namespace {

// One value per token kind, null where absent.
ordered_json token_kinds_json(const std::optional<double>& prompt, const std::optional<double>& completion,
                              const std::optional<double>& reasoning, const std::optional<double>& cached,
                              const std::optional<double>& total) {
  return {{"prompt", optional_json(prompt)},
          {"completion", optional_json(completion)},
          {"reasoning", optional_json(reasoning)},
          {"cached", optional_json(cached)},
          {"total", optional_json(total)}};
}

}  // namespace

ordered_json optional_json(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

ordered_json tokens_json(const TokenCounts& t) {
  return {{"prompt", t.prompt}, {"completion", t.completion}, {"reasoning", t.reasoning}, {"cached", t.cached}, {"total", t.total()}};
}

ordered_json token_medians_json(const TokenSummary& s) {
  return token_kinds_json(s.median_prompt, s.median_completion, s.median_reasoning, s.median_cached, s.median_total);
}

ordered_json token_summary_json(const TokenSummary& s) {
  return {{"trajectories", s.trajectories},
          {"total", tokens_json(s.total)},
          {"mean_per_trajectory", token_kinds_json(s.mean_prompt, s.mean_completion, s.mean_reasoning, s.mean_cached, s.mean_total)},
          {"median_per_trajectory", token_medians_json(s)}};
}

ordered_json token_ratio_json(const TokenRatio& r) { return token_kinds_json(r.prompt, r.completion, r.reasoning, r.cached, r.total); }

ordered_json provenance_json(const Provenance& p) {
  ordered_json changes = ordered_json::array();
  for (const auto& c : p.changed_options)
    changes.push_back({{"option", c.option}, {"value", c.value}, {"default", c.default_value}, {"verdicts", c.verdicts}});
  return {{"verdicts", p.verdicts},
          {"fake_backend_verdicts", p.fake_verdicts},
          {"changed_options", changes},
          {"imported_trajectories", p.imported_trajectories}};
}

}  // namespace ptxbench::report
