#include "service/eval_request.h"

#include "common/error.h"
#include "compile/solution.h"

namespace ptxbench {
namespace {

void parse_options(const ordered_json& o, const JsonChecker& check, const EvalRequestLimits& limits, EvalRequest& r) {
  if (!o.is_object()) check.fail("options", "expected an object (seed, trials, sanitize, profile, time)");
  check.only_fields(o, "options", {"seed", "trials", "sanitize", "profile", "time"});
  if (o.contains("seed")) {
    if (!o["seed"].is_number_unsigned()) check.fail("options.seed", "expected a non-negative integer");
    r.seed = o["seed"].get<uint64_t>();
  }
  if (o.contains("trials")) {
    if (!o["trials"].is_number_integer() || o["trials"].get<int64_t>() < 1 || o["trials"].get<int64_t>() > limits.max_trials)
      check.fail("options.trials", "expected an integer from 1 to " + std::to_string(limits.max_trials));
    r.trials = o["trials"].get<int>();
  }
  auto flag = [&](const char* key, bool& out) {
    if (!o.contains(key)) return;
    if (!o[key].is_boolean()) check.fail(std::string("options.") + key, "expected true or false");
    out = o[key].get<bool>();
  };
  flag("sanitize", r.sanitize);
  flag("profile", r.profile);
  flag("time", r.measure_time);
}

EvalRequest parse(const ordered_json& j, const JsonChecker& check, const Catalog& catalog, const EvalRequestLimits& limits) {
  check.only_fields(j, "", {"definition", "workload", "source", "language", "solution", "options"});
  EvalRequest r;
  // A FlashInfer-Bench Solution in place of "source" (and "language"): it names its definition,
  // and becomes the one file the evaluator compiles (compile/solution.h).
  std::optional<SolutionCandidate> solution;
  if (j.contains("solution")) {
    if (j.contains("source")) check.fail("solution", "give \"source\" or \"solution\", not both");
    if (j.contains("language")) check.fail("language", "a solution's language is its spec.language");
    const std::string document = check.document() + ": solution";
    Solution s = solution_from_json(j["solution"], document);
    if (j.contains("definition") && check.string_field(j, "", "definition") != s.definition)
      check.fail("solution.definition", "'" + s.definition + "' differs from the request's definition '" +
                                            check.string_field(j, "", "definition") + "'");
    r.definition = s.definition;
    solution = materialize_solution(s, document);
  } else {
    r.definition = check.string_field(j, "", "definition");
  }
  try {
    (void)catalog.definition(r.definition);
  } catch (const InputError& e) {
    check.fail("definition", e.what());
  }
  r.workload = check.optional_string(j, "", "workload", "");
  if (!r.workload.empty()) {
    try {
      (void)catalog.find_workload(r.definition, r.workload);
    } catch (const InputError& e) {
      check.fail("workload", e.what());
    }
  }
  if (solution) {
    r.source = std::move(solution->source);
    r.language = solution->language;
  } else {
    r.source = check.string_field(j, "", "source");
    if (r.source.empty()) check.fail("source", "empty source");
    try {
      r.language = parse_candidate_language(check.optional_string(j, "", "language", "cuda"));
    } catch (const InputError& e) {
      check.fail("language", e.what());
    }
  }
  if (r.source.size() > limits.max_source_bytes)
    throw PayloadTooLarge("json", check.document() + ": source: " + std::to_string(r.source.size()) +
                                      " bytes; the limit is " + std::to_string(limits.max_source_bytes));
  if (j.contains("options")) parse_options(j["options"], check, limits, r);
  return r;
}

}  // namespace

ordered_json EvalRequest::to_json() const {
  ordered_json options = {{"sanitize", sanitize}, {"profile", profile}, {"time", measure_time}};
  if (seed) options["seed"] = *seed;
  if (trials) options["trials"] = *trials;
  ordered_json j = {{"definition", definition}, {"source", source}, {"options", options}};
  if (!workload.empty()) j["workload"] = workload;
  if (language != CandidateLanguage::cuda) j["language"] = ptxbench::to_string(language);
  return j;
}

void EvalRequest::set_options(const ordered_json& options, const std::string& document, const EvalRequestLimits& limits) {
  parse_options(options, JsonChecker(document), limits, *this);
}

EvalOptions EvalRequest::apply(EvalOptions base) const {
  if (seed) base.seed = seed;
  if (trials) base.correctness_trials = base.timing.trials = *trials;
  base.sanitize = base.sanitize && sanitize;
  base.profile = base.profile && profile;
  base.measure_time = base.measure_time && measure_time;
  return base;
}

EvalRequest parse_eval_request(const std::string& body, const Catalog& catalog, const EvalRequestLimits& limits,
                               const std::string& document) {
  JsonChecker check(document);
  return parse(check.parse(body), check, catalog, limits);
}

EvalRequest eval_request_from_json(const ordered_json& j, const Catalog& catalog, const EvalRequestLimits& limits) {
  return parse(j, JsonChecker("stored request"), catalog, limits);
}

}  // namespace ptxbench
