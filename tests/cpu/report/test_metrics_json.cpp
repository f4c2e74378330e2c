// The JSON forms both machine-readable outputs share (metrics_json.h): every token kind named, null
// (never 0) where a median, mean or ratio is absent, and provenance with its changed options.
#include <gtest/gtest.h>

#include "report/metrics_json.h"

using namespace ptxbench;
using namespace ptxbench::report;

TEST(MetricsJson, TokenFormsNameEveryKindAndNullTheAbsent) {
  const std::vector<std::string> kinds = {"prompt", "completion", "reasoning", "cached", "total"};
  ordered_json t = tokens_json({1000, 200, 50, 400});
  std::vector<std::string> keys;
  for (const auto& [k, v] : t.items()) keys.push_back(k);
  EXPECT_EQ(keys, kinds);
  EXPECT_EQ(t["total"], 1200) << "prompt + completion: reasoning and cached are parts of them";

  TokenSummary none = token_summary({});
  ordered_json s = token_summary_json(none);
  EXPECT_EQ(s["trajectories"], 0);
  for (const auto& k : kinds) {
    EXPECT_TRUE(s["mean_per_trajectory"][k].is_null()) << k;
    EXPECT_TRUE(s["median_per_trajectory"][k].is_null()) << k;
  }
  TrajectoryObs a, b;
  a.tokens = {100, 10, 0, 0};
  b.tokens = {300, 30, 0, 0};
  ordered_json two = token_summary_json(token_summary({a, b}));
  EXPECT_DOUBLE_EQ(two["mean_per_trajectory"]["prompt"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(two["median_per_trajectory"]["total"].get<double>(), 220.0);
  EXPECT_EQ(token_medians_json(token_summary({a, b})), two["median_per_trajectory"]);

  TokenRatio r;
  r.total = 0.5;
  ordered_json rj = token_ratio_json(r);
  EXPECT_DOUBLE_EQ(rj["total"].get<double>(), 0.5);
  EXPECT_TRUE(rj["prompt"].is_null());
  EXPECT_TRUE(optional_json(std::nullopt).is_null());
}

TEST(MetricsJson, ProvenanceListsEveryChangedOption) {
  Provenance p;
  p.verdicts = 4;
  p.fake_verdicts = 1;
  p.imported_trajectories = 2;
  p.changed_options = {{"timing.trials", "5", "3", 2}};
  ordered_json j = provenance_json(p);
  EXPECT_EQ(j["verdicts"], 4);
  EXPECT_EQ(j["fake_backend_verdicts"], 1);
  EXPECT_EQ(j["imported_trajectories"], 2);
  ASSERT_EQ(j["changed_options"].size(), 1u);
  EXPECT_EQ(j["changed_options"][0]["option"], "timing.trials");
  EXPECT_EQ(j["changed_options"][0]["default"], "3");
  EXPECT_EQ(j["changed_options"][0]["verdicts"], 2);
}
