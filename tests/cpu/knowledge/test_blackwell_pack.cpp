// The Blackwell (B200, sm_100a) knowledge pack: parameters parse and carry the required fields; every
// header compiles on its own for sm_100a and documents each helper; every helper assembles (ptxas);
// the static_asserts reject illegal uses; the sample kernel's PTX holds every tcgen05 family. No GPU
// is needed: this only compiles (each nvcc call takes well under a second).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "common/cuda_tools.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "compile/ptx_stats.h"

using namespace ptxbench;

namespace {

const fs::path kPack = fs::path(PTXBENCH_SOURCE_DIR) / "knowledge" / "blackwell";
const fs::path kInclude = kPack / "include";
const std::vector<std::string> kHeaders = {"sm100.cuh", "sm100_desc.cuh", "sm100_tcgen05.cuh", "sm100_tmem.cuh"};

struct NvccRun {
  bool ok = false;
  std::string log;
};

// nvcc for sm_100a with the pack's include folder; `mode` is -ptx or -cubin.
NvccRun nvcc(const fs::path& source, const fs::path& output, const std::string& mode,
             const std::vector<std::string>& extra_includes = {}) {
  ProcessSpec spec;
  spec.argv = {find_cuda_tool("nvcc"), "-gencode", "arch=compute_100a,code=sm_100a", "-O3", "-std=c++17",
               "-I", kInclude.string()};
  for (const auto& inc : extra_includes) {
    spec.argv.push_back("-I");
    spec.argv.push_back(inc);
  }
  spec.argv.insert(spec.argv.end(), {mode, source.string(), "-o", output.string()});
  ProcessResult r = run_process(spec, 120.0);
  return {r.status.success() && !r.timed_out, r.out.text + r.err.text};
}

void write_source(const fs::path& path, const std::string& text) { write_file_atomic(path, text); }

#define REQUIRE_NVCC()                                                        \
  do {                                                                        \
    if (find_cuda_tool("nvcc").empty()) GTEST_SKIP() << "nvcc not available"; \
  } while (0)

// Resolves "a.b.c" in a JSON object; null when a component is missing.
const nlohmann::json* at_path(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  std::stringstream ss(dotted);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
  }
  return node;
}

}  // namespace

TEST(BlackwellPack, B200ParamsHaveRequiredFields) {
  const nlohmann::json p = nlohmann::json::parse(read_file(kPack / "params" / "b200.json"));
  for (const char* field :
       {"schema", "schema_version", "gpu", "arch", "compute_capability", "nvcc_target", "notes", "estimates",
        "compute.sm_count", "clocks.max_boost_mhz", "throughput_dense.bf16_tensor_tflops",
        "throughput_dense.fp8_tensor_tflops", "throughput_dense.per_sm_per_clock.bf16_tensor_flop",
        "memory.hbm_capacity_gb", "memory.hbm_bandwidth_tb_s", "memory.l2_bytes", "sm_resources.smem_per_sm_bytes",
        "sm_resources.smem_per_block_optin_bytes", "cluster.max_portable_size", "cluster.max_nonportable_size",
        "tmem.lanes", "tmem.columns", "tmem.cell_bits", "tmem.bytes_per_sm", "tcgen05.mma_k.kind_f16"}) {
    EXPECT_NE(at_path(p, field), nullptr) << "missing field " << field;
  }
  EXPECT_EQ(p["schema"], "ptxbench.arch_params");  // same schema as the Hopper pack's h100/h200.json
  EXPECT_EQ(p["arch"], "blackwell");
  EXPECT_EQ(p["compute_capability"], "10.0");
  EXPECT_EQ(p["compute"]["sm_count"].get<int>(), 148);
  EXPECT_EQ(p["tmem"]["lanes"].get<int>(), 128);
  EXPECT_EQ(p["tmem"]["columns"].get<int>(), 512);
  EXPECT_EQ(p["tmem"]["cell_bits"].get<int>(), 32);
  EXPECT_EQ(p["tmem"]["bytes_per_sm"].get<long>(), 128L * 512L * 4L);
  EXPECT_EQ(p["tcgen05"]["mma_k"]["kind_f16"].get<int>(), 16);
  const auto& t = p["throughput_dense"];
  EXPECT_DOUBLE_EQ(t["fp8_tensor_tflops"].get<double>(), 2 * t["bf16_tensor_tflops"].get<double>());
  // The per-SM rate, SM count and reference clock must reproduce the datasheet rate (within 1%).
  const double derived = p["compute"]["sm_count"].get<double>() *
                         t["per_sm_per_clock"]["bf16_tensor_flop"].get<double>() *
                         p["clocks"]["tensor_peak_reference_mhz"].get<double>() * 1e6 / 1e12;
  EXPECT_NEAR(derived / t["bf16_tensor_tflops"].get<double>(), 1.0, 0.01);
  const auto& smem = p["sm_resources"];
  EXPECT_LE(smem["smem_per_block_optin_bytes"].get<long>(), smem["smem_per_sm_bytes"].get<long>());
  EXPECT_GT(p["memory"]["l2_bytes"].get<long>(), 0);
  EXPECT_GT(p["memory"]["hbm_bandwidth_tb_s"].get<double>(), 0.0);
  // Every estimate names a real field; every section cites its source; the notes name the source kinds.
  for (const auto& e : p["estimates"]) EXPECT_NE(at_path(p, e.get<std::string>()), nullptr) << e;
  for (const auto& [key, section] : p.items()) {
    if (section.is_object() && key != "measured") {
      EXPECT_TRUE(section.contains("source")) << key << " has no source";
    }
  }
  const std::string notes = p["notes"].get<std::string>();
  EXPECT_NE(notes.find("datasheet"), std::string::npos);
  EXPECT_NE(notes.find("whitepaper"), std::string::npos);
  EXPECT_NE(notes.find("estimates"), std::string::npos);
}

TEST(BlackwellPack, EveryHeaderCompilesAloneForSm100a) {
  REQUIRE_NVCC();
  TempDir dir("ptxbench-bw-headers");
  for (const auto& h : kHeaders) {
    const fs::path cu = dir.path() / (h + ".cu");
    write_source(cu, "#include \"ptxb/" + h + "\"\n__global__ void ptxb_probe() {}\n");
    NvccRun r = nvcc(cu, dir.path() / (h + ".ptx"), "-ptx");
    EXPECT_TRUE(r.ok) << h << ":\n" << r.log;
  }
}

TEST(BlackwellPack, EveryHelperHasABriefDoc) {
  for (const auto& h : kHeaders) {
    std::stringstream in(read_file(kInclude / "ptxb" / h));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find("__device__ __forceinline__") == std::string::npos) continue;
      // Walk up over template lines (and their indented continuations) and the doc block; one of
      // its lines must be "/// @brief".
      bool documented = false;
      for (size_t j = i; j-- > 0;) {
        const std::string& prev = lines[j];
        if (prev.rfind("template", 0) == 0 || prev.rfind("  ", 0) == 0) continue;
        if (prev.rfind("///", 0) != 0) break;
        if (prev.find("/// @brief") != std::string::npos) documented = true;
      }
      EXPECT_TRUE(documented) << h << ":" << (i + 1) << " has no /// @brief: " << lines[i];
    }
  }
}

TEST(BlackwellPack, EveryHelperAssemblesForSm100a) {
  REQUIRE_NVCC();
  TempDir dir("ptxbench-bw-all");
  const fs::path cu = dir.path() / "all.cu";
  write_source(cu, R"(#include "ptxb/sm100.cuh"
template <int N> __device__ void ldst(uint32_t t, uint32_t* out) {
  uint32_t r[N];
  ptxb::tcgen05_ld_32x32b(t, r);
  ptxb::tcgen05_wait_ld(r);
  ptxb::tcgen05_st_32x32b(t + 256, r);
  ptxb::tcgen05_wait_st();
  for (int i = 0; i < N; ++i) out[i] += r[i];
}
__global__ void all_helpers(uint32_t* out, uint64_t* bar, uint32_t t, uint64_t d) {
  __shared__ uint32_t slot;
  ptxb::tcgen05_alloc<512>(&slot);
  ptxb::tcgen05_relinquish_alloc_permit();
  ptxb::tcgen05_fence_before_thread_sync();
  ptxb::tcgen05_fence_after_thread_sync();
  ldst<1>(t, out); ldst<2>(t, out); ldst<4>(t, out); ldst<8>(t, out);
  ldst<16>(t, out); ldst<32>(t, out); ldst<64>(t, out); ldst<128>(t, out);
  ptxb::tcgen05_wait_ld();
  ptxb::tcgen05_cp<ptxb::TmemCopyShape::s128x256b>(t, d);
  ptxb::tcgen05_cp<ptxb::TmemCopyShape::s128x128b>(t, d);
  ptxb::tcgen05_cp<ptxb::TmemCopyShape::s4x256b>(t, d);
  ptxb::tcgen05_mma_f16_ss<ptxb::make_idesc_f16<128, 256>()>(t, d, d + 1, true);
  ptxb::tcgen05_mma_f16_ss<ptxb::make_idesc_f16<64, 8, ptxb::MmaInput::f16, ptxb::MmaAccum::f16,
                                                ptxb::MmaMajor::mn, ptxb::MmaMajor::mn>()>(t, d, d + 1, out[0] != 0);
  ptxb::tcgen05_mma_f16_ts<ptxb::make_idesc_f16<128, 128>()>(t, t + 128, d, true);
  ptxb::tcgen05_commit(bar);
  out[1] = ptxb::tmem_addr(t, 32, 8) + ptxb::tmem_warp_lane_base(threadIdx.x / 32) +
           (uint32_t)ptxb::make_sm100_smem_desc(&slot, 16, 1024, ptxb::Sm100Swizzle::b128);
  ptxb::tcgen05_dealloc<512>(slot);
}
)");
  NvccRun cubin = nvcc(cu, dir.path() / "all.cubin", "-cubin");
  ASSERT_TRUE(cubin.ok) << cubin.log;
  NvccRun ptx = nvcc(cu, dir.path() / "all.ptx", "-ptx");
  ASSERT_TRUE(ptx.ok) << ptx.log;
  PtxStats s = analyze_ptx(read_file(dir.path() / "all.ptx"));
  EXPECT_EQ(s.count("tcgen05.mma"), 3);
  EXPECT_EQ(s.count("tcgen05.cp"), 3);
  EXPECT_EQ(s.count("tcgen05.ld"), 12);  // x1..x32 once each, x64 as 2 x32, x128 as 4 x32
  EXPECT_EQ(s.count("tcgen05.st"), 12);
  EXPECT_EQ(s.count("tcgen05.alloc"), 1);
  EXPECT_EQ(s.count("tcgen05.dealloc"), 1);
  EXPECT_EQ(s.count("tcgen05.commit"), 1);
}

TEST(BlackwellPack, StaticAssertsRejectIllegalUses) {
  REQUIRE_NVCC();
  TempDir dir("ptxbench-bw-neg");
  const fs::path cu = dir.path() / "bad.cu";
  write_source(cu, R"(#include "ptxb/sm100.cuh"
__global__ void bad(uint32_t* slot, uint32_t t) {
  ptxb::tcgen05_alloc<48>(slot);
  ptxb::tcgen05_dealloc<1024>(t);
  constexpr uint32_t d1 = ptxb::make_idesc_f16<128, 24>();
  constexpr uint32_t d2 = ptxb::make_idesc_f16<256, 64>();
  constexpr uint32_t d3 = ptxb::make_idesc_f16<128, 64, ptxb::MmaInput::bf16, ptxb::MmaAccum::f16>();
  ptxb::tcgen05_mma_f16_ss<0x08100491u>(t, 0, 0, false);  // sparsity-selector bits set
  ptxb::tcgen05_mma_f16_ts<ptxb::make_idesc_f16<128, 64, ptxb::MmaInput::bf16, ptxb::MmaAccum::f32,
                                                ptxb::MmaMajor::mn>()>(t, t, 0, false);
  uint32_t r[3];
  ptxb::tcgen05_ld_32x32b(t, r);
}
)");
  NvccRun r = nvcc(cu, dir.path() / "bad.ptx", "-ptx");
  ASSERT_FALSE(r.ok) << "illegal uses compiled";
  for (const char* message :
       {"nCols must be a power of two", "nCols must be in [32, 512]", "M = 128 needs N in 16..256, step 16",
        "M must be 64 or 128", "bf16 inputs need an f32 accumulator", "illegal instruction descriptor",
        "A must be K-major", ".num must be x1..x128"}) {
    EXPECT_NE(r.log.find(message), std::string::npos) << "no static_assert \"" << message << "\" in:\n" << r.log;
  }
}

TEST(BlackwellPack, SampleKernelHasEveryTcgen05Family) {
  REQUIRE_NVCC();
  TempDir dir("ptxbench-bw-sample");
  const fs::path sample = kPack / "examples" / "sm100_tcgen05_sample.cu";
  NvccRun ptx = nvcc(sample, dir.path() / "sample.ptx", "-ptx");
  ASSERT_TRUE(ptx.ok) << ptx.log;
  NvccRun cubin = nvcc(sample, dir.path() / "sample.cubin", "-cubin");
  ASSERT_TRUE(cubin.ok) << cubin.log;
  EXPECT_GT(fs::file_size(dir.path() / "sample.cubin"), 0u);
  PtxStats s = analyze_ptx(read_file(dir.path() / "sample.ptx"));
  for (const char* family : {"tcgen05.mma", "tcgen05.ld", "tcgen05.st", "tcgen05.cp", "tcgen05.alloc",
                             "tcgen05.dealloc", "tcgen05.commit", "tcgen05.other"}) {
    EXPECT_GE(s.count(family), 1) << family;
  }
  EXPECT_EQ(s.count("tcgen05.alloc"), 1);
  EXPECT_EQ(s.count("tcgen05.dealloc"), 1);
  EXPECT_EQ(s.count("wgmma.mma_async"), 0);
}

TEST(BlackwellPack, CombinesWithHopperPack) {
  REQUIRE_NVCC();
  const fs::path hopper = fs::path(PTXBENCH_SOURCE_DIR) / "knowledge" / "hopper" / "include";
  if (!fs::exists(hopper / "ptxb" / "sm90.cuh")) GTEST_SKIP() << "no Hopper pack";
  TempDir dir("ptxbench-bw-both");
  const fs::path cu = dir.path() / "both.cu";
  // Blackwell kernels use the Hopper mbarrier/TMA helpers: no name may clash.
  write_source(cu, "#include \"ptxb/sm90.cuh\"\n#include \"ptxb/sm100.cuh\"\n__global__ void ptxb_probe() {}\n");
  NvccRun r = nvcc(cu, dir.path() / "both.ptx", "-ptx", {hopper.string()});
  EXPECT_TRUE(r.ok) << r.log;
}
