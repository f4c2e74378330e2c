#include "report/provenance.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "common/text.h"
#include "evaluator/eval_options.h"

namespace ptxbench::report {
namespace {

// A recorded option as the report prints it ("5", "0.01", "true").
template <class T>
std::string option_text(const T& value) {
  return fmt::format("{}", value);
}

using OptionValues = std::vector<std::pair<std::string, std::string>>;

OptionValues policy_values(const TimingPolicyRecord& p) {
  return {{"timing.warmup_calls", option_text(p.warmup_calls)},       {"timing.timed_calls", option_text(p.timed_calls)},
          {"timing.trials", option_text(p.trials)},                   {"timing.interleave_calls", option_text(p.interleave_calls)},
          {"timing.l2_flush_factor", option_text(p.l2_flush_factor)}, {"timing.runner_l2_flush", option_text(p.runner_l2_flush)},
          {"timing.poison_timed_calls", option_text(p.poison_timed_calls)}, {"timing.fresh_inputs", option_text(p.fresh_inputs)}};
}

// What changes the measurement; device placement, GPU sharing, memory budgets and comparison
// threads do not, and are left out.
OptionValues option_values(const EvalOptionsRecord& o) {
  OptionValues v = {{"correctness_trials", option_text(o.correctness_trials)},
                    {"tolerance.atol", option_text(o.tolerance.atol)},
                    {"tolerance.rtol", option_text(o.tolerance.rtol)},
                    {"tolerance.required_ratio", option_text(o.tolerance.required_ratio)},
                    {"sanitize", option_text(o.sanitize)},
                    {"sanitize_runs", option_text(o.sanitize_runs)},
                    {"sanitize_timeout_s", option_text(o.sanitize_timeout_s)},
                    {"profile", option_text(o.profile)},
                    {"profile_timeout_s", option_text(o.profile_timeout_s)},
                    {"measure_time", option_text(o.measure_time)},
                    {"call_timeout_s", option_text(o.call_timeout_s)},
                    {"trial_timeout_s", option_text(o.trial_timeout_s)},
                    {"compile_timeout_s", option_text(o.compile_timeout_s)}};
  if (o.sass_tool) v.emplace_back("sass_tool", to_string(*o.sass_tool));
  if (o.profile_always) v.emplace_back("profile_always", option_text(*o.profile_always));
  OptionValues timing = policy_values(o.timing);
  v.insert(v.end(), timing.begin(), timing.end());
  return v;
}

// The evaluator's defaults, from its option struct (never numbers of our own).
const std::string& default_value(const std::string& option) {
  static const OptionValues defaults = option_values(EvalOptions{}.record());
  static const std::string none;
  for (const auto& [name, value] : defaults)
    if (name == option) return value;
  return none;
}

// Adds (option, value) unless that option is already listed or the value is the default.
void note_option(std::vector<OptionChange>& out, const std::string& option, const std::string& value) {
  const std::string& def = default_value(option);
  if (value == def) return;
  for (const auto& c : out)
    if (c.option == option) return;
  out.push_back({option, value, def, 1});
}

}  // namespace

bool from_fake_backend(const Verdict& v) { return v.fake_backend; }

std::vector<OptionChange> changed_options(const Verdict& v) {
  std::vector<OptionChange> out;
  if (v.environment)
    for (const auto& [option, value] : option_values(v.environment->options)) note_option(out, option, value);
  // The sections say the same where the environment is missing (a verdict of an older version).
  if (v.stages.timing && v.stages.timing->policy)
    for (const auto& [option, value] : policy_values(*v.stages.timing->policy)) note_option(out, option, value);
  if (v.stages.sanitize && v.stages.sanitize->skipped) note_option(out, "sanitize", "skipped (" + *v.stages.sanitize->skipped + ")");
  if (v.stages.timing && v.stages.timing->skipped) note_option(out, "measure_time", "skipped (" + *v.stages.timing->skipped + ")");
  // A PASSED verdict without runtime SASS counts has no target-instruction verdict to give.
  if (v.status == Status::PASSED && v.stages.runtime_sass && !v.stages.runtime_sass->measured())
    note_option(out, "profile", "not measured (" + cut(v.stages.runtime_sass->note, 120, "...") + ")");
  return out;
}

Provenance& Provenance::operator+=(const Provenance& o) {
  verdicts += o.verdicts;
  fake_verdicts += o.fake_verdicts;
  imported_trajectories += o.imported_trajectories;
  for (const auto& c : o.changed_options) {
    auto same = std::find_if(changed_options.begin(), changed_options.end(),
                             [&c](const OptionChange& x) { return x.option == c.option && x.value == c.value; });
    if (same == changed_options.end())
      changed_options.push_back(c);
    else
      same->verdicts += c.verdicts;
  }
  return *this;
}

std::string describe_changes(const Provenance& p) {
  std::string s;
  for (const auto& c : p.changed_options)
    s += fmt::format("{}{} = {} (default {}) in {} of {} verdicts", s.empty() ? "" : "; ", c.option, c.value,
                     c.default_value.empty() ? "-" : c.default_value, c.verdicts, p.verdicts);
  return s;
}

}  // namespace ptxbench::report
