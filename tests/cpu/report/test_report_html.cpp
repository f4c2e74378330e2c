// The HTML report rendered by a real browser (headless Chromium, installed by scripts/setup.sh):
// the page's own script runs under its Content-Security-Policy and draws the Fast_p curves, the
// static SVG charts and tables are there, model text injected into the store stays text, and a
// screenshot (written to <build>/report_screenshot.png) is a real rendered page.
// Chromium missing is a FAILURE, not a skip: CI runs scripts/setup.sh first.
#include <gtest/gtest.h>

#include <regex>

#include "common/fs.h"
#include "common/subprocess.h"
#include "report/report_data.h"
#include "report/report_html.h"
#include "test_report_support.h"

using namespace ptxbench;
using namespace ptxbench::report;
using namespace ptxbench::test;

namespace {

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser"})
    if (auto p = find_on_path(name); !p.empty()) return p;
  return "";
}

ProcessResult chromium(const std::string& exe, const fs::path& profile, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
               "--user-data-dir=" + profile.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.output_cap_bytes = 64 << 20;
  return run_process(spec, 180);
}

uint32_t big_endian32(const std::string& s, std::size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
         uint32_t(uint8_t(s[at + 3]));
}

// Writes the report of `runs` to <build>/report_test/<name>.html and returns its file:// URL.
std::string write_report(RunStore& store, const std::vector<std::string>& runs, const std::string& name) {
  fs::path out = fs::path(PTXBENCH_BUILD_DIR) / "report_test";
  fs::create_directories(out);
  fs::path html = fs::absolute(out / (name + ".html"));
  write_file_atomic(html, render_html(build_report(store, runs, {1, 4, 8})));
  return "file://" + html.string();
}

std::string require_chromium() {
  std::string exe = find_chromium();
  if (exe.empty())
    ADD_FAILURE() << "chromium is not installed: run scripts/setup.sh (it installs the Debian package 'chromium'), "
                     "or apt-get install chromium. This test renders the HTML report in a real browser.";
  return exe;
}

int drawn_curves(const std::string& dom) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("id=\"fastp-ready\"[^>]*data-curves=\"([0-9]+)\""))) return -1;
  return std::stoi(m[1].str());
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(ReportHtml, InjectedModelTextStaysTextInTheBrowser) {
  std::string exe = require_chromium();
  if (exe.empty()) return;
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  SampleRuns runs = build_sample_runs(store);
  std::string url = write_report(store, {runs.agent, runs.refinement}, "report_injection");
  ProcessResult dom = chromium(exe, dir.path() / "profile", {"--dump-dom", url});
  ASSERT_TRUE(dom.status.success()) << dom.status.describe() << "\n" << dom.err.text;
  const std::string& d = dom.out.text;
  // The page's own script ran (its CSP hash matched), though names in its data block are hostile:
  // 3 curves (Fast_p, Fast^Inst_p by the paper's rule and by the strict one) per group with
  // trajectories at each measured budget (agent: gemm, attn, (all) at T = 1, 4; refinement: gemm
  // at T = 1) = 21.
  EXPECT_EQ(drawn_curves(d), 21) << "the script did not run, or drew other curves";
  EXPECT_EQ(count(d, "class=\"fastp-curve\""), 21u);
  EXPECT_EQ(count(d, "data-rule=\"best_strict\""), 7u);
  EXPECT_NE(d.find("0.0 / 36.4 / n/a"), std::string::npos);
  // Injected model text stayed text: no retitled page, no marked body, no element from it.
  EXPECT_NE(d.find("<title>ptxbench report</title>"), std::string::npos);
  EXPECT_EQ(d.find("PWNED</title>"), std::string::npos);
  EXPECT_EQ(d.find("data-pwned=\"1\""), std::string::npos);
  EXPECT_EQ(d.find("<img"), std::string::npos);
  EXPECT_EQ(d.find("<textarea"), std::string::npos);
  EXPECT_NE(d.find("&lt;script&gt;document.title='PWNED'&lt;/script&gt;"), std::string::npos) << "shown as text";
}

TEST(ReportHtml, RendersTablesChartsAndAScreenshot) {
  std::string exe = require_chromium();
  if (exe.empty()) return;
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  std::vector<std::string> runs = build_realistic_runs(store);
  std::string url = write_report(store, runs, "report");

  ProcessResult dom = chromium(exe, dir.path() / "profile-dom", {"--dump-dom", url});
  ASSERT_TRUE(dom.status.success()) << dom.status.describe() << "\n" << dom.err.text;
  const std::string& d = dom.out.text;
  // 6 groups (2 runs x (2 definitions + (all))) x 3 budgets x (Fast_p, Fast^Inst_p, strict).
  EXPECT_EQ(drawn_curves(d), 54);
  EXPECT_EQ(count(d, "class=\"fastp-curve\""), 54u);
  EXPECT_EQ(count(d, "class=\"fastp-chart\""), 3u) << "one chart per budget";
  EXPECT_TRUE(std::regex_search(d, std::regex("<path d=\"M[0-9.]+,[0-9.]+H[0-9.]+V[0-9.]+"))) << "a step curve with a drop";
  EXPECT_NE(d.find("id=\"fastp-select\""), std::string::npos);
  EXPECT_EQ(count(d, "class=\"transition-heatmap\""), 6u);
  EXPECT_EQ(count(d, "class=\"label-bars\""), 6u);
  EXPECT_NE(d.find("id=\"summary\""), std::string::npos);
  EXPECT_NE(d.find("data-metric=\"turn_correctness\""), std::string::npos);
  EXPECT_EQ(count(d, "<details class=\"traj\""), 48u) << "every trajectory in the drill-down";
  EXPECT_NE(d.find("<button type=\"button\">Expand all</button>"), std::string::npos);
  EXPECT_NE(d.find("Token ratio between runs"), std::string::npos);
  EXPECT_NE(d.find("Early stop: carry-forward"), std::string::npos);

  fs::path shot = fs::path(PTXBENCH_BUILD_DIR) / "report_screenshot.png";
  fs::remove(shot);
  ProcessResult s = chromium(exe, dir.path() / "profile-shot", {"--screenshot=" + shot.string(), "--window-size=1400,2000", url});
  ASSERT_TRUE(s.status.success()) << s.status.describe() << "\n" << s.err.text;
  ASSERT_TRUE(fs::exists(shot)) << shot;
  std::string png = read_file(shot);
  ASSERT_GE(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian32(png, 16), 1400u);
  EXPECT_EQ(big_endian32(png, 20), 2000u);
  // A blank 1400x2000 page compresses to ~13 KB; tables, text and charts take several times that.
  EXPECT_GT(png.size(), 60u * 1024) << "the screenshot looks empty: " << shot;
}
