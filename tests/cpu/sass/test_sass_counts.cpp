// Static SASS listing, ncu runtime counts and the mechanism rules of paper Table 6.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/error.h"
#include "sass/ncu_report.h"
#include "sass/pc_counts.h"
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

// A cubin without any of these opcodes cannot execute a mechanism: the profile is skipped.
TEST(Mechanisms, MechanismOpcodesDecideWhetherTheProfileRuns) {
  EXPECT_FALSE(has_mechanism_opcodes({{"FFMA", 9}, {"LDS", 4}, {"HMMA", 2}}));  // mma.sync is not wgmma
  EXPECT_TRUE(has_mechanism_opcodes({{"FFMA", 9}, {"HGMMA", 1}}));
  EXPECT_TRUE(has_mechanism_opcodes({{"UTMALDG", 1}}));
  EXPECT_TRUE(has_mechanism_opcodes({{"UTMAREDG", 1}}));
  EXPECT_TRUE(has_mechanism_opcodes({{"LDTM", 1}}));
  EXPECT_FALSE(has_mechanism_opcodes({}));
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

// Output captured on the H200 (scripts/bench/gpu_host_probe.sh): kernel `pred` has an FFMA that is predicated off
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

// The trick of a candidate that names its kernel like the evaluator's own (`ptxb_internal_…`, which
// a profile leaves out of the foreign list and a builtin's launches) to have it ignored: a kernel
// of the candidate's cubin is counted whatever its name; the prefix only spares our kernels.
TEST(NcuReport, ACandidateKernelNamedLikeOursIsStillCounted) {
  std::string csv = read_file(std::string(PTXBENCH_TEST_DATA) + "/data/ncu_probe_pred.csv");
  const std::string disguised = "_Z18ptxb_internal_predPfi";
  for (std::size_t at = csv.find("_Z4predPfi"); at != std::string::npos; at = csv.find("_Z4predPfi", at))
    csv.replace(at, 10, disguised);
  RuntimeSass r = parse_ncu_csv(csv, {disguised}, "ptxb_internal_");
  ASSERT_TRUE(r.available) << r.note;
  EXPECT_EQ(r.kernels_profiled, 1);
  EXPECT_EQ(r.thread_true.at("EXIT"), 128);
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].name, disguised);
  // Not the candidate's (not in its cubin): ours, neither counted nor foreign.
  RuntimeSass ours = parse_ncu_csv(csv, {"_Z5otherv"}, "ptxb_internal_");
  EXPECT_EQ(ours.kernels_profiled, 0);
  EXPECT_TRUE(ours.foreign_kernels.empty());
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

TEST(SassListing, InstructionOffsetsPerFunction) {
  PcOpcodes pcs = parse_sass_pcs(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/sass_sample.txt"));
  const auto& k = pcs.at("_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii");
  EXPECT_EQ(k.at(0x0), "LDC");
  EXPECT_EQ(k.at(0x40), "UTMALDG");  // predicated: the opcode, not the guard
  EXPECT_EQ(k.at(0x60), "HGMMA");
  EXPECT_EQ(k.at(0xb0), "BRA");
  EXPECT_EQ(k.count(0x08), 0u);
  EXPECT_EQ(pcs.at("_Z6helperPf").at(0x10), "EXIT");
  EXPECT_EQ(count_opcodes(pcs), parse_sass_listing(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/sass_sample.txt")));
}

// CUPTI per-instruction counts mapped through the listing: an HGMMA whose predicate is false on
// every thread is in the warp counts but proves nothing; kernels outside the cubin are foreign.
TEST(PcCounts, MapsOffsetsToOpcodesAndKeepsPredicatedOffOut) {
  PcOpcodes pcs = parse_sass_pcs(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/sass_sample.txt"));
  const std::string gemm = "_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii";
  SassCounts counts;
  counts.instructions = {{gemm, 0x60, 8, 0},   {gemm, 0x70, 8, 0},   {gemm, 0x30, 4, 4},
                         {gemm, 0x40, 4, 128}, {gemm, 0xa0, 8, 256}, {"_ZN8ptxbench14ptxb_internal_fillEv", 0x0, 1, 32},
                         {"_Z7foreignv", 0x0, 2, 64}};
  counts.launched = {gemm, "_ZN8ptxbench14ptxb_internal_fillEv", "_Z7foreignv"};
  RuntimeSass r = runtime_sass_from_counts(counts, pcs, {gemm, "_Z6helperPf"}, "ptxb_internal_");
  ASSERT_TRUE(r.available) << r.note;
  EXPECT_EQ(r.warp_executed.at("HGMMA"), 16);
  EXPECT_EQ(r.thread_true.count("HGMMA"), 0u);
  EXPECT_EQ(r.thread_true.at("UTMALDG"), 132);
  EXPECT_EQ(r.thread_true.at("EXIT"), 256);
  EXPECT_EQ(r.thread_true_per_kernel.at(gemm).at("UTMALDG"), 132);
  EXPECT_FALSE(r.mechanisms.c_gen4);
  EXPECT_TRUE(r.mechanisms.d_tma);
  EXPECT_EQ(r.kernels_profiled, 1);
  EXPECT_EQ(r.foreign_kernels, std::vector<std::string>{"_Z7foreignv"});
  EXPECT_EQ(r.source.rfind("CUPTI", 0), 0u);

  // A foreign kernel seen launched but not counted is still foreign.
  SassCounts unseen = counts;
  unseen.instructions.pop_back();
  EXPECT_EQ(runtime_sass_from_counts(unseen, pcs, {gemm}, "ptxb_internal_").foreign_kernels,
            std::vector<std::string>{"_Z7foreignv"});

  SassCounts bad = counts;
  bad.instructions.push_back({gemm, 0x64, 1, 32});  // inside an instruction: not from this cubin
  RuntimeSass wrong_offset = runtime_sass_from_counts(bad, pcs, {gemm}, "ptxb_internal_");
  EXPECT_FALSE(wrong_offset.available);
  EXPECT_NE(wrong_offset.note.find("not an instruction"), std::string::npos);
}

// CUPTI 13.0 misses kernels (only the first module launched is counted): a launched candidate
// kernel without counts, or no launch at all, makes the counts unavailable (INFRA_ERROR), never
// a verdict of "no wgmma".
TEST(PcCounts, AKernelLaunchedButNotCountedMakesTheCountsUnavailable) {
  PcOpcodes pcs = parse_sass_pcs(read_file(std::string(PTXBENCH_TEST_DATA) + "/data/sass_sample.txt"));
  const std::string gemm = "_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii", helper = "_Z6helperPf";
  SassCounts counts;
  counts.instructions = {{helper, 0x0, 4, 128}, {helper, 0x10, 4, 128}};
  counts.launched = {helper, gemm};
  RuntimeSass missed = runtime_sass_from_counts(counts, pcs, {gemm, helper}, "ptxb_internal_");
  EXPECT_FALSE(missed.available);
  EXPECT_NE(missed.note.find(gemm), std::string::npos);
  counts.launched = {helper};
  EXPECT_TRUE(runtime_sass_from_counts(counts, pcs, {gemm, helper}, "ptxb_internal_").available);
  counts.launched = {"_ZN8ptxbench14ptxb_internal_fillEv"};
  RuntimeSass none = runtime_sass_from_counts(counts, pcs, {gemm, helper}, "ptxb_internal_");
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.note.find("no kernel launch"), std::string::npos);
}

TEST(PcCounts, JsonRoundTripAndMalformedInput) {
  SassCounts counts;
  counts.instructions = {{"_Z1kv", 0x10, 3, 96}, {"_Z1kv", 0x20, 1, 0}};
  counts.launched = {"_Z1kv"};
  SassCounts back = sass_counts_from_json(ordered_json::parse(to_json(counts).dump()));
  ASSERT_EQ(back.instructions.size(), 2u);
  EXPECT_EQ(back.instructions[0].function, "_Z1kv");
  EXPECT_EQ(back.instructions[0].pc, 0x10u);
  EXPECT_EQ(back.instructions[0].warp_executed, 3u);
  EXPECT_EQ(back.instructions[0].thread_true, 96u);
  EXPECT_EQ(back.instructions[1].thread_true, 0u);
  EXPECT_EQ(back.launched, counts.launched);
  EXPECT_THROW(sass_counts_from_json(ordered_json::parse(R"({"records": 3, "launched": []})")), Error);
  EXPECT_THROW(sass_counts_from_json(ordered_json::parse(R"({"records": []})")), Error);
  EXPECT_THROW(sass_counts_from_json(ordered_json::parse(
                   R"({"records": [{"function": "k", "pc": -1, "warp": 1, "thread_true": 1}], "launched": []})")),
               Error);
  EXPECT_THROW(sass_counts_from_json(ordered_json::parse(R"({"records": [], "launched": [7]})")), Error);
  EXPECT_TRUE(sass_counts_from_json(ordered_json::parse(R"({"records": [], "launched": []})")).instructions.empty());
}

// The profiled call's launches (name, grid, block, dynamic shared memory), which the timed calls
// must repeat: a kernel that launches something else under the profiler is caught by them. The
// value's form is ncu's on the H200 with --print-metric-instances details: the number, then its
// instances in parentheses (read as one number they made 543851520 of 99328 bytes).
TEST(NcuReport, LaunchesComeWithTheirConfiguration) {
  std::string csv = read_file(fs::path(PTXBENCH_TEST_DATA) / "data/ncu_probe_pred.csv");
  csv += "\"0\",\"785\",\"probe\",\"127.0.0.1\",\"_Z4predPfi\",\"1\",\"7\",\"(128, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\","
         "\"Command line profiler metrics\",\"launch__shared_mem_per_block_dynamic\",\"byte/block\",\"99,328 (0: 99,328)\"\n";
  RuntimeSass r = parse_ncu_csv(csv, {"_Z4predPfi"}, "ptxb_internal_");
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].name, "_Z4predPfi");
  EXPECT_EQ(r.launches[0].block, (std::array<uint32_t, 3>{128, 1, 1}));
  EXPECT_EQ(r.launches[0].grid, (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_EQ(r.launches[0].dynamic_smem, 99328u);
}

// The warp counts by opcode with modifiers (the HGMMA shapes apart) are read per kernel; the
// command asks for them unless this ncu refused the metric, which its error line tells.
TEST(NcuReport, OpcodeModifierCountsPerKernelAndTheirRefusal) {
  std::string csv = read_file(fs::path(PTXBENCH_TEST_DATA) / "data/ncu_probe_pred.csv");
  csv += std::string("\"0\",\"785\",\"probe\",\"127.0.0.1\",\"_Z4predPfi\",\"1\",\"7\",\"(128, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\","
                     "\"Command line profiler metrics\",\"") +
         kNcuWarpModifierMetric + "\",\"inst\",\"12 (HGMMA.64x256x16.F32.BF16: 8; HGMMA.64x128x16.F32.BF16: 4)\"\n";
  RuntimeSass r = parse_ncu_csv(csv, {"_Z4predPfi"}, "ptxb_internal_");
  ASSERT_EQ(r.warp_with_modifiers_per_kernel.count("_Z4predPfi"), 1u);
  const OpcodeCounts& m = r.warp_with_modifiers_per_kernel.at("_Z4predPfi");
  EXPECT_EQ(m.at("HGMMA.64x256x16.F32.BF16"), 8);
  EXPECT_EQ(m.at("HGMMA.64x128x16.F32.BF16"), 4);
  EXPECT_EQ(r.warp_per_kernel.at("_Z4predPfi").at("FFMA"), 4);
  EXPECT_EQ(r.thread_true.count("HGMMA.64x256x16.F32.BF16"), 0u) << "modifier counts stay out of the mechanism counts";

  auto with = ncu_command("ncu", "/s/ncu.csv", {}, true, {"runner", "once"});
  auto without = ncu_command("ncu", "/s/ncu.csv", {kNcuWarpModifierMetric}, true, {"runner", "once"});
  auto unbound = ncu_command("ncu", "/s/ncu.csv", {}, false, {"runner", "once"});
  auto metrics = [](const std::vector<std::string>& argv) {
    return *std::next(std::find(argv.begin(), argv.end(), "--metrics"));
  };
  EXPECT_NE(metrics(with).find(kNcuWarpModifierMetric), std::string::npos);
  EXPECT_EQ(metrics(without).find(kNcuWarpModifierMetric), std::string::npos);
  EXPECT_NE(metrics(without).find(kNcuThreadTrueMetric), std::string::npos);
  EXPECT_NE(metrics(without).find(kNcuGmmaPipeMetric), std::string::npos) << "refusing one optional metric keeps the others";
  EXPECT_NE(metrics(without).find(kNcuDurationMetric), std::string::npos);
  EXPECT_EQ(metrics(unbound).find(kNcuDurationMetric), std::string::npos) << "--no-profile-binding: the metrics of before";
  EXPECT_EQ(metrics(unbound).find(kNcuGmmaPipeMetric), std::string::npos);
  EXPECT_NE(metrics(unbound).find(kNcuWarpModifierMetric), std::string::npos);
  EXPECT_EQ(with.back(), "once");
  EXPECT_TRUE(ncu_rejected_metric("==PROF== Connected\n==ERROR== Failed to find metric " + std::string(kNcuWarpModifierMetric) + "\n",
                                  kNcuWarpModifierMetric));
  EXPECT_FALSE(ncu_rejected_metric("==ERROR== UnknownError\n==PROF== " + std::string(kNcuWarpModifierMetric), kNcuWarpModifierMetric));
}

// What the profile binding reads: each candidate launch's duration (summed; units converted) and
// the hardware counters of the tensor pipe and the TMA unit, over the candidate's kernels only.
TEST(NcuReport, DurationsAndHardwareCountsOfTheCandidatesLaunches) {
  std::string csv = read_file(fs::path(PTXBENCH_TEST_DATA) / "data/ncu_probe_pred.csv");
  auto row = [](const std::string& id, const std::string& kernel, const std::string& metric, const std::string& unit,
                const std::string& value) {
    return "\"" + id + "\",\"785\",\"probe\",\"127.0.0.1\",\"" + kernel +
           "\",\"1\",\"7\",\"(128, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"" + metric +
           "\",\"" + unit + "\",\"" + value + "\"\n";
  };
  csv += row("0", "_Z4predPfi", kNcuDurationMetric, "nsecond", "1,500");
  csv += row("1", "_Z4predPfi", kNcuDurationMetric, "usecond", "2.5");
  csv += row("1", "_Z4predPfi", kNcuGmmaPipeMetric, "inst", "4,096");
  csv += row("1", "_Z4predPfi", kNcuTmaPipeMetric, "inst", "80");
  csv += row("2", "ptxb_internal_fill", kNcuDurationMetric, "nsecond", "999,999");  // ours: not the candidate's
  csv += row("2", "ptxb_internal_fill", kNcuGmmaPipeMetric, "inst", "77");
  RuntimeSass r = parse_ncu_csv(csv, {"_Z4predPfi"}, "ptxb_internal_");
  EXPECT_TRUE(r.durations_measured);
  EXPECT_DOUBLE_EQ(r.duration_ns, 1500.0 + 2500.0);
  EXPECT_DOUBLE_EQ(r.duration_ns_per_kernel.at("_Z4predPfi"), 4000.0);
  ASSERT_TRUE(r.hw_gmma_warp_inst.has_value());
  EXPECT_DOUBLE_EQ(*r.hw_gmma_warp_inst, 4096.0);
  ASSERT_TRUE(r.hw_tma_inst.has_value());
  EXPECT_DOUBLE_EQ(*r.hw_tma_inst, 80.0);
  EXPECT_EQ(r.warp_per_kernel.at("_Z4predPfi").at("FFMA"), 4) << "the per-opcode counts are read as before";

  RuntimeSass none = parse_ncu_csv(read_file(fs::path(PTXBENCH_TEST_DATA) / "data/ncu_probe_pred.csv"), {"_Z4predPfi"},
                                   "ptxb_internal_");
  EXPECT_FALSE(none.durations_measured);
  EXPECT_FALSE(none.hw_gmma_warp_inst.has_value()) << "not collected is not zero";
}
