// The instruction part of repair notes (issue 36 item 4): its JSON with and without the part, its
// limits, old notes and old (schema 1) stores read by the new code, the teacher's prompt and the
// reader of answers with and without it, retrieval by an instruction named only in the part, and
// how the feedback shows it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/sha256.h"
#include "common/sqlite_db.h"
#include "notes/notes_feedback.h"
#include "notes/notes_store.h"
#include "notes/repair_note.h"

using namespace ptxbench;

namespace {

struct InstructionNoteStoreTest : ::testing::Test {
  TempDir dir{"instruction_notes_test"};
  std::string path() const { return (dir.path() / "notes.db").string(); }
};

InstructionNote full_part() {
  InstructionNote p;
  p.instruction = "wgmma.mma_async.sp.sync.aligned";
  p.shape_context = "m64nNk32 with bf16 A and B, f32 accumulators";
  p.operand_contract = "the sparsity metadata register and selector follow the B descriptor";
  p.required_sequence = {"wgmma.fence.sync.aligned", "wgmma.mma_async.sp.sync.aligned",
                         "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0"};
  p.diagnostics = "ptxas: Arguments mismatch for instruction 'wgmma'";
  p.do_not_do = {"pass the metadata as a 64-bit register", "omit the selector immediate"};
  return p;
}

NoteText text_with(std::optional<InstructionNote> part, const std::string& what = "Metadata operand missing.") {
  NoteText t{what, "Give the sparse form all its operands.", "Added the metadata operand.",
             "issue_sparse(a, b, meta, 0);"};
  t.instruction_note = std::move(part);
  return t;
}

RepairNote make_note(const std::string& family, int64_t trajectory, const NoteText& text, const std::string& wrong_src,
                     const std::string& fixed_src) {
  RepairNote n;
  n.op_family = family;
  n.definition = family + "_def";
  n.source = {"run-1", trajectory, 1, 2, sha256_hex(wrong_src), sha256_hex(fixed_src)};
  n.wrong_status = "COMPILE_ERROR";
  n.text = text;
  n.teacher_model = "teacher-x";
  n.created_at = 1700000000.0;
  return n;
}

int64_t add(NotesStore& store, int64_t trajectory, const std::string& wrong_src, const NoteText& text,
            const std::string& family = "gemm") {
  std::string fixed = "// fixed " + std::to_string(trajectory);
  return store.add(make_note(family, trajectory, text, wrong_src, fixed), wrong_src, fixed);
}

ordered_json answer_with(const ordered_json& part) {
  ordered_json a = {{"what_was_wrong", "w"}, {"rule", "r"}, {"fix", "f"}, {"example", "e"}};
  a["instruction_note"] = part;
  return a;
}

bool answer_refused(const ordered_json& part) {
  try {
    (void)parse_teacher_answer(answer_with(part).dump());
  } catch (const InputError&) {
    return true;
  }
  return false;
}

// A notes store as schema version 1 wrote it (its tables as that code created them, one note and its
// FTS5 row), for the migration test.
void write_schema_one_store(const std::string& path, const std::string& wrong, const std::string& fixed) {
  SqliteDb db(path);
  db.exec("PRAGMA application_id = " + std::to_string(0x5054424E));
  db.exec("CREATE TABLE kernels (sha256 TEXT PRIMARY KEY, source TEXT NOT NULL)");
  db.exec(R"(CREATE TABLE repair_notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, op_family TEXT NOT NULL, definition TEXT NOT NULL, run_id TEXT NOT NULL,
    trajectory_id INTEGER NOT NULL, wrong_turn INTEGER NOT NULL CHECK (wrong_turn >= 1),
    fixed_turn INTEGER NOT NULL CHECK (fixed_turn > wrong_turn),
    wrong_sha256 TEXT NOT NULL REFERENCES kernels(sha256), fixed_sha256 TEXT NOT NULL REFERENCES kernels(sha256),
    wrong_status TEXT NOT NULL, what_was_wrong TEXT NOT NULL, rule TEXT NOT NULL, fix TEXT NOT NULL,
    example TEXT NOT NULL, fixed_speedup REAL, teacher_model TEXT NOT NULL, created_at REAL NOT NULL,
    UNIQUE (run_id, trajectory_id, wrong_turn, fixed_turn)))");
  db.exec("CREATE INDEX repair_notes_by_family ON repair_notes(op_family, id)");
  db.exec(R"(CREATE VIRTUAL TABLE repair_notes_fts USING fts5(
    kernel_terms, note_terms, tokenize = "unicode61 tokenchars '._'"))");
  db.exec("CREATE VIRTUAL TABLE repair_notes_vocab USING fts5vocab(repair_notes_fts, row)");
  for (const auto* src : {&wrong, &fixed})
    db.prepare("INSERT INTO kernels VALUES (?, ?)").bind(1, sha256_hex(*src)).bind(2, *src).run();
  db.prepare(
        "INSERT INTO repair_notes (op_family, definition, run_id, trajectory_id, wrong_turn, fixed_turn, "
        "wrong_sha256, fixed_sha256, wrong_status, what_was_wrong, rule, fix, example, fixed_speedup, "
        "teacher_model, created_at) "
        "VALUES ('mha_fwd', 'mha_d128', 'old-run', 1, 1, 2, ?, ?, 'TIMEOUT', 'Waited on the wrong phase.', "
        "'Flip the phase per pass.', 'Tracked the phase.', 'phase ^= 1;', 1.4, 'old-teacher', 1.0)")
      .bind(1, sha256_hex(wrong))
      .bind(2, sha256_hex(fixed))
      .run();
  std::string kernel_text, note_text;
  for (const auto& t : kernel_terms(wrong)) kernel_text += t + " ";
  for (const auto& t :
       text_terms("Waited on the wrong phase.\nFlip the phase per pass.\nTracked the phase.\nphase ^= 1;"))
    note_text += t + " ";
  db.prepare("INSERT INTO repair_notes_fts (rowid, kernel_terms, note_terms) VALUES (1, ?, ?)")
      .bind(1, kernel_text)
      .bind(2, note_text)
      .run();
  db.exec("PRAGMA user_version = 1");
}

}  // namespace

// ------------------------------------------------------------------------------------ JSON

TEST(InstructionNoteJson, RoundTripsWithAndWithoutThePart) {
  RepairNote plain = make_note("gemm", 1, text_with(std::nullopt), "a", "b");
  ordered_json pj = plain.to_json();
  EXPECT_FALSE(pj.contains("instruction_note")) << "a note without the part writes what it wrote before";
  EXPECT_EQ(RepairNote::from_json(pj).to_json(), pj);
  EXPECT_FALSE(RepairNote::from_json(pj).text.instruction_note);

  RepairNote full = make_note("gemm", 1, text_with(full_part()), "a", "b");
  ordered_json fj = full.to_json();
  ASSERT_TRUE(fj.contains("instruction_note"));
  EXPECT_EQ(fj["instruction_note"]["required_sequence"].size(), 4u);
  RepairNote back = RepairNote::from_json(fj);
  ASSERT_TRUE(back.text.instruction_note);
  EXPECT_EQ(back.text.instruction_note->do_not_do, full_part().do_not_do);
  EXPECT_EQ(back.to_json(), fj);

  // Any subset of the part's fields; the rest read as empty; null is no part.
  ordered_json partial = pj;
  partial["instruction_note"] = {{"instruction", "cp.async.bulk.tensor.2d"}};
  RepairNote p = RepairNote::from_json(partial);
  ASSERT_TRUE(p.text.instruction_note);
  EXPECT_EQ(p.text.instruction_note->instruction, "cp.async.bulk.tensor.2d");
  EXPECT_TRUE(p.text.instruction_note->required_sequence.empty());
  EXPECT_EQ(RepairNote::from_json(p.to_json()).to_json(), p.to_json());
  ordered_json null_part = pj;
  null_part["instruction_note"] = nullptr;
  EXPECT_FALSE(RepairNote::from_json(null_part).text.instruction_note);
}

// A note as the code before issue 36 wrote it, verbatim.
TEST(InstructionNoteJson, AnOldNoteDocumentStillReads) {
  const std::string old = R"({"schema": "ptxbench.repair_note", "id": 4, "op_family": "mha_fwd",
    "definition": "mha_d128", "source": {"run_id": "r", "trajectory_id": 2, "wrong_turn": 1, "fixed_turn": 3,
    "wrong_sha256": ")" + sha256_hex("w") + R"(", "fixed_sha256": ")" + sha256_hex("f") + R"("},
    "wrong_status": "TIMEOUT", "what_was_wrong": "Spun forever.", "rule": "Bound waits.", "fix": "Fixed phase.",
    "example": "ok();", "fixed_speedup": null, "teacher_model": "t", "created_at": 1.5})";
  ordered_json j = ordered_json::parse(old);
  RepairNote n = RepairNote::from_json(j, "old.json");
  EXPECT_EQ(n.text.rule, "Bound waits.");
  EXPECT_FALSE(n.text.instruction_note);
  EXPECT_EQ(n.to_json(), j);
}

TEST(InstructionNoteJson, RefusesMalformedParts) {
  ordered_json base = make_note("gemm", 1, text_with(full_part()), "a", "b").to_json();
  auto refused = [&](auto edit, const std::string& names) {
    ordered_json bad = base;
    edit(bad["instruction_note"]);
    try {
      (void)RepairNote::from_json(bad, "n.json");
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  };
  refused([](ordered_json& p) { p["extra"] = "x"; }, "extra");
  refused([](ordered_json& p) { p["required_sequence"] = "one step"; }, "instruction_note.required_sequence");
  refused([](ordered_json& p) { p["do_not_do"] = {"a", 5}; }, "instruction_note.do_not_do[1]");
  refused([](ordered_json& p) { p["do_not_do"] = {"a", "  "}; }, "instruction_note.do_not_do[1]: empty");
  refused([](ordered_json& p) { p["diagnostics"] = 3; }, "instruction_note.diagnostics");
  refused([](ordered_json& p) { p["shape_context"] = " \n"; }, "instruction_note.shape_context: only white space");
  refused([](ordered_json& p) { p = ordered_json::object(); }, "instruction_note: holds nothing");
  refused([](ordered_json& p) { p = "wgmma"; }, "instruction_note");
}

TEST(InstructionNoteLimits, EachFieldAndListHasItsLimit) {
  struct Text {
    std::string InstructionNote::*member;
    std::size_t limit;
    const char* name;
  };
  for (const Text& f : {Text{&InstructionNote::instruction, kInstructionMaxChars, "instruction"},
                        Text{&InstructionNote::shape_context, kShapeContextMaxChars, "shape_context"},
                        Text{&InstructionNote::operand_contract, kOperandContractMaxChars, "operand_contract"},
                        Text{&InstructionNote::diagnostics, kDiagnosticsMaxChars, "diagnostics"}}) {
    InstructionNote p;
    p.*(f.member) = std::string(f.limit, 'x');
    EXPECT_NO_THROW(check_instruction_note(p)) << f.name;
    p.*(f.member) += "x";
    EXPECT_THROW(check_instruction_note(p), InputError) << f.name;
    // Code points, not bytes: the limit in two-byte characters fits.
    std::string wide;
    for (std::size_t i = 0; i < f.limit; ++i) wide += "\xC3\xA9";
    p.*(f.member) = wide;
    EXPECT_NO_THROW(check_instruction_note(p)) << f.name;
  }
  InstructionNote lists;
  lists.required_sequence.assign(kRequiredSequenceMaxSteps, std::string(kNoteItemMaxChars, 's'));
  lists.do_not_do.assign(kDoNotDoMaxItems, std::string(kNoteItemMaxChars, 'd'));
  EXPECT_NO_THROW(check_instruction_note(lists));
  InstructionNote steps = lists;
  steps.required_sequence.push_back("one more");
  EXPECT_THROW(check_instruction_note(steps), InputError);
  InstructionNote items = lists;
  items.do_not_do.push_back("one more");
  EXPECT_THROW(check_instruction_note(items), InputError);
  InstructionNote long_item = lists;
  long_item.do_not_do[0] += "d";
  EXPECT_THROW(check_instruction_note(long_item), InputError);
  // The part is checked with the note.
  NoteText t = text_with(steps);
  EXPECT_THROW(check_note_text(t), InputError);
  t.instruction_note = InstructionNote{};
  EXPECT_THROW(check_note_text(t), InputError) << "an empty part is refused, not stored";
  t.instruction_note.reset();
  EXPECT_NO_THROW(check_note_text(t));
}

// ------------------------------------------------------------------------------------ teacher

TEST(InstructionNoteAnswer, ReadsAnswersWithAndWithoutThePart) {
  NoteText old = parse_teacher_answer(R"({"what_was_wrong": "w", "rule": "r", "fix": "f", "example": "e"})");
  EXPECT_EQ(old.rule, "r");
  EXPECT_FALSE(old.instruction_note) << "an answer of the old form is a valid note";

  ordered_json part = full_part().to_json();
  part["instruction"] = "  wgmma.mma_async.sp.sync.aligned \n";
  part["do_not_do"] = ordered_json::array({" omit the selector immediate "});
  part.erase("shape_context");
  NoteText t = parse_teacher_answer("Note:\n```json\n" + answer_with(part).dump(2) + "\n```\n");
  ASSERT_TRUE(t.instruction_note);
  EXPECT_EQ(t.instruction_note->instruction, "wgmma.mma_async.sp.sync.aligned") << "trimmed";
  EXPECT_EQ(t.instruction_note->do_not_do, std::vector<std::string>{"omit the selector immediate"});
  EXPECT_EQ(t.instruction_note->shape_context, "");
  EXPECT_EQ(t.instruction_note->required_sequence, full_part().required_sequence);

  // null, {} and a part of blanks say nothing: no part.
  EXPECT_FALSE(parse_teacher_answer(answer_with(nullptr).dump()).instruction_note);
  EXPECT_FALSE(parse_teacher_answer(answer_with(ordered_json::object()).dump()).instruction_note);
  EXPECT_FALSE(parse_teacher_answer(answer_with({{"instruction", " "}, {"do_not_do", ordered_json::array()}}).dump())
                   .instruction_note);
}

TEST(InstructionNoteAnswer, RefusesMalformedOrOverLongParts) {
  EXPECT_TRUE(answer_refused({{"instruction", "x"}, {"why", "y"}}));
  EXPECT_TRUE(answer_refused({{"required_sequence", "a then b"}}));
  EXPECT_TRUE(answer_refused({{"do_not_do", {"a", " "}}}));
  EXPECT_TRUE(answer_refused({{"instruction", std::string(kInstructionMaxChars + 1, 'i')}}));
  EXPECT_TRUE(answer_refused({{"operand_contract", std::string(kOperandContractMaxChars + 1, 'o')}}));
  EXPECT_TRUE(answer_refused({{"required_sequence", std::vector<std::string>(kRequiredSequenceMaxSteps + 1, "s")}}));
  EXPECT_TRUE(answer_refused({{"do_not_do", ordered_json::array({std::string(kNoteItemMaxChars + 1, 'd')})}}));
  EXPECT_TRUE(answer_refused("wgmma"));
  EXPECT_FALSE(answer_refused({{"instruction", std::string(kInstructionMaxChars, 'i')}}));
  // The required fields are still required when the part is there.
  ordered_json no_rule = answer_with({{"instruction", "x"}});
  no_rule.erase("rule");
  EXPECT_THROW(parse_teacher_answer(no_rule.dump()), InputError);
}

TEST(InstructionNotePrompt, AsksForThePartWithItsLimits) {
  TeacherPrompt p = teacher_prompt("wrong();", "Compile: error.", "fixed();");
  EXPECT_NE(p.system.find("\"instruction_note\" (optional)"), std::string::npos);
  EXPECT_NE(p.system.find("\"instruction\" (string, at most 120 characters)"), std::string::npos);
  EXPECT_NE(p.system.find("\"required_sequence\" (list of at most 8 strings)"), std::string::npos);
  EXPECT_NE(p.system.find("\"do_not_do\" (list of at most 6 strings)"), std::string::npos);
  EXPECT_NE(p.system.find("Each list item is at most 200 characters."), std::string::npos);
  EXPECT_NE(p.system.find("\"rule\" (at most 400 characters)"), std::string::npos) << "the four fields stay";
  EXPECT_NE(p.user.find("and instruction_note when the mistake is about how one instruction is used"),
            std::string::npos);
}

// ------------------------------------------------------------------------------------ store

TEST_F(InstructionNoteStoreTest, StoresAndReadsThePart) {
  NotesStore store(path());
  int64_t with = add(store, 1, "kernel_one();", text_with(full_part()));
  int64_t without = add(store, 2, "kernel_two();", text_with(std::nullopt));
  auto a = store.find(with);
  ASSERT_TRUE(a);
  RepairNote want = make_note("gemm", 1, text_with(full_part()), "kernel_one();", "// fixed 1");
  want.id = with;
  EXPECT_EQ(a->to_json(), want.to_json());
  auto b = store.find(without);
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->text.instruction_note);
  SqliteDb db(path());
  EXPECT_EQ(db.pragma_int("user_version"), NotesStore::kSchemaVersion);
  EXPECT_EQ(NotesStore::kSchemaVersion, 2);
}

// The failing kernel's instruction is named only in the part of one note: retrieval finds that note
// by it (the opcode prefix the term extraction makes of the kernel's full instruction).
TEST_F(InstructionNoteStoreTest, RetrievalMatchesAnInstructionNamedInThePart) {
  NotesStore store(path());
  int64_t named = add(store, 1, "tile_loop(acc);", text_with(full_part(), "Missing operand."));
  add(store, 2, "tile_loop(acc);", text_with(std::nullopt, "Missing operand."));
  add(store, 3, "softmax_rows(x);", text_with(std::nullopt, "Rows unscaled."));
  const std::string failing =
      R"(asm volatile("wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.bf16.bf16 {%0}, %1, %2, %3, 0;");)";
  std::vector<std::string> terms = store.query_terms(failing);
  EXPECT_NE(std::find(terms.begin(), terms.end(), "wgmma.mma_async.sp"), terms.end());
  auto found = store.retrieve(failing, "gemm", 3);
  ASSERT_EQ(found.size(), 1u) << "only the note with the part names wgmma";
  EXPECT_EQ(found[0].note.id, named);
  ASSERT_TRUE(found[0].note.text.instruction_note);
  EXPECT_EQ(found[0].note.text.instruction_note->instruction, "wgmma.mma_async.sp.sync.aligned");
  // Two notes whose four fields agree but whose parts differ are both shown.
  auto both = store.retrieve("tile_loop(acc);", "gemm", 3);
  EXPECT_EQ(both.size(), 2u);
}

// A store written by schema version 1 (before the instruction part): opened by the new code, it
// gains the part's table and keeps its notes and its index.
TEST_F(InstructionNoteStoreTest, MigratesSchemaOneInPlace) {
  const std::string wrong = "mbarrier_wait(full, phase);", fixed = "mbarrier_wait(full, phase ^ 1);";
  write_schema_one_store(path(), wrong, fixed);
  NotesStore store(path(), NotesStore::Open::existing);
  EXPECT_EQ(SqliteDb(path()).pragma_int("user_version"), 2);
  auto old = store.find(1);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->text.rule, "Flip the phase per pass.");
  EXPECT_FALSE(old->text.instruction_note);
  EXPECT_EQ(old->fixed_speedup, 1.4);
  auto found = store.retrieve("mbarrier_wait(empty, phase);", "mha_fwd", 2);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].note.id, 1);
  EXPECT_EQ(store.fastest_fixed_kernel(found), fixed);
  // New notes, with the part, go into the migrated file beside the old one.
  int64_t added = add(store, 5, "mbarrier_wait(full, 0);", text_with(full_part()), "mha_fwd");
  EXPECT_EQ(added, 2);
  ASSERT_TRUE(store.find(added)->text.instruction_note);
  NotesStore reopened(path(), NotesStore::Open::existing);
  EXPECT_EQ(reopened.count(), 2);
}

// ------------------------------------------------------------------------------------ feedback

TEST(InstructionNoteFeedback, ShowsThePartCompactlyAndOldNotesAsBefore) {
  RepairNote full = make_note("gemm", 1, text_with(full_part()), "a", "b");
  InstructionNote only_name{"cp.async.bulk.tensor.2d", "", "", {}, "", {}};
  RepairNote partial = make_note("gemm", 2, text_with(only_name), "a", "b");
  RepairNote plain = make_note("gemm", 3, text_with(std::nullopt), "a", "b");
  std::string out = append_notes("", {{full, 3.0}, {partial, 2.0}, {plain, 1.0}}, NotesMode::notes, std::nullopt);
  const std::string head =
      "What was wrong: Metadata operand missing.\n"
      "Rule: Give the sparse form all its operands.\n"
      "Fix: Added the metadata operand.\n";
  const std::string example = "Example:\n```\nissue_sparse(a, b, meta, 0);\n```\n";
  std::string want_full = "### Note 1 (from a kernel that got COMPILE_ERROR)\n" + head +
                          "Instruction: wgmma.mma_async.sp.sync.aligned\n"
                          "Shape context: m64nNk32 with bf16 A and B, f32 accumulators\n"
                          "Operand contract: the sparsity metadata register and selector follow the B descriptor\n"
                          "Required sequence: wgmma.fence.sync.aligned → wgmma.mma_async.sp.sync.aligned → "
                          "wgmma.commit_group.sync.aligned → wgmma.wait_group.sync.aligned 0\n"
                          "Diagnostics: ptxas: Arguments mismatch for instruction 'wgmma'\n"
                          "Do not: pass the metadata as a 64-bit register\n"
                          "Do not: omit the selector immediate\n" +
                          example;
  std::string want_partial = "### Note 2 (from a kernel that got COMPILE_ERROR)\n" + head +
                             "Instruction: cp.async.bulk.tensor.2d\n" + example;
  std::string want_plain = "### Note 3 (from a kernel that got COMPILE_ERROR)\n" + head + example;
  EXPECT_NE(out.find("\n" + want_full + "\n" + want_partial + "\n" + want_plain), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - want_plain.size()), want_plain);
}
