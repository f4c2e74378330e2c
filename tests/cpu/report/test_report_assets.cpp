// The HTML pages' style and script are the files of src/report/assets/, embedded at build time: a
// page carries their text verbatim, and the report's CSP allows that script by its hash.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "report/agent_comparison_html.h"
#include "report/report_html.h"

using namespace ptxbench;
using namespace ptxbench::report;

namespace {
const fs::path kAssets = fs::path(PTXBENCH_SOURCE_DIR) / "src/report/assets";
}  // namespace

TEST(ReportAssets, PagesCarryTheAssetFilesVerbatim) {
  const std::string js = read_file(kAssets / "report.js");
  const std::string html = render_html(Report{});
  EXPECT_NE(html.find("<style>" + read_file(kAssets / "report.css") + "</style>"), std::string::npos);
  EXPECT_NE(html.find("<script>" + js + "</script>"), std::string::npos);
  EXPECT_NE(html.find("script-src '" + csp_hash(js) + "'"), std::string::npos);

  const std::string page = render_agent_comparison_html(AgentComparison{});
  EXPECT_NE(page.find("<style>" + read_file(kAssets / "agent_comparison.css") + "</style>"), std::string::npos);
}
