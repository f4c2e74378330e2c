// FlashInfer-Bench Solutions: the schema's fields read strictly (errors name the field), and the
// one file ptxbench compiles made from the sources.
#include <gtest/gtest.h>

#include "common/error.h"
#include "compile/solution.h"

using namespace ptxbench;

namespace {

const std::string kData = PTXBENCH_TEST_DATA;

ordered_json cuda_solution() {
  return {{"name", "gemm_demo"},
          {"definition", "gemm_n7168_k5120"},
          {"author", "test"},
          {"spec",
           {{"language", "cuda"},
            {"target_hardware", {"NVIDIA_H100"}},
            {"entry_point", "src/kernel.cu::run"},
            {"binding", "tvm-ffi"},
            {"destination_passing_style", true}}},
          {"sources",
           {{{"path", "src/common.cuh"}, {"content", "#pragma once\nconstexpr int kTile = 128;\n"}},
            {{"path", "src/helper.cu"}, {"content", "#include \"common.cuh\"\nint helper() { return kTile; }\n"}},
            {{"path", "src/kernel.cu"},
             {"content",
              "#include <tvm/ffi/tvm_ffi.h>\n#include \"common.cuh\"\n#include \"./common.cuh\"\n"
              "void run(tvm::ffi::TensorView a) { (void)kTile; }\nTVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);\n"}}}}};
}

// The message of the InputError that reading `j` throws ("" when none).
std::string refusal(const ordered_json& j) {
  try {
    materialize_solution(solution_from_json(j, "s.json"), "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Solution, ReadsTheSchemasFields) {
  Solution s = solution_from_json(cuda_solution(), "s.json");
  EXPECT_EQ(s.name, "gemm_demo");
  EXPECT_EQ(s.definition, "gemm_n7168_k5120");
  EXPECT_EQ(s.language, "cuda");
  EXPECT_EQ(s.binding, "tvm-ffi");
  EXPECT_EQ(s.entry_file, "src/kernel.cu");
  EXPECT_EQ(s.entry_function, "run");
  EXPECT_EQ(s.target_hardware, std::vector<std::string>{"NVIDIA_H100"});
  ASSERT_EQ(s.sources.size(), 3u);
  // What to_json writes reads back the same.
  Solution again = solution_from_json(to_json(s), "again.json");
  EXPECT_EQ(again.entry_file, s.entry_file);
  EXPECT_EQ(again.sources.size(), s.sources.size());
  EXPECT_EQ(again.sources[2].content, s.sources[2].content);
}

TEST(Solution, JoinsTheSourcesIntoOneFileWithTheEntryLast) {
  SolutionCandidate c = materialize_solution(solution_from_json(cuda_solution(), "s.json"), "s.json");
  EXPECT_EQ(c.language, CandidateLanguage::cuda);
  const std::string& src = c.source;
  // The header's text replaces the first include of it, wherever from; later includes are dropped.
  EXPECT_EQ(src.find("#include \"common.cuh\""), std::string::npos) << src;
  EXPECT_EQ(src.find("#include \"./common.cuh\""), std::string::npos) << src;
  std::size_t first = src.find("constexpr int kTile = 128;");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(src.find("constexpr int kTile = 128;", first + 1), std::string::npos) << "inlined twice:\n" << src;
  EXPECT_EQ(src.find("#pragma once"), std::string::npos) << src;
  // The other translation unit comes before the entry point's file.
  std::size_t helper = src.find("int helper()"), entry = src.find("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);");
  ASSERT_NE(helper, std::string::npos);
  ASSERT_NE(entry, std::string::npos);
  EXPECT_LT(helper, entry);
  EXPECT_LT(first, helper);
  // Includes that name no source stay; the entry is "run", so no entry define is needed.
  EXPECT_NE(src.find("#include <tvm/ffi/tvm_ffi.h>"), std::string::npos);
  EXPECT_EQ(src.find("PTXB_TVM_FFI_ENTRY"), std::string::npos);
}

TEST(Solution, AnotherEntryNameIsDefinedForPtxbRun) {
  ordered_json j = cuda_solution();
  j["spec"]["entry_point"] = "src/kernel.cu::gemm";
  j["sources"][2]["content"] = "#include <tvm/ffi/tvm_ffi.h>\nvoid g(tvm::ffi::TensorView a) {}\n"
                               "TVM_FFI_DLL_EXPORT_TYPED_FUNC(plan, g);\nTVM_FFI_DLL_EXPORT_TYPED_FUNC(gemm, g);\n";
  SolutionCandidate c = materialize_solution(solution_from_json(j, "s.json"), "s.json");
  std::size_t define = c.source.find("#define PTXB_TVM_FFI_ENTRY \"gemm\"");
  ASSERT_NE(define, std::string::npos);
  EXPECT_LT(define, c.source.find("#include <tvm/ffi/tvm_ffi.h>"));  // before the header reads it
}

TEST(Solution, RefusalsNameTheField) {
  auto with = [](const char* pointer, ordered_json value) {
    ordered_json j = cuda_solution();
    j[ordered_json::json_pointer(pointer)] = std::move(value);
    return j;
  };
  EXPECT_NE(refusal(with("/spec/language", "python")).find("spec.language"), std::string::npos);
  EXPECT_NE(refusal(with("/spec/binding", "torch")).find("spec.binding"), std::string::npos);
  EXPECT_NE(refusal(with("/spec/destination_passing_style", false)).find("spec.destination_passing_style"),
            std::string::npos);
  EXPECT_NE(refusal(with("/spec/entry_point", "kernel.cu")).find("spec.entry_point"), std::string::npos);
  EXPECT_NE(refusal(with("/spec/entry_point", "src/missing.cu::run")).find("not among the sources"), std::string::npos);
  EXPECT_NE(refusal(with("/spec/entry_point", "src/common.cuh::run")).find(".cu"), std::string::npos);
  EXPECT_NE(refusal(with("/spec/entry_point", "src/kernel.cu::other")).find("'other' is not exported"),
            std::string::npos);
  EXPECT_NE(refusal(with("/sources/0/path", "../escape.cuh")).find("sources[0].path"), std::string::npos);
  EXPECT_NE(refusal(with("/sources/0/path", "/abs/x.cuh")).find("sources[0].path"), std::string::npos);
  EXPECT_NE(refusal(with("/sources/1/path", "src/./common.cuh")).find("listed twice"), std::string::npos);
  EXPECT_NE(refusal(with("/sources", ordered_json::array())).find("sources"), std::string::npos);
  EXPECT_NE(refusal(with("/spec/extra", 1)).find("spec.extra"), std::string::npos);
  ordered_json no_name = cuda_solution();
  no_name.erase("name");
  EXPECT_NE(refusal(no_name).find("name: missing required field"), std::string::npos);
  // binding "ptxb": the file's own ptxb_run is the entry point.
  ordered_json ptxb = with("/spec/binding", "ptxb");
  EXPECT_NE(refusal(ptxb).find("ptxb_run"), std::string::npos);
  ptxb["spec"]["entry_point"] = "src/kernel.cu::ptxb_run";
  EXPECT_EQ(refusal(ptxb), "");
}

TEST(Solution, ATritonSolutionIsItsOnePythonFile) {
  ordered_json j = {{"name", "t"},
                    {"definition", "gemm_n7168_k5120"},
                    {"spec", {{"language", "triton"}, {"entry_point", "main.py::run"}, {"binding", "tvm-ffi"}}},
                    {"sources", {{{"path", "main.py"}, {"content", "def run(A, B, C):\n    pass\n"}}}}};
  SolutionCandidate c = materialize_solution(solution_from_json(j, "t.json"), "t.json");
  EXPECT_EQ(c.language, CandidateLanguage::triton);
  EXPECT_EQ(c.source, "def run(A, B, C):\n    pass\n");
  j["spec"]["entry_point"] = "main.py::kernel";
  EXPECT_NE(refusal(j).find("calls `run`"), std::string::npos);
  j["spec"]["entry_point"] = "main.py::run";
  j["sources"].push_back({{"path", "util.py"}, {"content", "x = 1\n"}});
  EXPECT_NE(refusal(j).find("one Python file"), std::string::npos);
}

TEST(Solution, CandidateFilesByExtension) {
  CandidateFile cu = read_candidate_file(kData + "/fixtures/gemm/wgmma_tma_gemm.cu");
  EXPECT_EQ(cu.language, CandidateLanguage::cuda);
  EXPECT_FALSE(cu.solution);
  CandidateFile json = read_candidate_file(kData + "/fixtures/tvm_ffi/gemm_wgmma_solution.json");
  ASSERT_TRUE(json.solution);
  EXPECT_EQ(json.solution->definition, "gemm_n7168_k5120");
  EXPECT_EQ(json.language, CandidateLanguage::cuda);
  // The fixture's header is inlined at its include, in place of the include.
  EXPECT_EQ(json.source.find("#include \"include/gemm_wgmma_kernel.cuh\""), std::string::npos);
  EXPECT_NE(json.source.find("wgmma.mma_async.sync.aligned.m64n128k16"), std::string::npos);
  EXPECT_NO_THROW(require_solution_definition(*json.solution, "gemm_n7168_k5120", "x"));
  EXPECT_THROW(require_solution_definition(*json.solution, "mha_bwd_d128", "x"), InputError);
}
