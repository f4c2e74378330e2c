// CUDA-PTX beside Triton in `ptxbench report` (issue 22): a run's language comes from its config
// (runs stored without the field are CUDA), every reported run of a language is pooled per model,
// definition and GPU, and each output shows Fast_p per language; the group tables get a Language
// column only when the runs span several languages. Hand-counted on scripted verdicts.
#include <gtest/gtest.h>

#include <regex>

#include "common/fs.h"
#include "report/report_data.h"
#include "report/report_export.h"
#include "report/report_html.h"
#include "report/report_text.h"
#include "test_report_support.h"

using namespace ptxbench;
using namespace ptxbench::report;
using namespace ptxbench::test;

namespace {

const std::string kGemm = "gemm_n7168_k5120";

struct LanguageRuns {
  std::string cuda_old, cuda, triton;
};

// cuda_old (no language field): #0 C(1.5,t); #1 X C(0.8,t). cuda ("language": "cuda"): #0 C(1.1,t).
// triton: #0 X C(1.3, no wgmma/TMA executed); #1 B N.
// Pooled per language: cuda target bests {1.5, 0.8, 1.1} -> Fast_1 2/3, Fast_0 1;
// triton target bests {-, -}, unrestricted {1.3, -} -> Fast_1 0 (0.5), Fast_0 0 (0.5).
LanguageRuns build_language_runs(RunStore& store) {
  LanguageRuns r;
  r.cuda_old = store.create_run({{"policy", "model"}, {"num_turns", 2}}, "model-x", "before the Triton track");
  add_trajectory(store, r.cuda_old, {kGemm, "", "params", 0}, {{"PASSED", 1.5, true}}, stopped_early());
  add_trajectory(store, r.cuda_old, {kGemm, "", "params", 1}, {{"COMPILE_ERROR"}, {"PASSED", 0.8, true}}, finished());
  r.cuda = store.create_run({{"policy", "model"}, {"num_turns", 2}, {"language", "cuda"}}, "model-x", "cuda");
  add_trajectory(store, r.cuda, {kGemm, "", "contract", 0}, {{"PASSED", 1.1, true}}, stopped_early());
  r.triton = store.create_run({{"policy", "model"}, {"num_turns", 2}, {"prompt_tags", {"triton-hopper"}}, {"language", "triton"}},
                              "model-x", "triton");
  add_trajectory(store, r.triton, {kGemm, "", "triton-hopper", 0}, {{"COMPILE_ERROR"}, {"PASSED", 1.3, false}}, finished());
  add_trajectory(store, r.triton, {kGemm, "", "triton-hopper", 1}, {{"BANNED_API"}, {"INCORRECT_NUMERICAL"}}, finished());
  return r;
}

const Group& language_group(const Report& r, const std::string& language) {
  for (const auto& g : r.language_groups)
    if (g.language == language && g.definition == kGemm) return g;
  throw std::runtime_error("no language group " + language);
}

double fast_at(const ordered_json& fast, double p) {
  for (std::size_t i = 0; i < fast["p"].size(); ++i)
    if (fast["p"][i].get<double>() == p) return fast["value"][i].get<double>();
  throw std::runtime_error("p not on the grid");
}

}  // namespace

TEST(ReportLanguages, FastPPerLanguagePoolsEveryRunOfTheLanguage) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  LanguageRuns runs = build_language_runs(store);
  Report r = build_report(store, {runs.cuda_old, runs.cuda, runs.triton}, {2});
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_EQ(r.runs[0].language, "cuda") << "no field: cuda";
  EXPECT_EQ(r.runs[1].language, "cuda");
  EXPECT_EQ(r.runs[2].language, "triton");
  EXPECT_TRUE(r.several_languages());
  for (const auto& g : r.groups) EXPECT_EQ(g.language, g.run_id == runs.triton ? "triton" : "cuda");

  ASSERT_EQ(r.language_groups.size(), 2u) << "cuda gemm, triton gemm (one definition: no (all) rows)";
  EXPECT_EQ(r.language_groups[0].language, "cuda");
  EXPECT_EQ(r.language_groups[1].language, "triton");
  const Group& cuda = language_group(r, "cuda");
  const Group& triton = language_group(r, "triton");
  EXPECT_EQ(cuda.run_id, "");
  EXPECT_EQ(cuda.members.size(), 3u) << "both CUDA runs pooled";
  EXPECT_EQ(triton.members.size(), 2u);
  const auto& c = cuda.metrics.budgets[0];
  const auto& t = triton.metrics.budgets[0];
  EXPECT_DOUBLE_EQ(fast_p(c.bests(InstructionRule::paper), 1.0), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(fast_p(c.bests(InstructionRule::paper), 0.0), 1.0);
  EXPECT_DOUBLE_EQ(fast_p(t.bests(InstructionRule::paper), 1.0), 0.0) << "PASSED without wgmma/TMA does not qualify";
  EXPECT_DOUBLE_EQ(fast_p(t.bests(InstructionRule::unrestricted), 1.0), 0.5);
  EXPECT_DOUBLE_EQ(fast_p(t.bests(InstructionRule::unrestricted), 0.0), 0.5);

  // Terminal (--full): the runs' languages, a Language column in the group tables, and the per-language table.
  std::string text = render_text(r, TextDetail::full);
  EXPECT_NE(text.find("Fast_p by language"), std::string::npos) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(measured +triton +model-x)"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(cuda +model-x +gemm_n7168_k5120 +NVIDIA H200 +3 +66\.7 \(66\.7\) +100\.0 \(100\.0\))")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(triton +model-x +gemm_n7168_k5120 +NVIDIA H200 +2 +0\.0 \(50\.0\) +0\.0 \(50\.0\))")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(Run +Language +Model +Definition +GPU +Traj)"))) << text;

  // JSON: runs and groups carry the language; "languages" holds the pooled rows with Fast_p on the grid.
  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["schema_version"], 4);
  EXPECT_EQ(j["runs"][0]["language"], "cuda");
  EXPECT_EQ(j["runs"][2]["language"], "triton");
  ASSERT_EQ(j["languages"].size(), 2u);
  EXPECT_EQ(j["languages"][1]["language"], "triton");
  EXPECT_EQ(j["languages"][1]["run"], "");
  EXPECT_DOUBLE_EQ(fast_at(j["languages"][0]["budgets"][0]["fast_inst_p"], 1.0), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(fast_at(j["languages"][1]["budgets"][0]["fast_inst_p"], 1.0), 0.0);
  EXPECT_DOUBLE_EQ(fast_at(j["languages"][1]["budgets"][0]["fast_p"], 1.0), 0.5);
  for (const auto& g : j["groups"]) EXPECT_TRUE(g["language"] == "cuda" || g["language"] == "triton");

  // CSV: a language column beside the GPU; the language rows have an empty run.
  std::string csv = report_csv(r);
  EXPECT_EQ(csv.rfind("run,model,definition,experiment,tag,gpu,language,trajectories,metric,", 0), 0u);
  EXPECT_NE(csv.find("\n,model-x,gemm_n7168_k5120,,,NVIDIA H200,triton,2,fast_p,2,1,,,,,0.5,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n,model-x,gemm_n7168_k5120,,,NVIDIA H200,cuda,3,fast_inst_p,2,1,,,,,0.666667,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n" + runs.triton + ",model-x,gemm_n7168_k5120,,,NVIDIA H200,triton,"), std::string::npos);

  // HTML: the same table.
  std::string html = render_html(r);
  EXPECT_NE(html.find("id=\"languages-table\""), std::string::npos);
  EXPECT_NE(html.find("<th>Language</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>triton</td>"), std::string::npos);
}

TEST(ReportLanguages, OneLanguageKeepsTheGroupTablesAsTheyWere) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  LanguageRuns runs = build_language_runs(store);
  Report r = build_report(store, {runs.cuda_old, runs.cuda}, {2});
  EXPECT_FALSE(r.several_languages());
  ASSERT_EQ(r.language_groups.size(), 1u);
  EXPECT_EQ(r.language_groups[0].language, "cuda");
  std::string text = render_text(r, TextDetail::full);
  EXPECT_FALSE(std::regex_search(text, std::regex(R"(Run +Language +Model +Definition)"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(Language +Model +Definition +GPU +Traj +Fast_1)"))) << text;
  EXPECT_EQ(run_language(ordered_json::object()), "cuda");
  EXPECT_EQ(run_language({{"language", "triton"}}), "triton");
  EXPECT_EQ(run_language({{"language", 3}}), "cuda");
}
