#include "adapt/note_synthesis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "adapt/reasoning_synthesis.h"
#include "common/sha256.h"

namespace ptxbench {
namespace {

constexpr const char* kAnswerField = "answer";

std::size_t line_count(const std::string& text) {
  if (text.empty()) return 0;
  std::size_t n = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? n : n + 1;
}

std::string limits_text() {
  return fmt::format(
      "The example is at most {} lines. No field may hold more than {} consecutive lines of either kernel: quote "
      "only the few lines that show the correct form.",
      kNoteExampleMaxLines, kNoteCopyMaxLines);
}

ordered_json note_json(const NoteText& t) {
  ordered_json j{{"what_was_wrong", t.what_was_wrong}, {"rule", t.rule}, {"fix", t.fix}, {"example", t.example}};
  if (t.instruction_note && !t.instruction_note->empty()) j["instruction_note"] = t.instruction_note->to_json();
  return j;
}

/// Every text the teacher wrote, one field per line group: what the copy check reads.
std::string all_note_text(const NoteText& t) {
  std::string all = t.what_was_wrong + "\n" + t.rule + "\n" + t.fix + "\n" + t.example;
  if (const auto& part = t.instruction_note) {
    for (const std::string* f : {&part->instruction, &part->shape_context, &part->operand_contract, &part->diagnostics})
      all += "\n" + *f;
    for (const auto* list : {&part->required_sequence, &part->do_not_do})
      for (const auto& item : *list) all += "\n" + item;
  }
  return all;
}

AnswerCheck check_answer(const std::string& answer, const RepairPair& pair) {
  try {
    (void)read_note_answer(answer, pair);
  } catch (const InputError& e) {
    return AnswerCheck::reject(JsonChecker::message_of(e));
  }
  return AnswerCheck::accept(answer);
}

NoteOutcome outcome_of(const TeacherOutcome& o, const RepairPair& pair) {
  NoteOutcome r;
  r.accepted = o.accepted;
  r.attempts = o.attempts;
  r.rejections = o.rejections;
  r.from_cache = o.from_cache;
  if (o.accepted) r.text = read_note_answer(o.value, pair);
  return r;
}

NoteSource source_of(const RepairPair& p) {
  return {p.run_id, p.trajectory_id, p.wrong_turn, p.fixed_turn, p.wrong_sha256.value_or(""), p.fixed_sha256};
}

/// Each pair's op family by definition, after the held-out guard: both before anything is asked.
std::map<std::string, std::string> checked_families(const std::vector<RepairPair>& pairs,
                                                    const HeldOutDefinitions& held_out, const OpTypeOf& op_type) {
  for (const auto& p : pairs) held_out.check(p.definition(), "a repair note");
  std::map<std::string, std::string> families;
  for (const auto& p : pairs)
    if (!families.count(p.definition())) families[p.definition()] = op_family(op_type(p.definition()));
  return families;
}

RepairNote note_of(const RepairPair& p, const std::string& family, const NoteText& text, const std::string& teacher) {
  RepairNote n;
  n.op_family = family;
  n.definition = p.definition();
  n.source = source_of(p);
  n.wrong_status = p.wrong_status;
  n.text = text;
  if (p.fixed_speedup && std::isfinite(*p.fixed_speedup) && *p.fixed_speedup > 0) n.fixed_speedup = p.fixed_speedup;
  n.teacher_model = teacher;
  return n;  // created_at 0: the store stamps it
}

}  // namespace

TeacherPrompt note_prompt(const RepairPair& pair, const std::string& family, const std::vector<std::string>& rejections) {
  const std::string& wrong = pair.wrong_sha256 ? pair.wrong_source : pair.wrong_answer;
  TeacherPrompt p = teacher_prompt(wrong, pair.wrong_feedback, pair.fixed_source);
  p.system += "\n\n" + limits_text();
  p.user = fmt::format("## Context\n\nDefinition {} (op family {}). The rejected kernel's verdict: {}.\n\n", pair.definition(),
                       family, pair.wrong_status) +
           p.user;
  if (!rejections.empty())
    p.user += fmt::format(
        "\n## Your previous answer was rejected\n\nReason: {}.\n\nWrite the note again from the start. The rules are "
        "strict: an answer that breaks any of them is thrown away. Answer with one JSON object and nothing else, "
        "with exactly the four string fields what_was_wrong (at most {} characters), rule (at most {}), fix (at most "
        "{}) and example (at most {} characters), none of them empty, and optionally instruction_note (an object; "
        "its limits are in the instructions above). {}\n",
        rejections.back(), kWhatWasWrongMaxChars, kRuleMaxChars, kFixMaxChars, kExampleMaxChars, limits_text());
  return p;
}

std::string note_request_key(const TeacherPrompt& first_prompt, const std::string& teacher_model) {
  return Sha256().field(kNoteCacheSchema).field(teacher_model).field(first_prompt.system).field(first_prompt.user).hex_digest();
}

std::optional<std::string> note_rejection(const NoteText& text, const std::string& wrong_kernel,
                                          const std::string& fixed_kernel) {
  if (std::size_t n = line_count(text.example); n > kNoteExampleMaxLines)
    return fmt::format("example: {} lines, over the limit of {}", n, kNoteExampleMaxLines);
  const std::string all = all_note_text(text);
  for (const auto& [kernel, name] : {std::pair{&fixed_kernel, "fixed"}, std::pair{&wrong_kernel, "rejected"}})
    if (std::size_t run = longest_copied_run(all, *kernel); run > kNoteCopyMaxLines)
      return fmt::format("it copies {} consecutive lines of the {} kernel (at most {})", run, name, kNoteCopyMaxLines);
  return std::nullopt;
}

NoteText read_note_answer(const std::string& answer, const RepairPair& pair) {
  NoteText t = parse_teacher_answer(answer);
  if (auto why = note_rejection(t, pair.wrong_source, pair.fixed_source))
    throw InputError("repair note", "teacher answer: " + *why);
  return t;
}

// ---- the synthesizer

NoteSynthesizer::NoteSynthesizer(ModelClient* client, std::string teacher_model, int attempts, fs::path cache_dir)
    : m_client(client),
      m_model(std::move(teacher_model)),
      m_attempts(attempts),
      m_cache(std::move(cache_dir), kNoteCacheSchema, kAnswerField) {}

std::optional<NoteOutcome> NoteSynthesizer::cached(const RepairPair& pair, const std::string& family) const {
  std::string key = note_request_key(note_prompt(pair, family), m_model);
  auto hit = m_cache.load(key, m_attempts, [&](const std::string& answer) { return check_answer(answer, pair).value.has_value(); });
  if (!hit) return std::nullopt;
  return outcome_of(*hit, pair);
}

NoteOutcome NoteSynthesizer::synthesize(const RepairPair& pair, const std::string& family) {
  if (auto hit = cached(pair, family)) return *hit;
  if (m_client == nullptr) throw Error("notes", "no teacher client: the note of this pair is not cached");
  const TeacherPrompt first = note_prompt(pair, family);
  TeacherOutcome o = ask_teacher(
      *m_client, m_attempts,
      [&](const std::vector<std::string>& rejections) {
        TeacherPrompt p = rejections.empty() ? first : note_prompt(pair, family, rejections);
        ChatRequest call;
        call.system = p.system;
        call.messages = {{"user", p.user}};
        return call;
      },
      [&](const std::string& answer) { return check_answer(answer, pair); }, m_calls);
  NoteOutcome r = outcome_of(o, pair);
  std::string key = note_request_key(first, m_model);
  m_cache.store(key, {{"key", key}, {"teacher_model", m_model}}, o,
                o.accepted ? ordered_json{{"note", note_json(r.text)}} : ordered_json(nullptr));
  return r;
}

// ---- notes for pairs

ordered_json NoteCounts::to_json() const {
  return {{"pairs", pairs},           {"no_wrong_kernel", no_wrong_kernel}, {"already_noted", already_noted},
          {"requested", requested},   {"cache_hits", cache_hits},           {"teacher_calls", teacher_calls},
          {"written", written},       {"rejected", rejected}};
}

NoteCounts add_pair_notes(const std::vector<RepairPair>& pairs, const HeldOutDefinitions& held_out,
                          const OpTypeOf& op_type, NotesStore* store, NoteSynthesizer& synth,
                          const PairNotesOptions& options, std::vector<int64_t>* added) {
  NoteCounts c;
  c.pairs = static_cast<int64_t>(pairs.size());
  const auto families = checked_families(pairs, held_out, op_type);
  if (store == nullptr && !options.dry_run) throw Error("notes", "add_pair_notes: no notes store");

  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (!pairs[i].wrong_sha256) {
      ++c.no_wrong_kernel;
    } else if (store != nullptr && store->find_by_source(source_of(pairs[i]))) {
      ++c.already_noted;
    } else {
      todo.push_back(i);
    }
  }
  c.requested = static_cast<int64_t>(todo.size());
  if (options.dry_run) {
    for (auto i : todo) c.cache_hits += synth.cached(pairs[i], families.at(pairs[i].definition())).has_value();
    return c;
  }

  // The teacher, concurrently; outcomes land by index, so the notes go in in the pairs' order.
  const int64_t calls_before = synth.calls();
  std::vector<std::optional<NoteOutcome>> outcomes(todo.size());
  std::exception_ptr failure;
  std::mutex progress_mutex;
  std::atomic<std::size_t> done{0};
  try {
    for_each_request(todo.size(), options.concurrency, [&](std::size_t k) {
      const RepairPair& p = pairs[todo[k]];
      outcomes[k] = synth.synthesize(p, families.at(p.definition()));
      std::size_t n = ++done;
      if (options.progress) {
        std::lock_guard lock(progress_mutex);
        options.progress(fmt::format("notes {}/{}", n, todo.size()));
      }
    });
  } catch (...) {
    failure = std::current_exception();  // add what was answered, then rethrow
  }
  c.teacher_calls = synth.calls() - calls_before;
  for (std::size_t k = 0; k < todo.size(); ++k) {
    if (!outcomes[k]) continue;
    const NoteOutcome& o = *outcomes[k];
    const RepairPair& p = pairs[todo[k]];
    c.cache_hits += o.from_cache;
    if (!o.accepted) {
      ++c.rejected;
      continue;
    }
    RepairNote note = note_of(p, families.at(p.definition()), o.text, synth.teacher_model());
    if (store->find_by_source(note.source)) {  // another process was quicker
      ++c.already_noted;
      continue;
    }
    int64_t id = store->add(note, p.wrong_source, p.fixed_source);
    if (added) added->push_back(id);
    ++c.written;
  }
  if (failure) std::rethrow_exception(failure);
  return c;
}

// ---- ptxbench data notes

fs::path default_note_cache_dir(const fs::path& notes_path) { return notes_path.parent_path() / "note_cache"; }

ordered_json NotesResult::to_json() const {
  ordered_json ids = ordered_json::array();
  for (auto id : added) ids.push_back(id);
  return {{"selection", plan.to_json()}, {"notes", counts.to_json()}, {"added", ids},
          {"notes_store", notes_path},   {"store_notes", store_notes}, {"cache", cache_dir.string()}};
}

void check_notes_recipe(const DataRecipe& recipe) {
  if (recipe.kind != RecordKind::fixit)
    throw InputError("data", "recipe '" + recipe.name + "' is of kind " + to_string(recipe.kind) +
                                 ": notes are written about wrong→fixed pairs, so the recipe must be of kind fixit");
  if (!recipe.teacher)
    throw InputError("data", "recipe '" + recipe.name +
                                 "' names no teacher: notes are written by one (\"teacher\": a model endpoint as in a run "
                                 "config's \"model\"; docs/adaptation.md)");
}

NotesResult write_notes(const RunStore& runs, const DataRecipe& recipe, const fs::path& notes_path,
                        const NotesOptions& options) {
  check_notes_recipe(recipe);
  if (!options.op_type) throw Error("notes", "write_notes: no op_type lookup");
  NotesResult r;
  r.notes_path = notes_path.string();
  r.cache_dir = options.cache_dir.empty() ? default_note_cache_dir(notes_path) : options.cache_dir;
  r.plan = plan_dataset(runs, recipe);
  const HeldOutDefinitions held_out = recipe.held_out_set();
  (void)checked_families(r.plan.fixit, held_out, options.op_type);  // before a store or a client exists
  PairNotesOptions po;
  po.concurrency = recipe.reasoning.concurrency;
  po.dry_run = options.dry_run;
  po.progress = options.progress;

  if (options.dry_run) {
    std::unique_ptr<NotesStore> store;
    if (fs::exists(notes_path)) store = std::make_unique<NotesStore>(notes_path.string(), NotesStore::Open::existing);
    NoteSynthesizer synth(nullptr, recipe.teacher->model, recipe.reasoning.attempts, r.cache_dir);
    r.counts = add_pair_notes(r.plan.fixit, held_out, options.op_type, store.get(), synth, po);
    r.store_notes = store ? store->count() : 0;
    return r;
  }
  std::unique_ptr<ModelClient> owned;
  ModelClient* client = options.teacher;
  if (client == nullptr) {
    owned = make_model_client(*recipe.teacher);  // a missing key fails here, before anything is created
    client = owned.get();
  }
  if (notes_path.has_parent_path()) fs::create_directories(notes_path.parent_path());
  NotesStore store(notes_path.string(), NotesStore::Open::create);
  NoteSynthesizer synth(client, recipe.teacher->model, recipe.reasoning.attempts, r.cache_dir);
  r.counts = add_pair_notes(r.plan.fixit, held_out, options.op_type, &store, synth, po, &r.added);
  r.store_notes = store.count();
  return r;
}

std::string describe_notes(const DataRecipe& recipe, const NotesResult& r, bool dry_run) {
  // The plan as `data build` prints it, but for its last line: the teacher writes notes here.
  std::string out = describe_plan(recipe, r.plan);
  if (std::size_t at = out.rfind("\nteacher: "); at != std::string::npos) out.resize(at + 1);
  out += fmt::format("teacher: {} at {} (a note per pair, at most {} calls each)\n", recipe.teacher->model,
                     recipe.teacher->base_url, recipe.reasoning.attempts);
  const NoteCounts& c = r.counts;
  out += fmt::format("notes: {} pairs: {} already in the store, {} without a wrong kernel (extraction errors), ", c.pairs,
                     c.already_noted, c.no_wrong_kernel);
  if (dry_run) {
    out += fmt::format("{} to ask ({} answered in the cache {})\n", c.requested, c.cache_hits, r.cache_dir.string());
    out += fmt::format("notes store {}: {} notes\n", r.notes_path, r.store_notes);
    return out;
  }
  out += fmt::format("{} asked -> {} notes written, {} rejected (every answer refused)\n", c.requested, c.written, c.rejected);
  out += fmt::format("teacher calls {}, answers from the cache {}\n", c.teacher_calls, c.cache_hits);
  out += fmt::format("notes store {}: {} notes; teacher answers cached in {}\n", r.notes_path, r.store_notes,
                     r.cache_dir.string());
  return out;
}

}  // namespace ptxbench
