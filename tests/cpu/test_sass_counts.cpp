// Static SASS listing, ncu runtime counts and the mechanism rules of paper Table 6.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "sass/ncu_report.h"
#include "sass/sass_listing.h"

using namespace ptxbench;

TEST(SassListing, CountsOpcodesPerFunctionIncludingPredicated) {
  auto per = parse_sass_listing(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/sass_sample.txt"));
  ASSERT_EQ(per.size(), 2u);
  const auto& k = per.at("_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii");
  EXPECT_EQ(k.at("HGMMA"), 2);
  EXPECT_EQ(k.at("UTMALDG"), 2);  // one of them predicated
  EXPECT_EQ(k.at("UTMASTG"), 1);
  EXPECT_EQ(k.at("BRA"), 2);
  EXPECT_EQ(k.at("WARPGROUP"), 2);
  EXPECT_EQ(per.at("_Z6helperPf").at("FFMA"), 1);
  Mechanisms m = mechanisms_from(k);
  EXPECT_TRUE(m.c_gen4);
  EXPECT_TRUE(m.d_tma);
  EXPECT_FALSE(m.c_gen5);
  EXPECT_FALSE(m.d_tmem);
}

TEST(Mechanisms, BlackwellRulesNeedBothMmaAndTmemLoad) {
  EXPECT_FALSE(mechanisms_from({{"UTCHMMA", 4}}).c_gen5);
  EXPECT_TRUE(mechanisms_from({{"UTCHMMA", 4}, {"LDTM", 2}}).c_gen5);
  EXPECT_TRUE(mechanisms_from({{"UTCQMMA", 4}, {"LDT", 2}}).c_gen5);
  EXPECT_TRUE(mechanisms_from({{"UTCCP", 1}}).d_tmem);
  EXPECT_TRUE(mechanisms_from({{"STTM", 1}}).d_tmem);
  EXPECT_FALSE(mechanisms_from({{"UTCHMMA", 1}}).c_gen4);  // tcgen05 MMA is not wgmma
  EXPECT_TRUE(mechanisms_from({{"UTMASTG", 1}}).d_tma);
  EXPECT_FALSE(mechanisms_from({{"UTMAREDG", 1}}).d_tma);  // reductions are not in the paper's D_TMA rule
  EXPECT_TRUE(mechanisms_from({{"QGMMA", 1}}).c_gen4);
  EXPECT_EQ(family_count({{"HGMMA", 3}, {"QGMMA", 2}, {"FFMA", 9}}, "GMMA"), 5);
}

TEST(NcuReport, CsvFieldsAndInstanceValues) {
  auto f = split_csv_line(R"csv("0","a,b","x ""q""",,"1,408 (LDC: 384)")csv");
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[1], "a,b");
  EXPECT_EQ(f[2], "x \"q\"");
  EXPECT_EQ(f[3], "");
  OpcodeCounts c = parse_instance_values("12,345,678 (HGMMA: 1,234,567; UTMALDG: 40; EXIT: 128)");
  EXPECT_EQ(c.at("HGMMA"), 1234567);
  EXPECT_EQ(c.at("UTMALDG"), 40);
  EXPECT_EQ(c.at("EXIT"), 128);
  EXPECT_TRUE(parse_instance_values("0").empty());
}

// Output captured on the H200 (scripts/probe): kernel `pred` has an FFMA that is predicated off
// at run time. The warp count sees it; the predicate-true thread count does not.
TEST(NcuReport, PredicatedOffInstructionsDoNotCount) {
  std::string csv = read_file(std::string(PTXBENCH_TEST_DATA) + "/data/ncu_probe_pred.csv");
  RuntimeSass r = parse_ncu_csv(csv, {"_Z4predPfi"}, "ptxb_internal_");
  ASSERT_TRUE(r.available) << r.note;
  EXPECT_EQ(r.kernels_profiled, 1);
  EXPECT_EQ(r.warp_executed.at("FFMA"), 4);
  EXPECT_EQ(r.thread_true.count("FFMA"), 0u);
  EXPECT_EQ(r.thread_true.at("EXIT"), 128);
  EXPECT_TRUE(r.foreign_kernels.empty());
  RuntimeSass none = parse_ncu_csv(csv, {"_Z5otherv"}, "ptxb_internal_");
  EXPECT_EQ(none.kernels_profiled, 0);
  EXPECT_EQ(none.foreign_kernels, std::vector<std::string>{"_Z4predPfi"});
  EXPECT_FALSE(parse_ncu_csv("==PROF== nothing", {}, "").available);
}

// cuobjdump of knowledge/blackwell/examples/sm100_tcgen05_sample.cu, built for sm_100a here and
// disassembled on the H200 host (cuobjdump reads any architecture): the static Blackwell checks.
TEST(SassListing, BlackwellSampleShowsTcgen05Mechanisms) {
  auto per = parse_sass_listing(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/sm100_tcgen05_sample.sass.txt"));
  ASSERT_EQ(per.size(), 1u);
  const OpcodeCounts& k = per.begin()->second;
  EXPECT_GT(k.at("UTCHMMA"), 0);
  EXPECT_GT(k.at("LDTM"), 0);
  EXPECT_GT(k.at("STTM"), 0);
  EXPECT_GT(k.at("UTCCP"), 0);
  Mechanisms m = mechanisms_from(k);
  EXPECT_TRUE(m.c_gen5);
  EXPECT_TRUE(m.d_tmem);
  EXPECT_FALSE(m.c_gen4);
  EXPECT_GT(family_count(k, "TCGEN05"), 5);
}
