#include "adapt/reasoning_synthesis.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "notes/repair_note.h"
#include "common/sha256.h"
#include "common/text.h"

namespace ptxbench {
namespace {

constexpr const char* kCutMarker = "\n[... {} characters cut ...]";
constexpr const char* kOpenTag = "<reasoning>";
constexpr const char* kCloseTag = "</reasoning>";
constexpr const char* kReservedTags[] = {"<think>", "</think>", "<reasoning>", "</reasoning>"};
/// Phrases that give away that the writer saw the answer (lower case; matched case-insensitively).
constexpr const char* kForbiddenPhrases[] = {"kernel above", "kernel shown above", "expert kernel", "expert's kernel"};

constexpr const char* kSystem =
    "You write the private reasoning of a GPU kernel engineer who programs NVIDIA Hopper and Blackwell GPUs "
    "in CUDA with inline PTX (wgmma, TMA bulk tensor copies, mbarriers, tcgen05). The reasoning becomes "
    "supervised training data: a model will learn to think this way before it writes a kernel, so it has "
    "to be technically exact, concrete and written as the engineer's own thoughts at that moment.";

std::string trimmed(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

/// Lines trimmed of blanks, without those shorter than kLeakMinLineChars.
std::vector<std::string> significant_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = trimmed(std::string_view(text).substr(start, end - start));
    if (line.size() >= kLeakMinLineChars) out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

std::string rules(const ReasoningLimits& limits) {
  return fmt::format(
      "- Write in the first person, as the thoughts of the engineer before the next kernel exists: what the "
      "evidence says, the cause, the options with why each is taken or dropped, the numbers (tile shapes, "
      "shared-memory bytes, register counts, barrier phases, descriptor fields), and the plan.\n"
      "- Never refer to a kernel you were shown as the answer: no \"kernel above\", no \"expert's kernel\", no "
      "mention of these instructions.\n"
      "- Code: short snippets only (a few lines each). Never copy the kernel to be written, as a whole or in long "
      "stretches ({} consecutive lines of it are refused).\n"
      "- Length: between {} and {} characters.\n"
      "- Answer with the reasoning only, inside one <reasoning> ... </reasoning> block, nothing before or after it, "
      "and no <think> tags.",
      kLeakRunLines, limits.min_chars, limits.max_chars);
}

std::string repair_user(const ReasoningRequest& r, const ReasoningLimits& limits) {
  std::string out = "# The task\n\n" + cut(r.task, kReasoningTaskMaxChars, kCutMarker) + "\n\n";
  out += "# The engineer's previous kernel (verdict: " + r.wrong_status + ")\n\n" +
         fenced(cut(r.wrong_kernel, kReasoningKernelMaxChars, kCutMarker), "cuda") + "\n";
  out += "# The evaluator's feedback on it\n\n" + fenced(cut(r.feedback, kReasoningFeedbackMaxChars, kCutMarker), "text") + "\n";
  out += "# The kernel the engineer writes next (it passes and executes the target instructions)\n\n" +
         fenced(cut(r.target_kernel, kReasoningKernelMaxChars, kCutMarker), "cuda") + "\n";
  out += "# What to write\n\n"
         "Write the reasoning the engineer goes through after reading the feedback and before writing the next "
         "kernel: which part of the previous kernel the feedback points to and why it fails, what must change, "
         "and how the next kernel does it. It must lead to exactly the next kernel shown above, while being "
         "written as if that kernel did not exist yet.\n\n" +
         rules(limits) + "\n";
  return out;
}

std::string generation_user(const ReasoningRequest& r, const ReasoningLimits& limits) {
  std::string out = "# The task\n\n" + cut(r.task, kReasoningTaskMaxChars, kCutMarker) + "\n\n";
  out += "# The kernel the engineer writes (it passes and executes the target instructions)\n\n" +
         fenced(cut(r.target_kernel, kReasoningKernelMaxChars, kCutMarker), "cuda") + "\n";
  out += "# What to write\n\n"
         "Write the reasoning the engineer goes through after reading the task and before writing the kernel: "
         "the shapes and data types, the work decomposition, the data movement and synchronisation, the "
         "instructions to use and their constraints, and the plan. It must lead to exactly this kernel, while "
         "being written as if the kernel did not exist yet.\n\n" +
         rules(limits) + "\n";
  return out;
}

const char* kind_name(ReasoningKind k) { return k == ReasoningKind::repair ? "repair" : "generation"; }

}  // namespace

ordered_json ReasoningLimits::to_json() const {
  return {{"min_chars", min_chars}, {"max_chars", max_chars}, {"attempts", attempts}, {"concurrency", concurrency}};
}

std::string ReasoningRequest::key(const std::string& teacher_model) const {
  Sha256 h;
  h.field(kReasoningCacheSchema).field(std::to_string(kReasoningPromptVersion)).field(kind_name(kind));
  h.field(teacher_model).field(task).field(wrong_kernel).field(wrong_status).field(feedback).field(target_kernel);
  return h.hex_digest();
}

ReasoningRequest reasoning_request(const RepairPair& pair) {
  ReasoningRequest r;
  r.kind = ReasoningKind::repair;
  r.task = pair.task;
  r.wrong_kernel = pair.wrong_sha256 ? pair.wrong_source : pair.wrong_answer;
  r.wrong_status = pair.wrong_status;
  r.feedback = pair.wrong_feedback;
  r.target_kernel = pair.fixed_source;
  return r;
}

ReasoningRequest reasoning_request(const CorrectKernel& kernel) {
  ReasoningRequest r;
  r.kind = ReasoningKind::generation;
  r.task = kernel.task;
  r.target_kernel = kernel.source;
  return r;
}

ReasoningPrompt reasoning_prompt(const ReasoningRequest& request, const ReasoningLimits& limits,
                                 const std::vector<std::string>& rejections) {
  ReasoningPrompt p;
  p.system = kSystem;
  p.user = request.kind == ReasoningKind::repair ? repair_user(request, limits) : generation_user(request, limits);
  if (!rejections.empty()) {
    p.user += fmt::format(
        "\n# Your previous answer was rejected\n\nReason: {}.\n\nWrite the reasoning again from the start. The rules "
        "are strict: an answer that breaks any of them is thrown away.\n\n{}\n",
        rejections.back(), rules(limits));
  }
  return p;
}

std::optional<std::string> extract_reasoning(const std::string& answer) {
  auto open = answer.find(kOpenTag);
  if (open == std::string::npos) return std::nullopt;
  auto body = open + std::string_view(kOpenTag).size();
  auto close = answer.rfind(kCloseTag);
  if (close == std::string::npos || close < body) return std::nullopt;
  return trimmed(std::string_view(answer).substr(body, close - body));
}

std::size_t longest_copied_run(const std::string& text, const std::string& kernel) {
  auto k = significant_lines(kernel);
  auto t = significant_lines(text);
  if (k.empty() || t.empty()) return 0;
  std::unordered_map<std::string, int> ids;
  auto id_of = [&](const std::string& s) { return ids.emplace(s, static_cast<int>(ids.size())).first->second; };
  std::vector<int> ki, ti;
  for (const auto& s : k) ki.push_back(id_of(s));
  for (const auto& s : t) {
    auto it = ids.find(s);
    ti.push_back(it == ids.end() ? -1 : it->second);
  }
  // Longest common run of consecutive ids: prev[j] = run ending at t[i-1], k[j-1].
  std::vector<std::size_t> prev(ki.size() + 1, 0), cur(ki.size() + 1, 0);
  std::size_t best = 0;
  for (std::size_t i = 1; i <= ti.size(); ++i) {
    for (std::size_t j = 1; j <= ki.size(); ++j) {
      cur[j] = ti[i - 1] >= 0 && ti[i - 1] == ki[j - 1] ? prev[j - 1] + 1 : 0;
      best = std::max(best, cur[j]);
    }
    std::swap(prev, cur);
  }
  return best;
}

std::optional<std::string> reasoning_rejection(const std::string& reasoning, const std::string& target_kernel,
                                               const ReasoningLimits& limits) {
  std::size_t n = utf8_length(reasoning);
  if (n < limits.min_chars) return fmt::format("too short: {} characters, the minimum is {}", n, limits.min_chars);
  if (n > limits.max_chars) return fmt::format("too long: {} characters, the maximum is {}", n, limits.max_chars);
  for (const char* tag : kReservedTags)
    if (reasoning.find(tag) != std::string::npos) return fmt::format("it contains the reserved tag {}", tag);
  std::string low = lower(reasoning);
  for (const char* phrase : kForbiddenPhrases)
    if (low.find(phrase) != std::string::npos)
      return fmt::format("it refers to the kernel it was shown (\"{}\")", phrase);
  auto kernel_lines = significant_lines(target_kernel);
  if (!kernel_lines.empty()) {
    std::size_t run = longest_copied_run(reasoning, target_kernel);
    if (run >= std::min(kLeakRunLines, kernel_lines.size()))
      return fmt::format("it copies the kernel to be written: {} consecutive lines of it", run);
    std::unordered_set<std::string> distinct(kernel_lines.begin(), kernel_lines.end());
    auto lines = significant_lines(reasoning);
    std::unordered_set<std::string> present(lines.begin(), lines.end());
    std::size_t found = static_cast<std::size_t>(
        std::count_if(distinct.begin(), distinct.end(), [&](const std::string& s) { return present.count(s) > 0; }));
    if (static_cast<double>(found) >= kLeakLineShare * static_cast<double>(distinct.size()))
      return fmt::format("it copies the kernel to be written: {} of its {} distinct lines", found, distinct.size());
  }
  return std::nullopt;
}

// ---- the synthesizer

namespace {

SynthesisResult result_of(const TeacherOutcome& o, const std::string& teacher_model) {
  SynthesisResult r;
  r.accepted = o.accepted;
  r.reasoning = o.value;
  r.attempts = o.attempts;
  r.rejections = o.rejections;
  r.from_cache = o.from_cache;
  r.teacher_model = teacher_model;
  return r;
}

}  // namespace

ReasoningSynthesizer::ReasoningSynthesizer(ModelClient& client, std::string teacher_model, ReasoningLimits limits,
                                           fs::path cache_dir)
    : m_client(client),
      m_model(std::move(teacher_model)),
      m_limits(limits),
      m_cache(std::move(cache_dir), kReasoningCacheSchema, "reasoning") {
  fs::create_directories(m_cache.dir());
}

fs::path ReasoningSynthesizer::cache_path(const ReasoningRequest& request) const {
  return m_cache.path(request.key(m_model));
}

std::optional<SynthesisResult> ReasoningSynthesizer::cached(const ReasoningRequest& request) const {
  auto hit = m_cache.load(request.key(m_model), m_limits.attempts, [&](const std::string& reasoning) {
    return !reasoning_rejection(reasoning, request.target_kernel, m_limits);
  });
  if (!hit) return std::nullopt;
  return result_of(*hit, m_model);
}

SynthesisResult ReasoningSynthesizer::synthesize(const ReasoningRequest& request) {
  if (auto hit = cached(request)) return *hit;
  TeacherOutcome o = ask_teacher(
      m_client, m_limits.attempts,
      [&](const std::vector<std::string>& rejections) {
        ReasoningPrompt prompt = reasoning_prompt(request, m_limits, rejections);
        ChatRequest call;
        call.system = prompt.system;
        call.messages = {{"user", prompt.user}};
        return call;
      },
      [&](const std::string& answer) {
        auto text = extract_reasoning(answer);
        if (!text) return AnswerCheck::reject("the answer has no closed <reasoning> ... </reasoning> block");
        if (auto why = reasoning_rejection(*text, request.target_kernel, m_limits)) return AnswerCheck::reject(*why);
        return AnswerCheck::accept(*text);
      },
      m_calls);
  const std::string key = request.key(m_model);
  m_cache.store(key, {{"prompt_version", kReasoningPromptVersion}, {"key", key}, {"teacher_model", m_model}}, o);
  return result_of(o, m_model);
}

}  // namespace ptxbench
