// Small shared helpers: lower case, cutting text with a marker, ISO 8601 times, and the strict
// JsonChecker readers for numbers, bools, lists and enums; CPU lists and pinning.
#include <sched.h>

#include <gtest/gtest.h>

#include "agent/run_config.h"
#include "common/clock.h"
#include "common/cpu_affinity.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "common/text.h"

using namespace ptxbench;

namespace {
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(CommonText, LowerAndCut) {
  EXPECT_EQ(lower("Content-Type: ÄB"), "content-type: Äb");
  EXPECT_EQ(cut("short", 10), "short");
  EXPECT_EQ(cut("abcdef", 3), "abc\n[...]");
  EXPECT_EQ(cut("abcdef", 2, " [{} cut]"), "ab [4 cut]");
  EXPECT_EQ(cut("abcdef", 6, "!"), "abcdef");
}

TEST(CommonClock, Iso8601Utc) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso8601_utc(1796042372.9), "2026-11-30T12:39:32Z");
  EXPECT_EQ(utc_now_iso8601().size(), 20u);
}

TEST(JsonChecker, NumbersBoolsListsAndEnums) {
  JsonChecker check("config.json");
  ordered_json j = {{"n", 3},      {"x", 0.5},         {"big", 1e300}, {"s", "text"}, {"b", true},
                    {"list", {"a", "b"}}, {"holes", {"a", ""}}, {"ctx", "latest"}, {"bad_ctx", "all"}};
  EXPECT_EQ(check.int_in(j, "", "n", 1, 5), 3);
  EXPECT_EQ(error_of([&] { (void)check.int_in(j, "", "n", 4, 5); }), "json: config.json: n: must be in [4, 5], got 3");
  EXPECT_EQ(error_of([&] { (void)check.int_in(j, "", "x", 0, 5); }), "json: config.json: x: expected an integer, got 0.5");
  EXPECT_DOUBLE_EQ(check.number_in(j, "", "x", 0, 1, true), 0.5);
  EXPECT_EQ(error_of([&] { (void)check.number_in(j, "", "x", 0.5, 1, true); }),
            "json: config.json: x: must be in (0.5, 1], got 0.5");
  EXPECT_EQ(error_of([&] { (void)check.number_in(j, "opts", "x", 1); }), "json: config.json: opts.x: must be at least 1, got 0.5");
  EXPECT_EQ(error_of([&] { (void)check.number_in(j, "", "x", 1, std::numeric_limits<double>::infinity(), true); }),
            "json: config.json: x: must be greater than 1, got 0.5");
  EXPECT_EQ(error_of([&] { (void)check.number_field(j, "", "s"); }), "json: config.json: s: expected a number, got \"text\"");
  EXPECT_DOUBLE_EQ(check.number_field(j, "", "big"), 1e300);
  EXPECT_TRUE(check.bool_field(j, "", "b"));
  EXPECT_EQ(error_of([&] { (void)check.bool_field(j, "", "n"); }), "json: config.json: n: expected true or false, got 3");
  EXPECT_EQ(check.string_list(j, "", "list"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(check.string_list(j, "", "absent").empty());
  EXPECT_EQ(error_of([&] { (void)check.string_list(j, "", "holes"); }), "json: config.json: holes[1]: expected a non-empty string");
  EXPECT_EQ(error_of([&] { (void)check.string_list(j, "", "s"); }), "json: config.json: s: expected a list of strings");
  EXPECT_EQ(check.enum_field(j, "", "ctx", parse_context_policy), ContextPolicy::latest);
  EXPECT_EQ(error_of([&] { (void)check.enum_field(j, "", "bad_ctx", parse_context_policy); }),
            "json: config.json: bad_ctx: unknown context policy 'all' (expected full or latest)");
}

// The GPU's local CPUs come from sysfs as a list of ranges (gpu/cpu_affinity.h); a list the
// parser does not understand leaves the process as it was.
TEST(CpuAffinity, CpuListsParseAndBadOnesAreRefused) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_FALSE(parse_cpu_list(""));
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("0-3,,4"));
  EXPECT_FALSE(parse_cpu_list("a-b"));
}

TEST(CpuAffinity, PinningSaysWhyWhenSysfsDoesNotTell) {
  TempDir dir("affinity");
  EXPECT_NE(pin_to_local_cpus("0000:19:00.0", dir.path().string()).find("unreadable"), std::string::npos);
  fs::create_directories(dir.path() / "0000:19:00.0");
  write_file_atomic(dir.path() / "0000:19:00.0" / "local_cpulist", "garbage\n");
  EXPECT_NE(pin_to_local_cpus("0000:19:00.0", dir.path().string()).find("reads 'garbage'"), std::string::npos);
  // The CPUs this test may use already: pinning to them all changes nothing and says so.
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  std::string list;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) list += (list.empty() ? "" : ",") + std::to_string(c);
  write_file_atomic(dir.path() / "0000:19:00.0" / "local_cpulist", list + "\n");
  EXPECT_NE(pin_to_local_cpus("0000:19:00.0", dir.path().string()).find("allowed CPUs are local"), std::string::npos);
  write_file_atomic(dir.path() / "0000:19:00.0" / "local_cpulist", "100000\n");
  EXPECT_NE(pin_to_local_cpus("0000:19:00.0", dir.path().string()).find("none of the GPU's local CPUs"), std::string::npos);
}
