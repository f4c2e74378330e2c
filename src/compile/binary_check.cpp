#include "compile/binary_check.h"

#include <regex>

namespace ptxbench {
namespace {

const char* kAllowedLibraries[] = {"libcudart.so", "libcuda.so", "libc.so",      "libm.so",
                                   "libstdc++.so", "libgcc_s.so", "ld-linux",    "libdl.so",
                                   "libpthread.so", "librt.so"};

struct ImportRule {
  const char* id;
  const char* pattern;
  const char* reason;
};
const ImportRule kImportRules[] = {
    {"vendor-library", R"(^(cublas|cudnn|cusparse|cufft|cusolver|nccl|cutlass).*)",
     "imports a banned library symbol"},
    {"dynamic-loading", R"(^dl(open|sym|mopen|vsym)$)", "imports run-time code loading"},
    {"process-creation", R"(^(fork|vfork|popen|system|posix_spawnp?|exec[lv]p?e?)$)",
     "imports process creation"},
    {"file-io", R"(^(fopen|fopen64|freopen|freopen64|fdopen|creat|creat64|open|open64|openat|openat64)$)",
     "imports file access"},
};

}  // namespace

BinaryCheckResult check_candidate_library(const ElfInfo& lib) {
  BinaryCheckResult r;
  bool exported = false, mangled = false;
  for (const auto& s : lib.dynamic_symbols) {
    if (s.name == "ptxb_run" && s.defined && s.is_function() && s.binding != 0) exported = true;
    if (s.name.rfind("_Z8ptxb_run", 0) == 0 && s.defined) mangled = true;
  }
  if (!exported) {
    r.abi_error = mangled ? "ptxb_run is exported with C++ linkage (a mangled name); declare it with "
                            "PTXB_EXPORT from ptxbench_abi.h so it has C linkage"
                          : "the library does not export ptxb_run; declare `PTXB_EXPORT int "
                            "ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream)`";
  }
  for (const auto& s : lib.dynamic_symbols) {
    if (s.defined || s.name.empty()) continue;
    for (const auto& rule : kImportRules)
      if (std::regex_match(s.name, std::regex(rule.pattern)))
        r.banned.push_back({rule.id, rule.reason, s.name});
  }
  for (const auto& lib_name : lib.needed) {
    bool ok = false;
    for (const char* allowed : kAllowedLibraries) ok = ok || lib_name.rfind(allowed, 0) == 0;
    if (!ok)
      r.banned.push_back({"library", "links a library other than the CUDA runtime/driver", lib_name});
  }
  return r;
}

}  // namespace ptxbench
