// The check lane (docs/service.md, "The check lane") gives a task its compile-stage verdict on a CPU
// worker before any GPU worker sees it, and that verdict is final. It must be the one the full
// evaluation gives: a candidate refused there but not here (or the reverse) would get a verdict
// that depends on which worker took it. For every case of the GEMM fixture, adversarial, field-kernel
// and Triton suites, the check backend (device -1, as `worker --lane check` builds it) and a GPU
// worker's backend answer the same request, each with its own compile cache (a check worker on
// another host shares none). The GPU worker's device does not exist, so its evaluation ends after
// the compile stage on any machine: that stage is what is compared.
#include <gtest/gtest.h>

#include <regex>

#include "common/fs.h"
#include "definitions/catalog.h"
#include "service/eval_backend.h"
#include "service/eval_request.h"
#include "service/gpu_eval_backend.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;

namespace {

constexpr int kNoSuchDevice = 99;

std::unique_ptr<EvalBackend> backend_on(const Catalog& catalog, int device, const fs::path& cache) {
  EvalOptions base;
  base.device = device;
  base.compile.cache_dir = cache;
  return make_gpu_backend(catalog, base);
}

// A kernel's name without the hash nvcc gives an anonymous namespace, which differs per build of
// the same source.
std::string stable_name(const std::string& mangled) {
  static const std::regex anonymous("_GLOBAL__N__[0-9a-f]+_");
  return std::regex_replace(mangled, anonymous, "_GLOBAL__N__");
}

// What the compile stage decided, without its timings and cache flags (which differ by design).
ordered_json decided(const Verdict& v) {
  EXPECT_TRUE(v.stages.compile.has_value());
  if (!v.stages.compile) return nullptr;
  const CompileSection& c = *v.stages.compile;
  ordered_json j = {{"status", to_string(c.status)}, {"message", c.message},
                    {"binding", c.binding ? to_string(*c.binding) : "none"}};
  if (c.build) {
    j["key"] = c.build->key;
    j["kernels"] = ordered_json::array();
    for (const auto& k : c.build->kernels) j["kernels"].push_back(stable_name(k));
    j["banned"] = ordered_json::array();
    for (const auto& b : c.build->banned) j["banned"].push_back(b.rule + ":" + b.reason);
  }
  return j;
}

class CheckLaneVerdicts : public ::testing::TestWithParam<const char*> {};

TEST_P(CheckLaneVerdicts, EqualTheFullEvaluationsCompileStage) {
  const CandidateSuite suite = load_suite(fs::path(PTXBENCH_TEST_DATA) / "fixtures" / GetParam());
  const Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  TempDir check_cache, gpu_cache;
  std::unique_ptr<EvalBackend> check = backend_on(catalog, -1, check_cache.path());
  std::unique_ptr<EvalBackend> full = backend_on(catalog, kNoSuchDevice, gpu_cache.path());
  int refused = 0;
  for (const SuiteCase& c : suite.cases) {
    SCOPED_TRACE(c.name);
    EvalRequest r;
    r.definition = suite.definition;
    r.source = c.source;
    r.language = c.language;
    const std::optional<Verdict> early = check->check(r);
    const Verdict v = full->evaluate(r);
    ASSERT_TRUE(v.stages.compile.has_value()) << v.message;
    EXPECT_EQ(early.has_value(), is_compile_stage(c.expect.status)) << (early ? early->message : "passed the check");
    if (early) {
      ++refused;
      EXPECT_EQ(early->status, c.expect.status) << early->message;
      EXPECT_EQ(early->status, v.status) << "the full evaluation: " << v.message;
      EXPECT_EQ(early->message, v.message);
      EXPECT_EQ(decided(*early), decided(v));
    } else {
      // The full evaluation passed the same compile stage and stopped only at the missing device.
      EXPECT_EQ(v.stages.compile->status, CompileStatus::ok) << v.message;
      EXPECT_EQ(v.status, Status::INFRA_ERROR);
      EXPECT_NE(v.message.find("no CUDA device " + std::to_string(kNoSuchDevice)), std::string::npos) << v.message;
    }
  }
  int expected_refusals = 0;
  for (const SuiteCase& c : suite.cases) expected_refusals += is_compile_stage(c.expect.status);
  EXPECT_EQ(refused, expected_refusals);
}

INSTANTIATE_TEST_SUITE_P(Suites, CheckLaneVerdicts,
                         ::testing::Values("gemm/suite.json", "gemm/adversarial_suite.json", "tvm_ffi/suite.json",
                                           "triton/suite.json"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
