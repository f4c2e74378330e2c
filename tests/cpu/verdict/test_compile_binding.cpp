// The compile section's binding: written when known, read back typed, absent in older verdicts.
#include <gtest/gtest.h>

#include "common/error.h"
#include "verdict/compile_section.h"
#include "verdict/verdict.h"

using namespace ptxbench;

TEST(CompileBinding, RoundTripsAndStaysAbsentWhenUnknown) {
  CompileResult r;
  r.status = CompileStatus::ok;
  r.message = "compiled";
  r.binding = CandidateBinding::tvm_ffi;
  CompileSection s = compile_section(r);
  ASSERT_TRUE(s.binding);
  ordered_json j = s;
  EXPECT_EQ(j["binding"], "tvm-ffi");
  CompileSection back = j.get<CompileSection>();
  EXPECT_EQ(back.binding, CandidateBinding::tvm_ffi);
  EXPECT_EQ(ordered_json(back), j);

  // A Triton candidate or a trusted library has no binding, and verdicts written before bindings
  // were recorded carry none: the field stays out.
  CompileSection none;
  none.status = CompileStatus::ok;
  ordered_json k = none;
  EXPECT_FALSE(k.contains("binding"));
  EXPECT_FALSE(k.get<CompileSection>().binding);
}

TEST(CompileBinding, AnUnknownNameIsRefusedNamingTheField) {
  ordered_json j = {{"status", "ok"}, {"message", ""}, {"binding", "torch"}};
  try {
    (void)j.get<CompileSection>();
    FAIL() << "accepted binding 'torch'";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("binding"), std::string::npos) << e.what();
  }
}
