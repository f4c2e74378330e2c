#include "notes/notes_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_set>

#include "common/clock.h"
#include "common/json_check.h"
#include "common/sha256.h"

namespace ptxbench {
namespace {

// "PTBN" in the SQLite header: a notes store, not a run store or another program's file.
// migrations[v] takes a store from version v to v + 1. Append, never edit. A change of the term
// extraction is a migration too: it rebuilds repair_notes_fts from the stored kernels and note fields.
const StoreSchema kSchema = {0x5054424E, "notes store", {
    {
        // Content-addressed kernel sources: the wrong ones (to re-index) and the fixed ones.
        R"(CREATE TABLE kernels (
          sha256 TEXT PRIMARY KEY,
          source TEXT NOT NULL))",
        R"(CREATE TABLE repair_notes (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          op_family TEXT NOT NULL,
          definition TEXT NOT NULL,
          run_id TEXT NOT NULL,
          trajectory_id INTEGER NOT NULL,
          wrong_turn INTEGER NOT NULL CHECK (wrong_turn >= 1),
          fixed_turn INTEGER NOT NULL CHECK (fixed_turn > wrong_turn),
          wrong_sha256 TEXT NOT NULL REFERENCES kernels(sha256),
          fixed_sha256 TEXT NOT NULL REFERENCES kernels(sha256),
          wrong_status TEXT NOT NULL,
          what_was_wrong TEXT NOT NULL,
          rule TEXT NOT NULL,
          fix TEXT NOT NULL,
          example TEXT NOT NULL,
          fixed_speedup REAL,
          teacher_model TEXT NOT NULL,
          created_at REAL NOT NULL,
          UNIQUE (run_id, trajectory_id, wrong_turn, fixed_turn)))",
        "CREATE INDEX repair_notes_by_family ON repair_notes(op_family, id)",
        // rowid = repair_notes.id. Columns hold space-separated terms (kernel_terms, text_terms);
        // tokenchars keeps '.' and '_' inside a token, so each term is one FTS5 token.
        R"(CREATE VIRTUAL TABLE repair_notes_fts USING fts5(
          kernel_terms, note_terms, tokenize = "unicode61 tokenchars '._'"))",
        // Per term: how many notes contain it (doc), to pick a query's rarest terms.
        "CREATE VIRTUAL TABLE repair_notes_vocab USING fts5vocab(repair_notes_fts, row)",
    },
    {
        // Version 2 (issue 36 item 4): a note's optional instruction part, one row per note that has
        // one (no row: no part, as every note of version 1). The lists are JSON arrays of strings.
        // Nothing is re-indexed: a version-1 note has no part, so its FTS5 row is already complete;
        // notes added since index the part's text in note_terms.
        R"(CREATE TABLE instruction_notes (
          note_id INTEGER PRIMARY KEY REFERENCES repair_notes(id),
          instruction TEXT NOT NULL,
          shape_context TEXT NOT NULL,
          operand_contract TEXT NOT NULL,
          required_sequence TEXT NOT NULL
            CHECK (json_valid(required_sequence) AND json_type(required_sequence) = 'array'),
          diagnostics TEXT NOT NULL,
          do_not_do TEXT NOT NULL CHECK (json_valid(do_not_do) AND json_type(do_not_do) = 'array')))",
    },
}};
static_assert(NotesStore::kSchemaVersion == 2, "add a migration to kSchema with the new version");

// Syntax words of C/C++/CUDA and English function words: in nearly every kernel or note, they
// would only dilute the index and take query slots.
const std::unordered_set<std::string_view> kStopWords = {
    // C/C++ keywords and preprocessor words
    "alignas", "alignof", "asm", "auto", "bool", "break", "case", "char", "class", "const", "constexpr", "continue",
    "default", "define", "defined", "do", "double", "else", "endif", "enum", "extern", "false", "float", "for", "if",
    "ifdef", "ifndef", "include", "inline", "int", "long", "namespace", "nullptr", "pragma", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "reinterpret_cast", "struct", "switch", "template",
    "true", "typedef", "typename", "union", "unsigned", "using", "void", "volatile", "while",
    // CUDA function qualifiers
    "__global__", "__device__", "__host__", "__forceinline__", "__inline__", "__noinline__", "__restrict__",
    // English function words
    "an", "and", "are", "as", "at", "be", "by", "can", "from", "has", "have", "in", "into", "is", "it", "its", "not",
    "of", "on", "or", "so", "than", "that", "the", "their", "then", "there", "these", "this", "to", "was", "were",
    "when", "which", "will", "with", "without",
};

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }

char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

void emit(std::vector<std::string>& out, const std::string& token) {
  if (token.size() < 2) return;
  if (std::none_of(token.begin(), token.end(), is_alpha)) return;
  if (kStopWords.count(token)) return;
  out.push_back(token);
}

struct Part {
  std::string text;  // lower case
  char joiner = 0;   // 0 (first part), '.' or ':' ("::")
};

void emit_chain(std::vector<std::string>& out, const std::vector<Part>& parts) {
  for (const Part& p : parts) {
    emit(out, p.text);
    std::vector<std::string> words;
    std::size_t start = 0;
    while (start <= p.text.size()) {
      std::size_t end = p.text.find('_', start);
      if (end == std::string::npos) end = p.text.size();
      if (end > start) words.push_back(p.text.substr(start, end - start));
      start = end + 1;
    }
    if (words.size() >= 2)
      for (const auto& w : words) emit(out, w);
  }
  // Leading '.'-joined parts, none of them the left side of a '::'.
  std::size_t lead = 1;
  while (lead < parts.size() && parts[lead].joiner == '.' && !(lead + 1 < parts.size() && parts[lead + 1].joiner == ':'))
    ++lead;
  if (parts[0].text.size() < 2) return;
  std::string prefix = parts[0].text;
  for (std::size_t n = 2; n <= std::min<std::size_t>(4, lead); ++n) {
    prefix += "." + parts[n - 1].text;
    out.push_back(prefix);
  }
}

// Names and chains of plain text (no comments or literals to skip).
void scan_names(std::string_view s, std::vector<std::string>& out) {
  std::size_t i = 0, n = s.size();
  auto read_part = [&](std::size_t& at) {
    std::string t;
    while (at < n && is_word(s[at])) t += to_lower(s[at++]);
    return t;
  };
  while (i < n) {
    char c = s[i];
    if (is_alpha(c) || c == '_') {
      std::vector<Part> parts;
      parts.push_back({read_part(i), 0});
      while (i < n) {
        if (s[i] == '.' && i + 1 < n && is_word(s[i + 1])) {
          ++i;
          parts.push_back({read_part(i), '.'});
        } else if (s[i] == ':' && i + 2 < n && s[i + 1] == ':' && is_word(s[i + 2])) {
          i += 2;
          parts.push_back({read_part(i), ':'});
        } else {
          break;
        }
      }
      emit_chain(out, parts);
    } else if (is_digit(c)) {
      while (i < n && (is_word(s[i]) || s[i] == '.')) ++i;  // a number: 1.0f, 0x1F, 128
    } else {
      ++i;
    }
  }
}

// The source with comments and character literals blanked and string literals' quotes and escapes
// blanked (their text kept: inline PTX).
std::string code_text(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  std::size_t i = 0, n = src.size();
  while (i < n) {
    char c = src[i];
    if (c == '/' && i + 1 < n && src[i + 1] == '/') {
      while (i < n && src[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && src[i + 1] == '*') {
      std::size_t end = src.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
      out += ' ';
    } else if (c == '\'') {
      ++i;
      while (i < n && src[i] != '\'' && src[i] != '\n') i += src[i] == '\\' ? 2 : 1;
      ++i;
      out += ' ';
    } else if (c == '"') {
      out += ' ';
      ++i;
      while (i < n && src[i] != '"' && src[i] != '\n') {
        if (src[i] == '\\') {
          out += ' ';
          i += 2;
        } else {
          out += src[i++];
        }
      }
      ++i;
      out += ' ';
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

std::string join_terms(const std::vector<std::string>& terms) {
  std::string s;
  for (const auto& t : terms) s += (s.empty() ? "" : " ") + t;
  return s;
}

// Every text field of a note, instruction part included: what note_terms indexes, so that a
// failing kernel's instruction finds the notes naming it.
std::string searchable_text(const NoteText& t) {
  std::string s = t.what_was_wrong + "\n" + t.rule + "\n" + t.fix + "\n" + t.example;
  if (const auto& part = t.instruction_note) {
    for (const std::string* field :
         {&part->instruction, &part->shape_context, &part->operand_contract, &part->diagnostics})
      s += "\n" + *field;
    for (const auto* list : {&part->required_sequence, &part->do_not_do})
      for (const auto& item : *list) s += "\n" + item;
  }
  return s;
}

// What makes two notes say the same thing (retrieve shows one of them).
std::string text_key(const NoteText& t) {
  std::string key = t.what_was_wrong + '\0' + t.rule + '\0' + t.fix + '\0' + t.example;
  if (t.instruction_note) key += '\0' + t.instruction_note->to_json().dump();
  return key;
}

// The columns of a note (n) and of its instruction part (i, joined by kPartJoin; NULL when none).
const char* kNoteColumns =
    "n.id, n.op_family, n.definition, n.run_id, n.trajectory_id, n.wrong_turn, n.fixed_turn, n.wrong_sha256, "
    "n.fixed_sha256, n.wrong_status, n.what_was_wrong, n.rule, n.fix, n.example, n.fixed_speedup, n.teacher_model, "
    "n.created_at, i.note_id, i.instruction, i.shape_context, i.operand_contract, i.required_sequence, "
    "i.diagnostics, i.do_not_do";
constexpr int kNoteColumnCount = 24;
constexpr std::string_view kPartJoin = "LEFT JOIN instruction_notes i ON i.note_id = n.id";

std::vector<std::string> string_array(const std::string& json) {
  return ordered_json::parse(json).get<std::vector<std::string>>();
}

RepairNote read_note(const SqliteStatement& st) {
  RepairNote n;
  n.id = st.integer(0);
  n.op_family = st.text(1);
  n.definition = st.text(2);
  n.source = {st.text(3), st.integer(4), st.integer(5), st.integer(6), st.text(7), st.text(8)};
  n.wrong_status = st.text(9);
  n.text = {st.text(10), st.text(11), st.text(12), st.text(13)};
  if (!st.is_null(14)) n.fixed_speedup = st.real(14);
  n.teacher_model = st.text(15);
  n.created_at = st.real(16);
  if (!st.is_null(17))
    n.text.instruction_note = InstructionNote{st.text(18), st.text(19), st.text(20), string_array(st.text(21)),
                                              st.text(22), string_array(st.text(23))};
  return n;
}

std::string json_array(const std::vector<std::string>& items) { return ordered_json(items).dump(); }

std::string checked_path(const std::string& path, NotesStore::Open mode) {
  if (mode == NotesStore::Open::existing && !std::filesystem::exists(path))
    throw NotesStoreError("no notes store at " + path);
  return path;
}

}  // namespace

std::vector<std::string> kernel_terms(std::string_view source) {
  std::vector<std::string> out;
  scan_names(code_text(source), out);
  return out;
}

std::vector<std::string> text_terms(std::string_view text) {
  std::vector<std::string> out;
  scan_names(text, out);
  return out;
}

std::string fts5_quote(std::string_view term) {
  std::string q = "\"";
  for (char c : term) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

NotesStore::NotesStore(const std::string& path, Open mode) : m_path(path), m_db(checked_path(path, mode)) {
  m_db.open_store<NotesStoreError>(kSchema);
}

int64_t NotesStore::add(const RepairNote& note, const std::string& wrong_kernel_source,
                        const std::string& fixed_kernel_source) {
  check_note(note);
  const NoteSource& s = note.source;
  if (sha256_hex(wrong_kernel_source) != s.wrong_sha256)
    throw NotesStoreError("the wrong kernel's source does not hash to the note's wrong_sha256 " + s.wrong_sha256);
  if (sha256_hex(fixed_kernel_source) != s.fixed_sha256)
    throw NotesStoreError("the fixed kernel's source does not hash to the note's fixed_sha256 " + s.fixed_sha256);
  std::string kernel_text = join_terms(kernel_terms(wrong_kernel_source));
  std::string note_text = join_terms(text_terms(searchable_text(note.text)));

  std::lock_guard lock(m_mutex);
  SqliteTransaction tx(m_db);
  auto existing = m_db.prepare(
      "SELECT id FROM repair_notes WHERE run_id = ? AND trajectory_id = ? AND wrong_turn = ? AND fixed_turn = ?");
  existing.bind(1, s.run_id).bind(2, s.trajectory_id).bind(3, s.wrong_turn).bind(4, s.fixed_turn);
  if (existing.step())
    throw NotesStoreError(fmt::format("turns {} → {} of trajectory {} of run {} already have note {}", s.wrong_turn,
                                      s.fixed_turn, s.trajectory_id, s.run_id, existing.integer(0)));
  for (const auto* src : {&wrong_kernel_source, &fixed_kernel_source})
    m_db.prepare("INSERT OR IGNORE INTO kernels (sha256, source) VALUES (?, ?)").bind(1, sha256_hex(*src)).bind(2, *src).run();
  auto insert = m_db.prepare(
      "INSERT INTO repair_notes (op_family, definition, run_id, trajectory_id, wrong_turn, fixed_turn, wrong_sha256, "
      "fixed_sha256, wrong_status, what_was_wrong, rule, fix, example, fixed_speedup, teacher_model, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind_all(note.op_family, note.definition, s.run_id, s.trajectory_id, s.wrong_turn, s.fixed_turn,
      s.wrong_sha256, s.fixed_sha256, note.wrong_status, note.text.what_was_wrong, note.text.rule, note.text.fix,
      note.text.example);
  if (note.fixed_speedup)
    insert.bind(14, *note.fixed_speedup);
  else
    insert.bind_null(14);
  insert.bind(15, note.teacher_model).bind(16, note.created_at > 0 ? note.created_at : epoch_seconds());
  insert.run();
  int64_t id = sqlite3_last_insert_rowid(m_db.handle());
  if (const auto& part = note.text.instruction_note)
    m_db.prepare(
            "INSERT INTO instruction_notes (note_id, instruction, shape_context, operand_contract, required_sequence, "
            "diagnostics, do_not_do) VALUES (?, ?, ?, ?, ?, ?, ?)")
        .bind_all(id, part->instruction, part->shape_context, part->operand_contract,
            json_array(part->required_sequence), part->diagnostics, json_array(part->do_not_do))
        .run();
  m_db.prepare("INSERT INTO repair_notes_fts (rowid, kernel_terms, note_terms) VALUES (?, ?, ?)")
      .bind(1, id)
      .bind(2, kernel_text)
      .bind(3, note_text)
      .run();
  tx.commit();
  return id;
}

std::vector<std::string> NotesStore::query_terms_locked(const std::string& source) const {
  std::vector<std::string> terms = kernel_terms(source);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  if (terms.empty()) return {};
  auto st = m_db.prepare(
      "SELECT term FROM repair_notes_vocab WHERE term IN (SELECT value FROM json_each(?)) "
      "ORDER BY doc ASC, term ASC LIMIT ?");
  st.bind(1, json_array(terms)).bind(2, static_cast<int64_t>(kMaxQueryTerms));
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::vector<std::string> NotesStore::query_terms(const std::string& failing_kernel_source) const {
  std::lock_guard lock(m_mutex);
  SqliteReadSnapshot snap(m_db);
  return query_terms_locked(failing_kernel_source);
}

std::vector<ScoredNote> NotesStore::retrieve(const std::string& failing_kernel_source, const std::string& family,
                                             int k) const {
  if (k < 0) throw InputError("notes store", "retrieve: k must be >= 0, got " + std::to_string(k));
  if (k == 0) return {};
  std::lock_guard lock(m_mutex);
  SqliteReadSnapshot snap(m_db);
  std::vector<std::string> terms = query_terms_locked(failing_kernel_source);
  if (terms.empty()) return {};
  std::string match;
  for (const auto& t : terms) match += (match.empty() ? "" : " OR ") + fts5_quote(t);
  // CROSS JOIN keeps the FTS5 table the outer loop, the one running the full-text query.
  auto st = m_db.prepare(fmt::format(
      "SELECT {}, -bm25(repair_notes_fts, {}, {}) AS score FROM repair_notes_fts "
      "CROSS JOIN repair_notes n ON n.id = repair_notes_fts.rowid {} "
      "WHERE repair_notes_fts MATCH ? AND n.op_family = ? ORDER BY score DESC, n.id ASC",
      kNoteColumns, kKernelTermsWeight, kNoteTermsWeight, kPartJoin));
  st.bind(1, match).bind(2, op_family(family));
  // A note whose text equals a better one's says nothing new (pairs of the same wrong kernel get the
  // same note from a teacher): it is skipped, so the k slots hold k different notes.
  std::vector<ScoredNote> out;
  std::set<std::string> seen;
  while (static_cast<int>(out.size()) < k && st.step()) {
    ScoredNote n{read_note(st), st.real(kNoteColumnCount)};
    if (seen.insert(text_key(n.note.text)).second) out.push_back(std::move(n));
  }
  return out;
}

std::optional<std::string> NotesStore::fastest_fixed_kernel(const std::vector<int64_t>& note_ids) const {
  if (note_ids.empty()) return std::nullopt;
  std::lock_guard lock(m_mutex);
  auto st = m_db.prepare(
      "SELECT k.source FROM repair_notes n JOIN kernels k ON k.sha256 = n.fixed_sha256 "
      "WHERE n.id IN (SELECT value FROM json_each(?)) AND n.fixed_speedup IS NOT NULL "
      "ORDER BY n.fixed_speedup DESC, n.id ASC LIMIT 1");
  st.bind(1, ordered_json(note_ids).dump());
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

std::optional<std::string> NotesStore::fastest_fixed_kernel(const std::vector<ScoredNote>& notes) const {
  std::vector<int64_t> ids;
  for (const auto& n : notes) ids.push_back(n.note.id);
  return fastest_fixed_kernel(ids);
}

std::optional<RepairNote> NotesStore::find(int64_t id) const {
  std::lock_guard lock(m_mutex);
  auto st = m_db.prepare(fmt::format("SELECT {} FROM repair_notes n {} WHERE n.id = ?", kNoteColumns, kPartJoin));
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_note(st);
}

std::optional<int64_t> NotesStore::find_by_source(const NoteSource& s) const {
  std::lock_guard lock(m_mutex);
  auto st = m_db.prepare(
      "SELECT id FROM repair_notes WHERE run_id = ? AND trajectory_id = ? AND wrong_turn = ? AND fixed_turn = ?");
  st.bind(1, s.run_id).bind(2, s.trajectory_id).bind(3, s.wrong_turn).bind(4, s.fixed_turn);
  if (!st.step()) return std::nullopt;
  return st.integer(0);
}

int64_t NotesStore::count() const {
  std::lock_guard lock(m_mutex);
  auto st = m_db.prepare("SELECT COUNT(*) FROM repair_notes");
  st.step();
  return st.integer(0);
}

std::optional<std::string> NotesStore::kernel_source(const std::string& sha256) const {
  std::lock_guard lock(m_mutex);
  auto st = m_db.prepare("SELECT source FROM kernels WHERE sha256 = ?");
  st.bind(1, sha256);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

}  // namespace ptxbench
