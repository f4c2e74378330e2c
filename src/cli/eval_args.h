// Options shared by the evaluating commands (eval, suite), and the verdict table they print.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
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
  bool no_profile_binding = false;
};

void add_eval_options(CLI::App* cmd, EvalArgs& a);
/// --sanitize-timeout and --call-timeout (eval, suite run, serve, worker): unset (0) leaves the
/// evaluator's default, which help shows from EvalOptions.
void add_timeout_options(CLI::App* cmd, double& sanitize_timeout, double& call_timeout);
/// --token-file of the commands that talk to a service (eval --service, suite load); read with
/// service_client_options(), which falls back to $PTXBENCH_TOKEN.
void add_token_file_option(CLI::App* cmd, std::string& token_file);
EvalOptions to_eval_options(const EvalArgs& a);

/// Prints one verdict as --json (its document on a line), --feedback (text) or a table row; stores
/// its document under --out DIR. With `--out -` the verdict documents
/// are the JSON lines on stdout and the table (or feedback) goes to stderr. The constructor checks
/// --out (InputError) and makes its folder, so build it before any work.
class VerdictPrinter {
 public:
  VerdictPrinter(const EvalArgs& a, std::string extra_header = "");
  void print(const std::string& label, const Verdict& verdict, const std::string& extra = "");
  /// Where the human-readable lines go: stdout, or stderr while stdout carries JSON (`--out -`).
  [[nodiscard]] std::FILE* human() const noexcept { return m_human; }
  /// Whether stdout carries JSON lines (--json or --out -): summaries then go to stderr.
  [[nodiscard]] bool json_on_stdout() const noexcept { return m_human == stderr || m_args.json; }

 private:
  const EvalArgs& m_args;
  std::FILE* m_human = stdout;
};

/// For an INFRA_ERROR verdict, one line on stderr with its reason (the table row has no room for
/// it); returns whether `v` is one.
bool print_infra_reason(const std::string& label, const Verdict& v);

/// nvcc's messages name the candidate "candidate.cu" (the compile stage builds every candidate
/// under that name; docs/verdict.md); for the user who gave `file`, they name it instead.
[[nodiscard]] std::string name_user_file(const std::string& compiler_output, const std::string& file);

}  // namespace ptxbench::cli
