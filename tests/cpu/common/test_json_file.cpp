// read_json_file (common/json_check.h): a file that cannot be read or is not JSON is an InputError
// that names it, never the JSON parser's bare message.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/json_check.h"

using namespace ptxbench;

TEST(JsonFile, ErrorsNameTheFile) {
  TempDir dir("ptxbench-json");
  fs::path good = dir.path() / "good.json", bad = dir.path() / "bad.json", missing = dir.path() / "missing.json";
  write_file_atomic(good, R"({"a": [1, 2]})");
  write_file_atomic(bad, "{\"a\": [1, 2}\n");
  EXPECT_EQ(read_json_file(good)["a"][1], 2);
  try {
    (void)read_json_file(bad);
    FAIL() << "malformed JSON was read";
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(bad.string() + ": malformed JSON"), std::string::npos) << what;
  }
  try {
    (void)read_json_file(missing);
    FAIL() << "a missing file was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}
