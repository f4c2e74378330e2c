// Running the built `ptxbench` binary as a child process in the CLI tests: its arguments, the
// environment it gets (the source tree's data by default) and the folder it runs in.
#pragma once

#include <string>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"

namespace ptxbench::test {

inline fs::path ptxbench_binary() { return executable_dir() / "ptxbench"; }

struct CliOptions {
  /// NAME=value added to ours; "PTXBENCH_HOME=" (empty) counts as unset.
  std::vector<std::string> env = {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR};
  std::string cwd;  ///< empty: ours
  double timeout_s = 300;
};

inline ProcessResult run_ptxbench(const std::vector<std::string>& args, const CliOptions& o = {}) {
  ProcessSpec spec;
  spec.argv = {ptxbench_binary().string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_overrides = o.env;
  spec.cwd = o.cwd;
  return run_process(spec, o.timeout_s);
}

/// The command and what it printed, for failure messages.
inline std::string describe_run(const std::vector<std::string>& args, const ProcessResult& r) {
  std::string cmd = "ptxbench";
  for (const auto& a : args) cmd += " " + a;
  return cmd + " -> " + r.status.describe() + "\nstdout:\n" + r.out.text + "\nstderr:\n" + r.err.text;
}

inline bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

}  // namespace ptxbench::test
