// Candidate suites: loading, materializing edit variants, strict errors, the expectation check,
// and the compile-stage verdicts of the GEMM fixtures with the real nvcc.
#include <gtest/gtest.h>

#include "common/error.h"
#include "compile/compiler.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;

namespace {

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures/gemm"; }

std::string load_error(const std::string& suite_text) {
  TempDir dir;
  write_file_atomic(dir.path() / "base.cu", "int a = 1;\nint b = 2;\nint b2 = 2;\n");
  write_file_atomic(dir.path() / "suite.json", suite_text);
  try {
    (void)load_suite(dir.path() / "suite.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CandidateSuite, GemmFixturesLoadAndVariantsAreSelfContained) {
  CandidateSuite s = load_suite(fixtures() / "suite.json");
  EXPECT_EQ(s.definition, "gemm_n7168_k5120");
  ASSERT_GE(s.cases.size(), 12u);
  for (const auto& c : s.cases) {
    EXPECT_NE(c.source.find("ptxbench_abi.h"), std::string::npos) << c.name;
    EXPECT_FALSE(to_string(c.expect.status).empty()) << c.name;
  }
  auto find = [&](const std::string& n) -> const SuiteCase& {
    for (const auto& c : s.cases)
      if (c.name == n) return c;
    throw std::runtime_error("no case " + n);
  };
  EXPECT_NE(find("wrong_result").source.find("const int KT = (K - 1) / BK;"), std::string::npos);
  EXPECT_EQ(find("wrong_result").source.rfind("// ptxbench suite case wrong_result", 0), 0u);
  EXPECT_EQ(find("wrong_result").origin, "simt_tiled_gemm.cu + 1 edit");
  EXPECT_NE(find("wgmma_never_taken").source.find("wgmma.mma_async"), std::string::npos);
  EXPECT_EQ(find("simt_tiled_gemm").source.find("(K - 1) / BK"), std::string::npos);
}

TEST(CandidateSuite, MalformedSuitesNameTheCaseAndField) {
  const char* ok = R"({"definition": "d", "cases": [{"name": "v", "base": "base.cu", "edits": [{"find": "int a = 1;", "replace": "int a = 3;"}], "expect": {"status": "PASSED"}}]})";
  EXPECT_EQ(load_error(ok), "");
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "base": "base.cu", "edits": [{"find": "int c", "replace": ""}], "expect": {"status": "PASSED"}}]})")
                .find("cases[0].edits[0].find: matches 0 times"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "base": "base.cu", "edits": [{"find": "int b", "replace": ""}], "expect": {"status": "PASSED"}}]})")
                .find("matches 2 times"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "base.cu", "base": "base.cu", "expect": {"status": "PASSED"}}]})")
                .find("exactly one of"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "base.cu", "expect": {"status": "PASSED", "c_gen5": true}}]})")
                .find("cases[0].expect.c_gen5: unknown field"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "nope.cu", "expect": {"status": "PASSED"}}]})")
                .find("cannot read"), std::string::npos);
  EXPECT_NE(load_error(R"({"definition": "d", "cases": []})").find("non-empty"), std::string::npos);
}

// A case may edit a kernel of a folder beside the suite's (no fixture is copied between folders),
// but nothing above the suite's parent folder; absolute paths are refused.
TEST(CandidateSuite, ABaseMayLieInASiblingFolderButNotAboveTheParent) {
  TempDir root;
  const fs::path tree = root.path() / "fixtures";
  fs::create_directories(tree / "gemm");
  fs::create_directories(tree / "tvm_ffi");
  write_file_atomic(tree / "gemm" / "base.cu", "int a = 1;\n");
  write_file_atomic(root.path() / "outside.cu", "int a = 1;\n");
  auto load = [&](const std::string& field, const std::string& file) {
    ordered_json c = {{"name", "v"}, {field, file}, {"expect", {{"status", "PASSED"}}}};
    if (field == "base") c["edits"] = ordered_json::array({{{"find", "a = 1"}, {"replace", "a = 2"}}});
    ordered_json suite = {{"definition", "d"}, {"cases", ordered_json::array({c})}};
    write_file_atomic(tree / "tvm_ffi" / "suite.json", suite.dump());
    return load_suite(tree / "tvm_ffi" / "suite.json");
  };
  CandidateSuite s = load("base", "../gemm/base.cu");
  EXPECT_EQ(s.cases[0].origin, "../gemm/base.cu + 1 edit");
  EXPECT_NE(s.cases[0].source.find("int a = 2;"), std::string::npos) << s.cases[0].source;
  EXPECT_EQ(load("file", "../gemm/base.cu").cases[0].source, "int a = 1;\n");
  // A path through the folder itself is judged by where it ends.
  EXPECT_EQ(load("file", "../tvm_ffi/../gemm/base.cu").cases[0].source, "int a = 1;\n");
  for (const char* field : {"base", "file"})
    for (const std::string& far : {std::string("../../outside.cu"), std::string("../gemm/../../outside.cu"),
                                   (root.path() / "outside.cu").string(), (tree / "gemm" / "base.cu").string()}) {
      SCOPED_TRACE(std::string(field) + " " + far);
      try {
        (void)load(field, far);
        ADD_FAILURE() << "accepted";
      } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(std::string("cases[0].") + field + ":"), std::string::npos) << what;
        EXPECT_TRUE(what.find("outside") != std::string::npos || what.find("relative") != std::string::npos) << what;
      }
    }
}

// "base_case": a variant of an edited kernel states only its own edit, applied to the earlier case's
// candidate (without that case's origin line); the language follows the base case.
TEST(CandidateSuite, ACaseMayEditAnEarlierCase) {
  TempDir dir;
  write_file_atomic(dir.path() / "k.py", "x = 1\ny = 2\n");
  write_file_atomic(dir.path() / "suite.json", R"({"definition": "d", "cases": [
      {"name": "first", "base": "k.py", "edits": [{"find": "x = 1", "replace": "x = 3"}], "expect": {"status": "PASSED"}},
      {"name": "second", "base_case": "first", "description": "y off", "edits": [{"find": "y = 2", "replace": "y = 4"}],
       "expect": {"status": "INCORRECT_NUMERICAL"}}]})");
  CandidateSuite s = load_suite(dir.path() / "suite.json");
  const SuiteCase& second = s.case_named("second");
  EXPECT_EQ(second.origin, "case first + 1 edit");
  EXPECT_EQ(second.language, CandidateLanguage::triton);
  EXPECT_EQ(second.source, "# ptxbench suite case second (case first + 1 edit): y off\nx = 3\ny = 4\n");
  EXPECT_THROW((void)s.case_named("third"), InputError);

  // Only an earlier case; the edits must match in it; never together with a file or a base.
  auto error = [&](const std::string& cases) {
    write_file_atomic(dir.path() / "suite.json", R"({"definition": "d", "cases": [)" + cases + "]}");
    try {
      (void)load_suite(dir.path() / "suite.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string first = R"({"name": "first", "file": "k.py", "expect": {"status": "PASSED"}})";
  EXPECT_NE(error(R"({"name": "second", "base_case": "first", "edits": [{"find": "y", "replace": "z"}], "expect": {"status": "PASSED"}}, )" + first)
                .find("cases[0].base_case: no earlier case named 'first'"), std::string::npos);
  EXPECT_NE(error(first + R"(, {"name": "second", "base_case": "first", "edits": [{"find": "z", "replace": "w"}], "expect": {"status": "PASSED"}})")
                .find("cases[1].edits[0].find: matches 0 times in case first"), std::string::npos);
  EXPECT_NE(error(first + R"(, {"name": "second", "base_case": "first", "base": "k.py", "edits": [{"find": "y", "replace": "z"}], "expect": {"status": "PASSED"}})")
                .find("exactly one of"), std::string::npos);
  EXPECT_NE(error(first + R"(, {"name": "second", "base_case": "first", "expect": {"status": "PASSED"}})").find("cases[1].edits: missing"),
            std::string::npos);
}

TEST(CandidateSuite, ExpectationMismatchesAreSpecific) {
  SuiteExpectation want{Status::PASSED, true, true, false};
  Verdict v;
  v.status = Status::PASSED;
  v.runtime_mechanisms = Mechanisms{true, false, false, false};
  StaticSassSection& s = v.stages.static_sass.emplace();
  s.available = true;
  s.counts.gmma = 4;
  EXPECT_TRUE(expectation_mismatches(want, v).empty());
  v.runtime_mechanisms->c_gen4 = false;
  auto m = expectation_mismatches(want, v);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("C_Gen4 (wgmma) not executed"), std::string::npos);
  v.status = Status::TIMEOUT;
  EXPECT_NE(expectation_mismatches(want, v)[0].find("status TIMEOUT, expected PASSED"), std::string::npos);
  s.counts.gmma = 0;
  EXPECT_EQ(expectation_mismatches(want, v).size(), 2u);
  v.status = Status::PASSED;
  v.runtime_mechanisms.reset();
  EXPECT_NE(expectation_mismatches(want, v)[1].find("C_Gen4 (wgmma) not measured"), std::string::npos);
}

TEST(CandidateSuite, UnknownExpectedStatusIsRefusedWithTheKnownOnes) {
  std::string e = load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "base.cu", "expect": {"status": "PASS"}}]})");
  EXPECT_NE(e.find("cases[0].expect.status: unknown verdict status 'PASS' (expected PASSED, COMPILE_ERROR"), std::string::npos) << e;
}

// The verdicts the compile stage alone decides, checked here without a GPU.
TEST(CandidateSuite, CompileStageVerdictsOfTheGemmFixtures) {
  CandidateSuite s = load_suite(fixtures() / "suite.json");
  TempDir cache;
  CompileOptions o;
  o.cache_dir = cache.path();
  Compiler compiler(o);
  for (const auto& c : s.cases) {
    CompileResult r = compiler.compile(c.source);
    SCOPED_TRACE(c.name + ": " + r.message);
    if (c.expect.status == Status::COMPILE_ERROR) EXPECT_EQ(r.status, CompileStatus::compile_error);
    else if (c.expect.status == Status::BANNED_API) EXPECT_EQ(r.status, CompileStatus::banned_api);
    else if (c.expect.status == Status::ABI_ERROR) EXPECT_EQ(r.status, CompileStatus::abi_error);
    else EXPECT_EQ(r.status, CompileStatus::ok);
    if (c.name == "wgmma_tma_gemm") {
      EXPECT_EQ(r.ptx.count("wgmma.mma_async"), 4);
      EXPECT_GT(r.ptx.count("cp.async.bulk.tensor:load"), 0);
      EXPECT_GT(r.ptx.count("mbarrier"), 0);
    }
  }
}

// The profile-switch cases of the adversarial suite expect the paper's target rule to fail (their
// profiles are void); the expectation is checked against the verdict's own flag.
TEST(CandidateSuite, TheTargetRuleIsAnExpectationAndTheProfileSwitchCasesUseIt) {
  SuiteExpectation want;
  want.target = false;
  Verdict v;
  v.status = Status::PASSED;
  v.runtime_mechanisms = Mechanisms{};
  EXPECT_TRUE(expectation_mismatches(want, v).empty());
  v.target_instruction_correct = true;
  auto m = expectation_mismatches(want, v);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("target-instruction rule met"), std::string::npos);

  CandidateSuite s = load_suite(fixtures() / "adversarial_suite.json");
  int profile_cases = 0;
  for (const auto& c : s.cases)
    if (c.name.rfind("profile_", 0) == 0) {
      ++profile_cases;
      EXPECT_EQ(c.origin.rfind("wgmma_tma_gemm.cu", 0), 0u) << c.name << ": the switch sits in the wgmma fixture's kernel";
      EXPECT_FALSE(c.expect.c_gen4.value_or(true)) << c.name << " must never be credited with wgmma";
    }
  EXPECT_EQ(profile_cases, 5);
}

// An outcome that depends on the card (the flooding case: CUPTI drops records on one, the reply
// overflows on another) lists its other accepted statuses; each must charge the candidate.
TEST(CandidateSuite, AlsoAcceptedStatusesMatchAndMustChargeTheCandidate) {
  SuiteExpectation want;
  want.status = Status::TIMING_ANOMALY;
  want.also_accepted = {Status::RUNTIME_ERROR};
  Verdict v;
  v.status = Status::RUNTIME_ERROR;
  EXPECT_TRUE(expectation_mismatches(want, v).empty());
  v.status = Status::TIMING_ANOMALY;
  EXPECT_TRUE(expectation_mismatches(want, v).empty());
  v.status = Status::INFRA_ERROR;
  auto m = expectation_mismatches(want, v);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], "status INFRA_ERROR, expected TIMING_ANOMALY");

  auto with = [](const std::string& also) {
    return load_error(R"({"definition": "d", "cases": [{"name": "v", "file": "base.cu", "expect": {"status": "TIMING_ANOMALY", "also_accepted": )" +
                      also + "}}]}");
  };
  EXPECT_EQ(with(R"(["RUNTIME_ERROR"])"), "");
  EXPECT_NE(with(R"(["INFRA_ERROR"])").find("cases[0].expect.also_accepted: INFRA_ERROR cannot be an also-accepted status"),
            std::string::npos);
  EXPECT_NE(with(R"(["PASSED"])").find("PASSED cannot be an also-accepted status"), std::string::npos);
  EXPECT_NE(with(R"(["CRASHED"])").find("cases[0].expect.also_accepted: unknown verdict status 'CRASHED'"), std::string::npos);

  CandidateSuite adversarial = load_suite(fixtures() / "adversarial_suite.json");
  const SuiteCase& flood = adversarial.case_named("flood_the_activity_records");
  EXPECT_EQ(flood.expect.status, Status::TIMING_ANOMALY);
  EXPECT_EQ(flood.expect.also_accepted, std::vector<Status>{Status::RUNTIME_ERROR});
}
