// Writing repair notes (docs/design.md §9, issue 19 item 5; docs/adaptation.md, "Repair notes"): for each
// wrong→fixed pair a recipe selects, the recipe's teacher is asked for one structured note
// (repair_note.h: what was wrong, the rule, the fix, a short example) as a JSON object. An answer
// that is not exactly that, is over a limit, or copies the kernels is refused and asked again with
// the reason, up to `attempts` calls (teacher_call.h); every outcome is cached by SHA-256 of the
// teacher and the prompt; each accepted note goes into the notes store (notes_store.h) with its
// provenance. One note per pair: a pair the store already holds a note of is never asked again,
// so a second run adds nothing. Held-out definitions never get a note.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "adapt/data_recipe.h"
#include "adapt/dataset_builder.h"
#include "notes/notes_store.h"
#include "notes/repair_note.h"
#include "adapt/repair_pairs.h"
#include "adapt/teacher_call.h"
#include "llm/model_client.h"
#include "runs/run_store.h"
#include "common/fs.h"

namespace ptxbench {

inline constexpr const char* kNoteCacheSchema = "ptxbench.note_answer";
/// The example's line limit, beside repair_note.h's kExampleMaxChars: a few lines of the correct
/// form, not a kernel.
inline constexpr std::size_t kNoteExampleMaxLines = 30;
/// The most consecutive lines of either kernel a note may hold (lines trimmed, those shorter than
/// kLeakMinLineChars ignored, as reasoning_rejection counts them). A snippet of the correct form
/// is what the example is for; a stretch of the kernel would only be retrieved as noise.
inline constexpr std::size_t kNoteCopyMaxLines = 8;

/// The teacher's messages for a pair: teacher_prompt() of its wrong kernel, feedback and fixed
/// kernel, preceded by the definition, its op family and the wrong kernel's status, with the
/// example's line limit and the copy limit added to the system text. With rejections, the user
/// message ends with a section naming the last one and restating the rules strictly.
TeacherPrompt note_prompt(const RepairPair& pair, const std::string& op_family,
                          const std::vector<std::string>& rejections = {});

/// The cache key of a request: SHA-256 over kNoteCacheSchema, the teacher model and the first
/// prompt's system and user messages (every text shown, so a changed prompt is a new request).
std::string note_request_key(const TeacherPrompt& first_prompt, const std::string& teacher_model);

/// Why an otherwise well-formed note is refused, nullopt when it is accepted: an example over
/// kNoteExampleMaxLines lines, or more than kNoteCopyMaxLines consecutive lines of either kernel in
/// its fields.
std::optional<std::string> note_rejection(const NoteText& text, const std::string& wrong_kernel,
                                          const std::string& fixed_kernel);

/// The note in a teacher's answer about `pair`: parse_teacher_answer (one JSON object, exactly the
/// four fields, each non-empty and within its limit), then note_rejection. InputError naming the
/// reason otherwise.
NoteText read_note_answer(const std::string& answer, const RepairPair& pair);

struct NoteOutcome {
  bool accepted = false;
  NoteText text;                        ///< the accepted note (empty when refused every time)
  int attempts = 0;                     ///< teacher calls it took (for a cached outcome: as recorded)
  std::vector<std::string> rejections;  ///< why each refused answer was refused, in order
  bool from_cache = false;
};

/// Thread-safe: pairs may be synthesized concurrently (the client is; cache entries are separate
/// files written atomically).
class NoteSynthesizer {
 public:
  /// `client` may be nullptr for lookups only (a dry run): synthesize then throws for anything not
  /// cached. `attempts`: teacher calls per pair, the first included. The cache folder is created
  /// by the first answer stored.
  NoteSynthesizer(ModelClient* client, std::string teacher_model, int attempts, fs::path cache_dir);

  /// The cached outcome when it is still valid (accepted and still passing read_note_answer, or
  /// refused after at least `attempts` calls); otherwise up to `attempts` teacher calls, stored in
  /// the cache whatever the outcome. A call that fails for good propagates and caches nothing.
  NoteOutcome synthesize(const RepairPair& pair, const std::string& op_family);
  /// The cached outcome synthesize would return without a call, if any.
  [[nodiscard]] std::optional<NoteOutcome> cached(const RepairPair& pair, const std::string& op_family) const;

  [[nodiscard]] int64_t calls() const noexcept { return m_calls.load(); }  ///< teacher calls made
  [[nodiscard]] const std::string& teacher_model() const noexcept { return m_model; }
  [[nodiscard]] const fs::path& cache_dir() const noexcept { return m_cache.dir(); }

 private:
  ModelClient* m_client;
  std::string m_model;
  int m_attempts;
  TeacherCache m_cache;
  std::atomic<int64_t> m_calls{0};
};

struct NoteCounts {
  int64_t pairs = 0;            ///< pairs the recipe selects (after its balance)
  int64_t no_wrong_kernel = 0;  ///< extraction-error pairs: no wrong kernel to file a note under
  int64_t already_noted = 0;    ///< pairs the store already holds a note of: skipped, nobody asked
  int64_t requested = 0;        ///< pairs asked of the teacher or found in the cache (dry run: to ask)
  int64_t cache_hits = 0;       ///< of those, answered from the cache (dry run: would be)
  int64_t teacher_calls = 0;    ///< calls made by this run
  int64_t written = 0;          ///< notes added to the store
  int64_t rejected = 0;         ///< pairs whose every answer was refused: no note
  [[nodiscard]] ordered_json to_json() const;
};

/// A definition's op_type (the catalog's), which its notes' op family comes from. Throws for a
/// definition it does not know.
using OpTypeOf = std::function<std::string(const std::string& definition)>;

struct PairNotesOptions {
  int concurrency = 4;  ///< requests in flight
  bool dry_run = false;  ///< count only: nobody asked, nothing written (the store may be null)
  std::function<void(const std::string&)> progress;  ///< "notes 3/7"; may be empty
};

/// The notes of `pairs`, in their order. First, before anything is asked or written: the held-out
/// guard (HeldOutViolation for a pair of a held-out definition, whatever handed it over) and every
/// pair's op family (op_type's error for an unknown definition). Then pairs without a wrong kernel
/// and pairs the store already has a note of are skipped, the rest go to the teacher (`concurrency`
/// at a time) and each accepted note is added to the store in the pairs' order, so the note ids do
/// not depend on timing. A teacher call that fails for good propagates after the notes answered
/// before it have been added. The ids added are appended to `added` when given.
NoteCounts add_pair_notes(const std::vector<RepairPair>& pairs, const HeldOutDefinitions& held_out,
                          const OpTypeOf& op_type, NotesStore* store, NoteSynthesizer& synth,
                          const PairNotesOptions& options, std::vector<int64_t>* added = nullptr);

/// The teacher answers' default folder: note_cache/ beside the notes store. Entries are keyed by
/// teacher and prompt, so stores in one folder can share it.
fs::path default_note_cache_dir(const fs::path& notes_path);

struct NotesOptions {
  OpTypeOf op_type;                ///< required
  ModelClient* teacher = nullptr;  ///< nullptr: make_model_client(*recipe.teacher) (not in a dry run)
  fs::path cache_dir;              ///< empty: default_note_cache_dir(notes path)
  bool dry_run = false;            ///< count only: no teacher, no store or cache created
  std::function<void(const std::string&)> progress;
};

struct NotesResult {
  DatasetPlan plan;
  NoteCounts counts;
  std::vector<int64_t> added;  ///< ids of the notes added, in the pairs' order
  std::string notes_path;
  fs::path cache_dir;
  int64_t store_notes = 0;     ///< notes in the store afterwards (every run's)
  [[nodiscard]] ordered_json to_json() const;  ///< selection counts, note counts, paths
};

/// InputError unless the recipe can give notes: kind fixit (notes are about wrong→fixed pairs) and a
/// teacher.
void check_notes_recipe(const DataRecipe& recipe);

/// `ptxbench data notes`: the recipe's pairs (plan_dataset: the same runs, problem set, held-out
/// guard, turns, labels and balance as `data build`), a note for each from the recipe's teacher
/// (`reasoning.attempts` calls per pair at most, `reasoning.concurrency` in flight), added to the
/// notes store at `notes_path` (created, with its folder, when absent).
NotesResult write_notes(const RunStore& runs, const DataRecipe& recipe, const fs::path& notes_path,
                        const NotesOptions& options);

/// The text `data notes` prints: describe_plan's, its teacher line saying what the teacher does
/// here, then the note counts and the paths.
std::string describe_notes(const DataRecipe& recipe, const NotesResult& result, bool dry_run);

}  // namespace ptxbench
