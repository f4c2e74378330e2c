// The named definitions of every metric and rule of metrics.h, printed by every output (terminal,
// CSV side file, JSON, HTML) so that a number never reads without what it counts.
#include "report/metric_definitions.h"

#include "verdict/verdict.h"

namespace ptxbench::report {
namespace {

// What is counted: groups, judged turns, counted trajectories, budgets, missing turns.
std::vector<MetricDefinition> counting_definitions() {
  return {
    {"groups", "Groups",
     "Metrics are computed per run x model x definition x GPU (with --by tag: x prompt tag, and the '(all)' rows pool "
     "the definitions of each tag). An imported run (ptxbench import) is also split by experiment, its trajectories' "
     "prompt tag (the release's experiment folder): one model x arch of a release holds several experiments of one "
     "definition (a prompt ablation, a second run), and pooling them would give numbers the release never printed. "
     "The GPU is the name in the verdicts' environment.gpu.name; a trajectory whose verdicts name none (e.g. only "
     "extraction errors) takes the one GPU its run and definition name, else '-'. Rows with definition '(all)' pool "
     "every definition of a run x model x GPU; a run with several experiments of one definition gets none."},
    {"judged_turn", "Judged turn",
     "A turn with a stored verdict or an extraction error. A turn still in flight (no verdict yet) is not judged "
     "and not counted anywhere except tokens."},
    {"counted_trajectory", "Counted trajectory",
     "A trajectory with at least one judged turn that is not INFRA_ERROR. Others (no turn judged, or only "
     "INFRA_ERROR) are left out of every rate and speedup metric, including the Fast_p denominator, and are "
     "listed as 'not counted'."},
    {"budget", "Turn budget T",
     "The first T turns of each trajectory (T = 1, 4, 8 unless --budgets says otherwise). A budget larger than the "
     "run's num_turns was not measured: its values are n/a (null in JSON, empty in CSV), never extrapolated."},
    {"missing_turns", "Missing turns",
     "A trajectory with fewer judged turns than T (it stopped early at PASSED with speedup >= the target, it failed "
     "or is still running, or an imported release holds fewer turns) has missing slots up to T. By default they "
     "count as NOT correct and stay in the denominator - the paper's rule: the rates are over trajectories x T. "
     "With --carry-forward the last judged turn's verdict fills them instead (a trajectory stopped early at a "
     "correct turn then counts as correct in every later slot). Every output names the rule used. Either way "
     "bests, Fast_p and pass@k use only the turns actually run. Trajectories that failed or are still running are "
     "counted as 'incomplete'."},
  };
}

// The rates, speedups, Fast_p, pass@k and their intervals.
std::vector<MetricDefinition> metric_value_definitions() {
  return {
    {"turn_correctness_rate", "Turn correctness rate",
     "Correct (PASSED) slots among each counted trajectory's first T slots / (counted trajectories x T - "
     "INFRA_ERROR slots). INFRA_ERROR slots (ours, not the model's) leave both numerator and denominator; missing "
     "slots as the missing-turns rule says. The paper's Table 1."},
    {"target_correctness_rate", "Target-instruction correctness rate",
     "Same denominator; the numerator counts only slots that are PASSED and whose verdict affirms "
     "target_instruction.correct (the target instructions - wgmma/TMA on sm_90a, tcgen05 on sm_100a - were seen "
     "executing in the runtime SASS). Missing SASS data (no target_instruction section, profile skipped, "
     "correct not true) counts as NOT target-instruction correct."},
    {"strict_target_rule", "Strict target-instruction rule",
     "Beside the paper's rule, every output gives the same metrics under the strict rule: a slot counts when its verdict "
     "affirms target_instruction.strict_correct (" + strict_target_rule() +
         "; target_instruction.coverage holds the share). The strict turn correctness rate, best strict speedup and "
         "Fast^Inst_p (strict) are computed exactly as their paper-rule twins with this qualifier. A PASSED verdict "
         "without the field (stored before it existed, or its coverage could not be measured) is 'strict unknown': it "
         "is NOT counted as strict correct, so strict values are lower bounds wherever such turns exist (marked *), and "
         "how many there were is reported (strict_unknown). Where NO correct slot within T has a strict verdict (every "
         "turn of an imported run) the strict values are unknown: n/a (null in JSON, empty in CSV)."},
    {"best_speedup", "Best speedup",
     "Per trajectory: the largest speedup (baseline time / candidate time, from the verdict) of its correct turns "
     "within the first T; none when it has no correct turn with a measured speedup (a PASSED turn without a "
     "speedup counts as correct but has no speedup). Reported: the max over trajectories, and the median of the "
     "per-trajectory bests over the trajectories that have one, with that n ([n=3]). Speedups print with 3 "
     "decimals, as the paper prints them. The max is the paper's Table 9."},
    {"best_target_speedup", "Best instruction-qualified speedup",
     "Same, over turns that are target-instruction correct."},
    {"fast_p", "Fast_p and Fast^Inst_p",
     "The share of ALL counted trajectories whose best (instruction-qualified, for Fast^Inst_p) speedup within "
     "T is strictly greater than p; a trajectory without a best counts in the denominator only. At p equal to a "
     "speedup, that trajectory is not counted (strict >). Fast_0 is therefore the share with a correct, timed turn."},
    {"pass_at_k", "pass@k",
     "Unbiased pass@k (Chen et al. 2021): with n counted trajectories of a group, c of which have a correct "
     "(target-instruction correct, strict) turn within the first T turns actually run, pass@k = 1 - C(n-c, k) / C(n, k): "
     "the chance that at least one of k trajectories drawn from the n passes. Given for k <= n only (n/a above); "
     "pass@1 = c / n, the share of trajectories with a correct turn within T."},
    {"bootstrap", "Bootstrap intervals",
     "[lo, hi] after a rate, a best speedup (max) or a Fast_p value: the percentile bootstrap interval over the group's "
     "counted trajectories (B resamples of n drawn with replacement, the statistic recomputed on each, the nearest-rank "
     "percentiles (1-c)/2 and (1+c)/2; B = 1000, c = 0.95 unless --bootstrap / --confidence say otherwise). Seeded "
     "(--seed) per group and budget by name, so the same seed gives the same intervals on every platform. In a "
     "resample, a trajectory without a best counts as speedup 0 for the max. Pointwise: each interval covers its own "
     "value. With few trajectories the intervals are wide, and the max's lower end is often far below it."},
  };
}

// Where verdicts came from, turn labels and transitions, tokens.
std::vector<MetricDefinition> provenance_and_token_definitions() {
  return {
    {"fake_backend", "Fake backend",
     "Verdicts made by the evaluation service's fake backend (serve --fake-gpus, for tests: no GPU used, statuses and "
     "speedups dictated by markers in the candidate) carry the mark fake: true. The report refuses runs that hold any "
     "unless --allow-fake is given; then every output says which numbers come from the fake backend and how many "
     "verdicts were fake."},
    {"evaluation_options", "Evaluation options",
     "Each verdict records the options its evaluation ran with (environment.options; the timing section's policy; "
     "skipped sanitize or timing stages; a PASSED verdict whose runtime SASS was not measured). A group whose "
     "verdicts differ from the evaluator's defaults in correctness trials, tolerance, timing policy, sanitize, "
     "profile, timing or their time limits says which option, which value and in how many verdicts. Device "
     "placement, GPU sharing and memory budgets are not compared (they do not change what is measured)."},
    {"turn_labels", "Turn labels",
     "Each judged turn gets one label of the paper (Correct, Numerical error, Compilation error, Runtime error, "
     "Sanitize timeout, Kernel execution timeout, Service timeout, Extraction error, Other) from its status by the "
     "mapping shown; INFRA_ERROR turns are counted as 'Infra error (excluded)'. Counts are over the turns actually "
     "run (no carry-forward), in total and per turn index."},
    {"transitions", "Error-state transitions",
     "Counts of label(n) -> label(n+1) over consecutive judged turns of the same trajectory (no carry-forward; "
     "INFRA_ERROR is a state of its own so no turn disappears)."},
    {"tokens", "Tokens per trajectory",
     "Sums over every stored model call of a trajectory (one per turn, retries included as the provider billed "
     "the successful attempt): prompt, completion, reasoning (part of completion) and cached (part of prompt); "
     "total = prompt + completion. Groups report the median, the mean and the sum of these per-trajectory "
     "(cumulative) counts over all trajectories."},
    {"reasoning_by_turn", "Reasoning tokens by turn",
     "For each turn number, the reasoning tokens of that turn's model call over the trajectories that have it "
     "stored (calls = how many): median, mean, min and max (the paper's Figure 7). A turn after an early stop has "
     "no call and is not counted as 0. Providers that return no reasoning count give 0."},
    {"token_ratio", "Token ratio between runs",
     "When several runs are given, each later run is compared with the first (e.g. agent RUN first, refinement "
     "RUN second): ratio = the MEDIAN of the first run's per-trajectory cumulative tokens / the median of the other's "
     "(the paper's Tables 3 and 8), per definition both ran and over all definitions, for each token kind."},
  };
}

}  // namespace

const std::vector<MetricDefinition>& metric_definitions() {
  static const std::vector<MetricDefinition> defs = [] {
    std::vector<MetricDefinition> all;
    for (auto part : {counting_definitions, metric_value_definitions, provenance_and_token_definitions}) {
      auto defs = part();
      all.insert(all.end(), defs.begin(), defs.end());
    }
    return all;
  }();
  return defs;
}

const std::string& definition_text(const std::string& key) {
  static const std::string none;
  for (const auto& d : metric_definitions())
    if (d.key == key) return d.text;
  return none;
}

}  // namespace ptxbench::report
