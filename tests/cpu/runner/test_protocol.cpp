// The worker/runner protocol (src/runner/protocol.*): requests and replies survive the wire both
// ways, the trusted baseline runner's setup carries its workload, and malformed lines are
// InputErrors that name what is wrong (a forged or broken line never reads as a valid request).
#include <gtest/gtest.h>

#include "common/error.h"
#include "definitions/catalog.h"
#include "runner/protocol.h"

using namespace ptxbench;

namespace {
WireTensor shared_tensor(const std::string& name, bool output, int fd) {
  WireTensor t;
  t.spec = TensorSpec{name, DType::bf16, {64, 32}, {32, 1}, output};
  t.fd_index = fd;
  t.alloc_bytes = 2u << 20;
  t.offset = 4096;
  return t;
}

RunnerRequest setup_request(const std::string& library, std::optional<BaselineSetup> baseline) {
  RunnerRequest r;
  r.op = RunnerOp::setup;
  r.seq = 3;
  r.setup = SetupRequest{library, {shared_tensor("A", false, 0), shared_tensor("C", true, 1)}, std::move(baseline)};
  return r;
}

RunnerRequest round_trip(const RunnerRequest& r) {
  return runner_request_from_json(ordered_json::parse(to_json(r).dump()));
}
}  // namespace

TEST(RunnerProtocol, ACandidateSetupSurvivesTheWire) {
  RunnerRequest back = round_trip(setup_request("/scratch/cand/libcand.so", std::nullopt));
  ASSERT_EQ(back.op, RunnerOp::setup);
  EXPECT_EQ(back.seq, 3u);
  ASSERT_TRUE(back.setup);
  EXPECT_EQ(back.setup->library, "/scratch/cand/libcand.so");
  EXPECT_FALSE(back.setup->baseline);
  ASSERT_EQ(back.setup->tensors.size(), 2u);
  EXPECT_EQ(back.setup->tensors[1].spec.name, "C");
  EXPECT_TRUE(back.setup->tensors[1].spec.is_output);
  EXPECT_EQ(back.setup->tensors[1].fd_index, 1);
  EXPECT_EQ(back.setup->tensors[1].offset, 4096u);
}

// A Triton candidate's setup says so: the runner loads that library (the trusted shim) before
// its filter; a CUDA setup never carries the field, and a baseline has no language.
TEST(RunnerProtocol, ATritonCandidatesSetupSaysItsLanguage) {
  RunnerRequest r = setup_request("/cache/triton/ab/abc/candidate.so", std::nullopt);
  EXPECT_FALSE(to_json(r).contains("language"));
  EXPECT_FALSE(round_trip(r).setup->triton);
  r.setup->triton = true;
  EXPECT_EQ(to_json(r)["language"], "triton");
  EXPECT_TRUE(round_trip(r).setup->triton);
  ordered_json j = to_json(r);
  j["language"] = "rust";
  EXPECT_THROW(runner_request_from_json(j), InputError);
  RunnerRequest b = setup_request("", BaselineSetup{"{}", "w", {}, {}});
  ordered_json bj = to_json(b);
  bj["language"] = "triton";
  EXPECT_THROW(runner_request_from_json(bj), InputError);
}

TEST(RunnerProtocol, TheBaselineRunnersSetupCarriesItsWorkload) {
  BaselineSetup b{R"({"name": "gemm_n7168_k5120"})", "gemm-m8192", {{"M", 8192}}, {}};
  RunnerRequest back = round_trip(setup_request("", b));
  ASSERT_TRUE(back.setup && back.setup->baseline);
  EXPECT_TRUE(back.setup->library.empty());
  EXPECT_EQ(back.setup->baseline->definition, b.definition);
  EXPECT_EQ(back.setup->baseline->workload, "gemm-m8192");
  EXPECT_EQ(back.setup->baseline->axes, b.axes);
}

// The baseline runner rebuilds its workload from the setup: the axes and the input samplers both.
// A GQA baseline refuses index arrays that are not "derived" (its cuDNN plan is made for the
// workload's layout), and a scalar keeps its value.
TEST(RunnerProtocol, TheBaselineRunnersWorkloadKeepsItsInputSamplers) {
  const Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  for (const char* name : {"gqa_paged_decode_h24_kv8_d128_ps1", "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                           "gqa_ragged_prefill_causal_h32_kv4_d128"}) {
    SCOPED_TRACE(name);
    const Definition& def = catalog.definition(name);
    const ResolvedWorkload w = resolve_workload(def, catalog.default_workload(name));
    RunnerRequest back = round_trip(setup_request("", baseline_setup(w)));
    ASSERT_TRUE(back.setup && back.setup->baseline);
    const Workload rebuilt = baseline_workload(*back.setup->baseline, def.name);
    EXPECT_EQ(rebuilt.definition, def.name);
    EXPECT_EQ(rebuilt.axes, w.workload.axes);
    ASSERT_EQ(rebuilt.inputs.size(), w.workload.inputs.size());
    for (const auto& [input, sampler] : w.workload.inputs) {
      EXPECT_EQ(rebuilt.inputs.at(input).kind, sampler.kind) << input;
      EXPECT_EQ(rebuilt.inputs.at(input).value, sampler.value) << input;
    }
    EXPECT_EQ(rebuilt.inputs.at("kv_indptr").kind, "derived");
    EXPECT_EQ(rebuilt.inputs.at("sm_scale").kind, "scalar");
    EXPECT_GT(rebuilt.inputs.at("sm_scale").value, 0.0);
    EXPECT_EQ(resolve_workload(def, rebuilt).tensors.size(), w.tensors.size());
  }
}

TEST(RunnerProtocol, TheSharedL2FlushBufferTravelsWithTheSetupWithinItsRange) {
  RunnerRequest r = setup_request("/x/lib.so", std::nullopt);
  EXPECT_EQ(round_trip(r).setup->flush_fd_index, -1);
  r.setup->flush_fd_index = 2;
  r.setup->flush_bytes = 120u << 20;
  RunnerRequest back = round_trip(r);
  EXPECT_EQ(back.setup->flush_fd_index, 2);
  EXPECT_EQ(back.setup->flush_bytes, 120u << 20);
  r.setup->flush_bytes = std::size_t{1} << 40;  // a worker bug must not make the runner map a terabyte
  EXPECT_THROW(round_trip(r), InputError);
}

TEST(RunnerProtocol, ASetupNamesEitherALibraryOrABaseline) {
  BaselineSetup b{"{}", "w", {}};
  EXPECT_THROW(round_trip(setup_request("/x/lib.so", b)), InputError);
  EXPECT_THROW(round_trip(setup_request("", std::nullopt)), InputError);
}

TEST(RunnerProtocol, CallsKeepTheirTargetAndIndex) {
  RunnerRequest back = round_trip(call_request(41));
  ASSERT_TRUE(back.call);
  EXPECT_EQ(back.call->index, 41u);
  EXPECT_EQ(back.call->target, CallTarget::candidate);
  back = round_trip(call_request(42, CallTarget::probe, 250.0));
  ASSERT_TRUE(back.call);
  EXPECT_EQ(back.call->target, CallTarget::probe);
  EXPECT_DOUBLE_EQ(back.call->probe_us, 250.0);
}

TEST(RunnerProtocol, MalformedRequestsAreInputErrorsThatSayWhat) {
  auto error_of = [](const std::string& line) -> std::string {
    try {
      (void)runner_request_from_json(ordered_json::parse(line));
    } catch (const InputError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_NE(error_of(R"({"op": "fork"})").find("unknown op 'fork'"), std::string::npos);
  EXPECT_NE(error_of(R"({"op": "call"})").find("malformed call request"), std::string::npos);
  EXPECT_NE(error_of(R"({"op": "call", "index": 1, "target": "worker"})").find("unknown call target"), std::string::npos);
  EXPECT_NE(error_of(R"({"op": "setup", "library": "l.so", "tensors": [{"name": "A", "dtype": "bfloat16", "shape": [4],
      "strides": [1], "is_output": false, "fd_index": 0, "alloc_bytes": 4, "offset": 0}]})")
                .find("does not fit its shared allocation"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"op": "setup", "library": "", "tensors": [], "baseline": {"definition": "{}"}})")
                .find("malformed setup request"),
            std::string::npos);
}

TEST(RunnerProtocol, RepliesCarryFailuresSpansAndTheBaselinesName) {
  RunnerReply r;
  r.seq = 9;
  r.baseline = "cuDNN SDPA";
  r.seccomp = "session";
  r.violations = {"fork"};
  r.failure = RunnerFailureInfo{FailureKind::call, 700, "an illegal memory access"};
  RunnerReply back = runner_reply_from_json(ordered_json::parse(to_json(r).dump()));
  EXPECT_EQ(back.seq, 9u);
  EXPECT_EQ(back.baseline, "cuDNN SDPA");
  EXPECT_EQ(back.seccomp, "session");
  EXPECT_EQ(back.violations, r.violations);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.failure->kind, FailureKind::call);
  EXPECT_EQ(back.failure->code, 700);
  // A reply that says it failed must say how.
  EXPECT_THROW((void)runner_reply_from_json(ordered_json::parse(R"({"ok": false, "seq": 1})")), InputError);
}
