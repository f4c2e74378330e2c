// The ptxbench subcommands. Each registers itself on the app and sets `action` when chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace ptxbench::cli {

using Action = std::function<int()>;

// The exit codes, as the top-level --help's epilog states them (docs/cli.md). main() maps the
// typed errors: InputError (StoreError, AccessDenied, ...) to 2, EnvironmentError
// (ServiceUnreachable, no nvcc, ...) to 3, anything else to 1 (our bug).
inline constexpr int kExitDone = 0;
inline constexpr int kExitInternalError = 1;  ///< also: a failed compile, a verdict other than expected
inline constexpr int kExitUsageError = 2;     ///< also: bad input (unknown definition, malformed or missing file)
inline constexpr int kExitEnvironment = 3;    ///< no nvcc, no GPU, unreachable service, an INFRA_ERROR verdict
inline constexpr int kExitUnfinished = 4;     ///< run: some trajectory failed or is unfinished
inline constexpr int kExitAllSkipped = 5;     ///< nothing was checked: every case skipped (as pytest's 5)

/// "ptxbench VERSION (commit C)", as --version prints it first (main.cpp knows the commit).
std::string version_line();

void register_definitions(CLI::App& app, Action& action);
void register_compile(CLI::App& app, Action& action);
void register_eval(CLI::App& app, Action& action);
void register_suite(CLI::App& app, Action& action);
void register_prompt(CLI::App& app, Action& action);
void register_serve(CLI::App& app, Action& action);
void register_run(CLI::App& app, Action& action);
void register_report(CLI::App& app, Action& action);
void register_import(CLI::App& app, Action& action);
void register_data(CLI::App& app, Action& action);
void register_mcp(CLI::App& app, Action& action);
void register_proxy(CLI::App& app, Action& action);
void register_agent(CLI::App& app, Action& action);
void register_env(CLI::App& app, Action& action);

}  // namespace ptxbench::cli
