// PTX family counts and the ptxas resource report, on hand-written samples of each format.
#include <gtest/gtest.h>

#include "compile/ptx_stats.h"
#include "compile/ptxas_report.h"

using namespace ptxbench;

TEST(PtxStats, CountsFamiliesAndSkipsDirectivesLabelsComments) {
  const char* ptx = R"(
.version 9.0
.target sm_90a
.visible .entry _Z1kv(
  .param .u64 p
)
{
  .reg .b32 %r<4>;
$L__BB0_1:
  // wgmma.mma_async in a comment does not count
  wgmma.fence.sync.aligned;
  @%p1 wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd1, %rd2, p, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd3, {%r2, %r3}], [%r4];
  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {%r2, %r3}], [%r1];
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1], %r2;
  fence.proxy.async.shared::cta;
  @!%p3 bra $L__BB0_1;
  ret;
}
)";
  PtxStats s = analyze_ptx(ptx);
  EXPECT_EQ(s.count("wgmma.mma_async"), 1);
  EXPECT_EQ(s.count("wgmma.fence"), 1);
  EXPECT_EQ(s.count("wgmma.commit_group"), 1);
  EXPECT_EQ(s.count("wgmma.wait_group"), 1);
  EXPECT_EQ(s.count("cp.async.bulk.tensor"), 2);
  EXPECT_EQ(s.count("cp.async.bulk.tensor:load"), 1);
  EXPECT_EQ(s.count("cp.async.bulk.tensor:store"), 1);
  EXPECT_EQ(s.count("mbarrier"), 1);
  EXPECT_EQ(s.count("fence.proxy.async"), 1);
  EXPECT_EQ(s.count("cp.async"), 0);
  EXPECT_EQ(s.instructions, 10);
}

TEST(PtxStats, TcgenFamilies) {
  PtxStats s = analyze_ptx("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r3, 1;\n"
                           "tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r1}, [%r2];\ntcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n"
                           "tcgen05.fence::before_thread_sync;\n");
  EXPECT_EQ(s.count("tcgen05.mma"), 1);
  EXPECT_EQ(s.count("tcgen05.ld"), 1);
  EXPECT_EQ(s.count("tcgen05.alloc"), 1);
  EXPECT_EQ(s.count("tcgen05.other"), 1);
}

TEST(PtxasReport, ParsesPerKernelResourcesAndWarnings) {
  const char* log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4gemmPKfS0_Pf' for 'sm_90a'
ptxas info    : Function properties for _Z4gemmPKfS0_Pf
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 66560 bytes smem, 400 bytes cmem[0]
ptxas info    : Function properties for _Z6helperv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'
ptxas info    : Function properties for _Z1kPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas warning : (C7508) Potential Performance Loss: setmaxnreg ignored
)";
  PtxasReport r = parse_ptxas_report(log);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "_Z4gemmPKfS0_Pf");
  EXPECT_EQ(r.kernels[0].registers, 168);
  EXPECT_EQ(r.kernels[0].barriers, 1);
  EXPECT_EQ(r.kernels[0].smem_bytes, 66560);
  EXPECT_EQ(r.kernels[0].cmem0_bytes, 400);
  EXPECT_EQ(r.kernels[0].stack_frame_bytes, 8);
  EXPECT_EQ(r.kernels[0].spill_store_bytes, 4);
  EXPECT_EQ(r.kernels[0].spill_load_bytes, 12);
  EXPECT_EQ(r.kernels[1].registers, 10);
  EXPECT_EQ(r.kernels[1].smem_bytes, 0);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("C7508"), std::string::npos);
}
