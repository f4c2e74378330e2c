// Which binding a CUDA candidate uses (its own ptxb_run, or a TVM-FFI export), read from the source.
#include <gtest/gtest.h>

#include "common/error.h"
#include "compile/candidate_binding.h"

using namespace ptxbench;

TEST(CandidateBinding, NamesRoundTrip) {
  EXPECT_EQ(to_string(CandidateBinding::ptxb), "ptxb");
  EXPECT_EQ(to_string(CandidateBinding::tvm_ffi), "tvm-ffi");
  EXPECT_EQ(parse_candidate_binding("tvm-ffi"), CandidateBinding::tvm_ffi);
  EXPECT_EQ(parse_candidate_binding("ptxb"), CandidateBinding::ptxb);
  EXPECT_THROW((void)parse_candidate_binding("torch"), InputError);
}

TEST(CandidateBinding, TheExportMacroMakesATvmFfiCandidate) {
  EXPECT_EQ(detect_binding("#include \"ptxbench_abi.h\"\nPTXB_EXPORT int ptxb_run(const ptxb_tensor*, int32_t, cudaStream_t);"),
            CandidateBinding::ptxb);
  EXPECT_EQ(detect_binding("namespace k { void run(tvm::ffi::TensorView a) {}\nTVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run); }"),
            CandidateBinding::tvm_ffi);
  // Only a comment mentions it: not an export.
  EXPECT_EQ(detect_binding("// TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);\n/* TVM_FFI_DLL_EXPORT_TYPED_FUNC(x, y) */"),
            CandidateBinding::ptxb);
  // Through a macro of the file's own it still is one.
  EXPECT_EQ(detect_binding("#define EXPORT(f) TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, f)\nEXPORT(my_run)"),
            CandidateBinding::tvm_ffi);
}

TEST(CandidateBinding, ExportsAreListedInOrderWithoutComments) {
  const std::string source =
      "TVM_FFI_DLL_EXPORT_TYPED_FUNC(plan, my::plan);\n"
      "// TVM_FFI_DLL_EXPORT_TYPED_FUNC(old, my::old);\n"
      "TVM_FFI_DLL_EXPORT_TYPED_FUNC( run ,\n my::run)\n"
      "#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(ExportName, Function) nothing\n";
  EXPECT_EQ(tvm_ffi_exports(source), (std::vector<std::string>{"plan", "run"}));
  EXPECT_TRUE(tvm_ffi_exports("int x;").empty());
}

TEST(CandidateBinding, TvmHeadersWithoutAnExportAreAnAbiProblem) {
  const std::string no_export = "#include <tvm/ffi/tvm_ffi.h>\nvoid run(tvm::ffi::TensorView a) {}\n";
  EXPECT_NE(binding_problem(no_export).find("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run"), std::string::npos);
  EXPECT_EQ(binding_problem(no_export + "TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);\n"), "");
  // Its own ptxb_run (the TensorView header used for convenience): fine.
  EXPECT_EQ(binding_problem("#include <tvm/ffi/container/tensor.h>\nPTXB_EXPORT int ptxb_run(const ptxb_tensor* a, "
                            "int32_t n, cudaStream_t s) { return 0; }\n"),
            "");
  EXPECT_EQ(binding_problem("#include \"ptxbench_abi.h\"\n"), "");
  // A commented-out include is no include.
  EXPECT_EQ(binding_problem("// #include <tvm/ffi/tvm_ffi.h>\nint x;\n"), "");
}
