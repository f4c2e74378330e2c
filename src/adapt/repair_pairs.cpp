#include "adapt/repair_pairs.h"

#include <set>

#include "common/sha256.h"

namespace ptxbench {

std::string RepairPair::pair_hash() const {
  Sha256 h;
  h.field("ptxbench.repair_pair/1");
  h.field(task);
  h.field(wrong_sha256 ? *wrong_sha256 : "answer:" + sha256_hex(wrong_answer));
  h.field(wrong_feedback);
  h.field(fixed_sha256);
  return h.hex_digest();
}

std::string CorrectKernel::kernel_hash() const {
  return Sha256().field("ptxbench.kernelgen/1").field(key.definition).field(sha256).hex_digest();
}

ordered_json PairCounts::to_json() const {
  return {{"failed_turns", failed_turns}, {"no_fix", no_fix},     {"no_feedback", no_feedback},
          {"same_kernel", same_kernel},   {"slow_fix", slow_fix}, {"duplicates", duplicates},
          {"pairs", pairs}};
}

ordered_json KernelCounts::to_json() const {
  return {{"correct_turns", correct_turns}, {"duplicates", duplicates}, {"kernels", kernels}};
}

std::optional<std::size_t> next_fix(const SourceTrajectory& t, std::size_t wrong_index, const FixRule& rule) {
  for (std::size_t i = wrong_index + 1; i < t.turns.size(); ++i) {
    const auto& r = t.turns[i];
    if (r.correct && (r.target_instruction || !rule.require_target_instruction) && r.candidate_source && r.candidate_sha256)
      return i;
  }
  return std::nullopt;
}

PairSet repair_pairs(const SourceSet& sources, const std::vector<FailedTurn>& failed, const FixRule& rule) {
  PairSet out;
  std::set<std::string> seen;
  for (const auto& f : failed) {
    ++out.counts.failed_turns;
    const auto& t = sources.trajectories.at(f.source);
    const auto& wrong = t.turns.at(f.turn_index);
    auto fix = next_fix(t, f.turn_index, rule);
    if (!fix) {
      ++out.counts.no_fix;
      continue;
    }
    if (!wrong.feedback || wrong.feedback->empty()) {
      ++out.counts.no_feedback;
      continue;
    }
    const auto& fixed = t.turns[*fix];
    if (wrong.candidate_sha256 && *wrong.candidate_sha256 == *fixed.candidate_sha256) {
      ++out.counts.same_kernel;
      continue;
    }
    if (rule.min_speedup && !(fixed.speedup && *fixed.speedup > *rule.min_speedup)) {
      ++out.counts.slow_fix;
      continue;
    }
    RepairPair p;
    p.run_id = t.run_id;
    p.trajectory_id = t.info.id;
    p.key = t.info.key;
    p.system = t.system;
    p.task = t.task;
    p.wrong_turn = f.turn;
    p.wrong_is_seed = t.seeded && f.turn_index == 0;
    if (p.wrong_is_seed) p.wrong_origin = t.seed_origin;
    p.wrong_label = f.label;
    p.wrong_status = wrong.status;
    if (wrong.candidate_sha256 && wrong.candidate_source) {
      p.wrong_sha256 = wrong.candidate_sha256;
      p.wrong_source = *wrong.candidate_source;
    }
    p.wrong_answer = wrong.answer.value_or("");
    p.wrong_feedback = *wrong.feedback;
    p.fixed_turn = fixed.turn;
    p.fixed_sha256 = *fixed.candidate_sha256;
    p.fixed_source = *fixed.candidate_source;
    p.fixed_status = fixed.status;
    p.fixed_speedup = fixed.speedup;
    if (!seen.insert(p.pair_hash()).second) {
      ++out.counts.duplicates;
      continue;
    }
    out.strata.push_back({p.definition(), report::label_key(p.wrong_label)});
    out.pairs.push_back(std::move(p));
  }
  out.counts.pairs = static_cast<int64_t>(out.pairs.size());
  return out;
}

KernelSet correct_kernels(const SourceSet& sources, int64_t turn_from, int64_t turn_to) {
  KernelSet out;
  std::set<std::string> seen;
  for (const auto& t : sources.trajectories) {
    for (std::size_t i = t.seeded ? 1 : 0; i < t.turns.size(); ++i) {  // a seed is not the model's kernel
      const auto& r = t.turns[i];
      if (!r.correct || !r.target_instruction || !r.candidate_source || !r.candidate_sha256) continue;
      if (r.turn < turn_from || r.turn > turn_to) continue;
      ++out.counts.correct_turns;
      CorrectKernel k{t.run_id, t.info.id, t.info.key, t.system, t.task, r.turn, *r.candidate_sha256, *r.candidate_source,
                      r.status, r.speedup};
      if (!seen.insert(k.kernel_hash()).second) {
        ++out.counts.duplicates;
        continue;
      }
      out.strata.push_back({k.definition(), report::label_key(report::TurnLabel::correct)});
      out.kernels.push_back(std::move(k));
    }
  }
  out.counts.kernels = static_cast<int64_t>(out.kernels.size());
  return out;
}

}  // namespace ptxbench
