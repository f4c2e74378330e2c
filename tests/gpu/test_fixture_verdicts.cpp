// The evaluator against its fixture suite (tests/fixtures/gemm, expectations in expected.json):
// every fixture gets its expected verdict, and the evaluator itself survives the hang, the crash
// and the out-of-bounds write (this process goes on to evaluate a good kernel afterwards).
#include <cstdlib>
#include <fmt/format.h>

#include "common/fs.h"
#include "definitions/catalog.h"
#include "gpu_test_support.h"
#include "worker/evaluator.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm"; }

EvalOptions test_options() {
  EvalOptions o;
  o.seed = 20261129;
  o.sanitize_timeout_s = 30;  // hang fixtures cost seconds, not minutes, of device time
  o.call_timeout_s = 10;
  return o;
}

void keep_verdict(const std::string& name, const Verdict& v) {
  const char* out = std::getenv("PTXBENCH_TEST_OUT");
  if (out && *out) write_file_atomic(fs::path(out) / (fs::path(name).stem().string() + ".verdict.json"), v.to_json().dump(2));
}

}  // namespace

class FixtureVerdicts : public GpuTest {};

TEST_F(FixtureVerdicts, EveryFixtureGetsItsExpectedVerdict) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  Evaluator evaluator(catalog, test_options());
  ordered_json expected = ordered_json::parse(read_file(fixtures() / "expected.json"));
  ASSERT_GE(expected.size(), 10u);
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    const std::string& file = it.key();
    const auto& want = it.value();
    SCOPED_TRACE(file);
    Verdict v = evaluator.evaluate_source("gemm_n7168_k5120", "", read_file(fixtures() / file));
    keep_verdict(file, v);
    ordered_json doc = v.to_json();
    fmt::print("[fixture] {:<32} {:<20} {}\n", file, doc["status"].get<std::string>(), v.message.substr(0, 160));
    EXPECT_EQ(doc["status"], want["status"]) << v.message;
    const auto& stages = doc["stages"];
    if (want.contains("static_hgmma") && want["static_hgmma"].is_boolean() && stages.contains("static_sass")) {
      EXPECT_EQ(stages["static_sass"].value("gmma", 0LL) > 0, want["static_hgmma"].get<bool>());
    }
    if (v.status == Status::PASSED) {
      ASSERT_TRUE(v.runtime_mechanisms.has_value());
      if (want["c_gen4"].is_boolean()) EXPECT_EQ(v.runtime_mechanisms->c_gen4, want["c_gen4"].get<bool>());
      if (want["d_tma"].is_boolean()) EXPECT_EQ(v.runtime_mechanisms->d_tma, want["d_tma"].get<bool>());
      EXPECT_EQ(v.target_instruction_correct, target_instruction_met("sm_90a", *v.runtime_mechanisms));
      ASSERT_TRUE(v.speedup.has_value());
      EXPECT_GT(*v.speedup, 0.0);
    }
  }
  // Still alive after the hang, crash and out-of-bounds fixtures: a good kernel still passes.
  Verdict after = evaluator.evaluate_source("gemm_n7168_k5120", "", read_file(fixtures() / "simt_tiled_gemm.cu"));
  EXPECT_EQ(after.status, Status::PASSED) << after.message;
}
