// ptxbench: evaluates LLM-written architecture-specific GPU kernels. `ptxbench --help` lists the
// commands; docs/cli.md is every command's --help (scripts/cli_docs.sh regenerates it).
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"

#ifndef PTXBENCH_COMMIT
#define PTXBENCH_COMMIT "unknown"  // set by src/CMakeLists.txt when CMake configures
#endif

namespace {

using namespace ptxbench::cli;

// The exit codes (commands.h), as the top-level --help states them (docs/cli.md shows that text).
constexpr const char* kExitCodes =
    "Exit codes: 0 done (whatever the verdicts; also --help, --version); 1 internal error, a failed\n"
    "compile (compile), a verdict other than the one expected (suite run, suite load); 2 usage error\n"
    "(unknown command or option, bad value, missing argument; a bare `ptxbench` prints this help)\n"
    "or bad input (unknown definition, malformed file, a missing or damaged store, an output path\n"
    "that cannot be written); 3 environment or infrastructure (no nvcc, no GPU, an unreachable\n"
    "service, an INFRA_ERROR verdict); 4 some trajectory failed or is unfinished (run; then\n"
    "--resume); 5 nothing was checked: every case was skipped (suite run without a usable GPU).";

/// The deepest command the user chose ("ptxbench suite load" → load).
const CLI::App* chosen_command(const CLI::App& app) {
  const CLI::App* c = &app;
  while (!c->get_subcommands().empty()) c = c->get_subcommands().front();
  return c;
}

std::string command_path(const CLI::App* c) {
  std::string path = c->get_name();
  for (const CLI::App* p = c->get_parent(); p != nullptr; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

std::string subcommand_names(const CLI::App* c) {
  std::string names;
  for (const CLI::App* s : c->get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + s->get_name();
  return names;
}

// A parse error: one clear line on stderr and exit 2. A command that needs a subcommand and got
// none prints its help (to stderr: stdout stays for results).
int usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* c = chosen_command(app);
  std::string path = command_path(c);
  bool wants_subcommand = c->get_require_subcommand_min() > 0 && c->get_subcommands().empty();
  std::vector<std::string> extras = c->remaining();
  if (wants_subcommand && !extras.empty()) {  // CLI11 reports these as "A subcommand is required"
    bool option = extras.front().rfind('-', 0) == 0;
    fmt::print(stderr, "error: unknown {} '{}' for '{}' (commands: {})\nRun '{} --help' for usage.\n",
               option ? "option" : "command", extras.front(), path, subcommand_names(c), path);
  } else if (wants_subcommand) {
    fmt::print(stderr, "error: '{}' needs a command ({})\n\n{}", path, subcommand_names(c), app.help());
  } else {
    fmt::print(stderr, "error: {}\nRun '{} --help' for usage.\n", e.what(), path);
  }
  return kExitUsageError;
}

}  // namespace

std::string ptxbench::cli::version_line() {
  return fmt::format("ptxbench {} (commit {})", PTXBENCH_VERSION, PTXBENCH_COMMIT);
}

int main(int argc, char** argv) {
  CLI::App app{"ptxbench: are LLM-written PTX kernels correct, really using wgmma/TMA/tcgen05, and fast?", "ptxbench"};
  app.require_subcommand(1);
  // Resolved only when asked for: the data root's choice may warn (on stderr), which --help should not.
  app.set_version_flag(
      "--version",
      [] {
        const ptxbench::DataRoot& root = ptxbench::data_root_choice();
        return fmt::format("{}\ndata root: {} ({})", version_line(), root.path.string(), to_string(root.source));
      },
      "print the version, the git commit it was built from and the data root, and exit");
  ptxbench::cli::Action action;
  ptxbench::cli::register_env(app, action);
  ptxbench::cli::register_definitions(app, action);
  ptxbench::cli::register_compile(app, action);
  ptxbench::cli::register_eval(app, action);
  ptxbench::cli::register_suite(app, action);
  ptxbench::cli::register_prompt(app, action);
  ptxbench::cli::register_serve(app, action);
  ptxbench::cli::register_run(app, action);
  ptxbench::cli::register_report(app, action);
  ptxbench::cli::register_import(app, action);
  ptxbench::cli::register_data(app, action);
  ptxbench::cli::register_mcp(app, action);
  ptxbench::cli::register_proxy(app, action);
  ptxbench::cli::register_agent(app, action);
  app.footer(kExitCodes);  // after the subcommands, which would otherwise inherit it
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version: printed on stdout, exit 0
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e);
  }
  try {
    return action ? action() : 0;
  } catch (const ptxbench::InputError& e) {  // StoreError, AccessDenied, a bad output path, ...
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUsageError;
  } catch (const ptxbench::EnvironmentError& e) {  // ServiceUnreachable, no nvcc, ...
    std::fprintf(stderr, "environment error: %s\n", e.what());
    return kExitEnvironment;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return kExitInternalError;
  }
}
