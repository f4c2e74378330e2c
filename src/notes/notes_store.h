// The repair-note store: notes in SQLite (their own file, WAL), searchable through an FTS5 index
// of the wrong kernel's identifiers and the note's text (its instruction part included), retrieved
// by BM25 over the identifiers of a failing kernel within its op family (docs/design.md §9, issue 19
// item 5; the instruction part: issue 36 item 4).
//
// Terms (kernel_terms, text_terms). Both sides of the search, the indexed notes and the query from
// a failing kernel, go through the same extraction, so that FTS5 sees pre-split ASCII tokens:
//   - kernel sources are lexed lightly: comments and character literals are dropped, string
//     literals are kept (inline PTX lives there; escapes such as \n\t become spaces); notes' text
//     fields (the four of NoteText and every field and item of its instruction part) are read as
//     they are;
//   - a name starts with a letter or '_' and goes on with letters, digits and '_'; '%', '$' and all
//     other characters separate names (so "%%cluster_ctarank" gives cluster_ctarank); a run that
//     starts with a digit is a number and is dropped whole ("1.0f", "0x1F");
//   - names joined by '.' or '::' form a chain ("wgmma.mma_async.sync.aligned.m64n256k16.f32",
//     "mbarrier.try_wait.parity.shared::cta.b64", "ptxb::mbarrier_init", "threadIdx.x"); after a
//     joiner a part may start with a digit ("tensor.2d");
//   - each chain yields, lower-cased: every part ("wgmma", "mma_async", "m64n256k16", "f32"); the
//     '_'-separated words of a part that has two or more ("mma", "async"; "mbarrier", "wait",
//     "parity" from mbarrier_wait_parity: a C++ wrapper then meets the PTX it wraps); and the
//     dotted prefixes of 2 to 4 '.'-parts, stopping before the first part joined by '::'
//     ("wgmma.mma_async", "wgmma.mma_async.sync", "wgmma.mma_async.sync.aligned"; "cp.async",
//     "cp.async.bulk", "cp.async.bulk.tensor"), when the chain's first part has 2+ characters.
//     So a PTX instruction is found by its opcode ("mbarrier.try_wait") as well as by its parts;
//   - dropped: tokens of one character, tokens of digits only, and the stop words (C/C++/CUDA
//     syntax keywords and a few English function words, kStopWords in the .cpp).
// The FTS5 table tokenizes with `unicode61 tokenchars '._'`, so each extracted term is exactly one
// FTS5 token (terms hold only [a-z0-9_.]).
//
// Ranking. score = -bm25(repair_notes_fts, kKernelTermsWeight, kNoteTermsWeight), FTS5's Okapi
// BM25 (k1 = 1.2, b = 0.75): for each query term q,
//   idf(q) = ln((N - n(q) + 0.5) / (n(q) + 0.5)), replaced by 1e-6 when <= 0,
//   f(q,D) = Σ over occurrences of q in the note's row of the weight of the column it is in,
//   score  = Σ_q idf(q) · f(q,D)·(k1 + 1) / (f(q,D) + k1·(1 - b + b·|D|/avgdl)),
// where N is the number of notes in the whole store (every family), n(q) the notes containing q,
// |D| the row's token count over both columns (unweighted) and avgdl the mean over all notes.
// IDF and avgdl are thus store-wide; the op-family filter only decides which notes are returned.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "notes/repair_note.h"
#include "common/error.h"
#include "common/sqlite_db.h"

namespace ptxbench {

/// Misuse of the store (a second note for the same pair, sources that do not match the note's
/// hashes) or a file it cannot read.
class NotesStoreError : public Error {
 public:
  explicit NotesStoreError(const std::string& message) : Error("notes store", message) {}
};

/// bm25() column weights: a term of the note's own text (what was wrong, rule, fix, example, and
/// the instruction part's fields) counts twice a term of the wrong kernel's identifiers, which carry
/// much of the whole kernel beside the mistake.
inline constexpr double kKernelTermsWeight = 1.0;
inline constexpr double kNoteTermsWeight = 2.0;
/// At most this many distinct terms of a failing kernel go into a query: the rarest in the store
/// (fewest notes containing them, then alphabetical); terms no note contains are left out first,
/// as they cannot change any score.
inline constexpr int kMaxQueryTerms = 64;

/// The terms of a kernel source (comments dropped, string literals kept), in order, repeats kept.
std::vector<std::string> kernel_terms(std::string_view source);
/// The terms of free text (a note's fields), in order, repeats kept.
std::vector<std::string> text_terms(std::string_view text);
/// `term` as an FTS5 string: in double quotes, inner double quotes doubled. Safe for any text.
std::string fts5_quote(std::string_view term);

struct ScoredNote {
  RepairNote note;
  double score = 0.0;  ///< -bm25(): positive, higher is better
};

/// Thread-safe: one object may be shared by the threads of a process; several objects or
/// processes on one file are serialized by SQLite (WAL, BEGIN IMMEDIATE, busy timeout).
class NotesStore {
 public:
  enum class Open { create, existing };
  /// Opens the store, creating or migrating its schema. NotesStoreError when the file is another
  /// kind of database or was written by a newer ptxbench (PRAGMA user_version above ours).
  explicit NotesStore(const std::string& path, Open mode = Open::create);
  NotesStore(const NotesStore&) = delete;
  NotesStore& operator=(const NotesStore&) = delete;

  /// 1: notes, kernels, FTS5 index. 2: instruction_notes, a note's optional instruction part (a
  /// version-1 file gains the empty table when opened; its notes read as notes without a part).
  static constexpr int kSchemaVersion = 2;
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

  /// Stores the note (its id is ignored; created_at 0 becomes now) with its instruction part when it
  /// has one, indexes the terms of `wrong_kernel_source` and of the note's text, and keeps both
  /// kernels (the fixed one for fastest_fixed_kernel). Returns the new id. InputError when
  /// check_note fails; NotesStoreError when a source's SHA-256 is not the note's or the pair
  /// already has a note.
  int64_t add(const RepairNote& note, const std::string& wrong_kernel_source, const std::string& fixed_kernel_source);

  /// The best `k` notes of `op_family` for a failing kernel, best first (score descending, then id
  /// ascending); of notes with the same text (instruction part included) only the best is kept.
  /// An op_type is taken as its family ("mha_fwd_causal" reads "mha_fwd"). Empty when k == 0, the
  /// kernel has no term any note contains, or nothing matches. InputError when k < 0.
  [[nodiscard]] std::vector<ScoredNote> retrieve(const std::string& failing_kernel_source, const std::string& op_family,
                                                 int k) const;

  /// Of the fixed kernels of these notes, the source with the highest fixed_speedup (lowest note id
  /// on a tie); nullopt when none of them has a speedup. Unknown ids are ignored.
  [[nodiscard]] std::optional<std::string> fastest_fixed_kernel(const std::vector<int64_t>& note_ids) const;
  [[nodiscard]] std::optional<std::string> fastest_fixed_kernel(const std::vector<ScoredNote>& notes) const;

  [[nodiscard]] std::optional<RepairNote> find(int64_t id) const;
  /// The note of this wrong→fixed pair (run, trajectory, wrong turn, fixed turn), if any: lets a
  /// note-writing job skip pairs it has done.
  [[nodiscard]] std::optional<int64_t> find_by_source(const NoteSource& source) const;
  [[nodiscard]] int64_t count() const;
  /// A stored kernel by SHA-256 (wrong and fixed kernels of every note).
  [[nodiscard]] std::optional<std::string> kernel_source(const std::string& sha256) const;

  /// The query terms `retrieve` would use for this kernel, rarest first (for reports and tests).
  [[nodiscard]] std::vector<std::string> query_terms(const std::string& failing_kernel_source) const;

 private:
  [[nodiscard]] std::vector<std::string> query_terms_locked(const std::string& source) const;

  std::string m_path;
  mutable std::mutex m_mutex;
  mutable SqliteDb m_db;
};

}  // namespace ptxbench
