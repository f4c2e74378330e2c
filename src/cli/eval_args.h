// Options shared by the evaluating commands (eval, suite), and the verdict table they print.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/json_check.h"
#include "evaluator/evaluator.h"

namespace ptxbench::cli {

struct EvalArgs {
  std::string workload, out_dir;
  bool json = false, feedback = false, no_sanitize = false, no_profile = false, no_time = false;
  int repeat = 1, trials = 0, device = 0;
  int64_t seed = -1;
  double sanitize_timeout = 0, call_timeout = 0;
  std::string sass_tool = "ncu";
  bool profile_always = false;
  bool runner_l2_flush = false;
  bool no_fresh_inputs = false;
};

void add_eval_options(CLI::App* cmd, EvalArgs& a);
/// --sanitize-timeout and --call-timeout (eval, suite run, serve, worker): unset (0) leaves the
/// evaluator's default, which help shows from EvalOptions.
void add_timeout_options(CLI::App* cmd, double& sanitize_timeout, double& call_timeout);
/// --token-file of the commands that talk to a service (eval --service, suite load); read with
/// service_client_options(), which falls back to $PTXBENCH_TOKEN.
void add_token_file_option(CLI::App* cmd, std::string& token_file);
EvalOptions to_eval_options(const EvalArgs& a);

/// Prints one verdict document as --json (a line, as it came), --feedback (text) or a table row
/// (both read through Verdict); stores it under --out.
class VerdictPrinter {
 public:
  VerdictPrinter(const EvalArgs& a, std::string extra_header = "");
  void print(const std::string& label, const ordered_json& verdict, const std::string& extra = "");

 private:
  const EvalArgs& m_args;
};

}  // namespace ptxbench::cli
