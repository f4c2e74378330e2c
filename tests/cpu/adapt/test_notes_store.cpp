// Repair notes: the note type and its JSON, the teacher's prompt and the reader of its answer, the
// term extraction, the store (BM25 scores against a hand computation of FTS5's formula, ranking,
// op-family filter, query-syntax safety, the query-term cap) and the feedback text in both modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "notes/notes_feedback.h"
#include "notes/notes_store.h"
#include "notes/repair_note.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/sqlite_db.h"

using namespace ptxbench;

namespace {

struct NotesStoreTest : ::testing::Test {
  TempDir dir{"notes_store_test"};
  std::string path() const { return (dir.path() / "notes.db").string(); }
};

NoteText text_of(const std::string& what, const std::string& rule, const std::string& fix, const std::string& example) {
  return {what, rule, fix, example};
}

/// A valid note for the pair (trajectory, wrong turn → wrong turn + 1) of run "run-1".
RepairNote make_note(const std::string& family, int64_t trajectory, int64_t wrong_turn, const NoteText& text,
                     const std::string& wrong_src, const std::string& fixed_src,
                     std::optional<double> speedup = std::nullopt) {
  RepairNote n;
  n.op_family = family;
  n.definition = family + "_def";
  n.source = {"run-1", trajectory, wrong_turn, wrong_turn + 1, sha256_hex(wrong_src), sha256_hex(fixed_src)};
  n.wrong_status = "COMPILE_ERROR";
  n.text = text;
  n.fixed_speedup = speedup;
  n.teacher_model = "teacher-x";
  n.created_at = 1700000000.0;
  return n;
}

int64_t add(NotesStore& store, const std::string& family, int64_t trajectory, const std::string& wrong_src,
            const NoteText& text, std::optional<double> speedup = std::nullopt,
            const std::string& fixed_src = "// fixed\n") {
  return store.add(make_note(family, trajectory, 1, text, wrong_src, fixed_src + std::to_string(trajectory), speedup),
                   wrong_src, fixed_src + std::to_string(trajectory));
}

// ---- FTS5's bm25(), computed by hand from the documented formula (ext/fts5/fts5_aux.c):
//   idf(q) = ln((N - n(q) + 0.5) / (n(q) + 0.5)), 1e-6 when <= 0
//   f(q,D) = Σ over the occurrences of q in the row of its column's weight
//   score  = Σ_q idf(q) · f·(k1 + 1) / (f + k1·(1 - b + b·|D|/avgdl)), k1 = 1.2, b = 0.75
// with N and avgdl over every row of the table and |D| the row's unweighted token count.
struct Row {
  std::vector<std::string> kernel, note;  // the tokens of the two columns, as FTS5 indexes them
};

double hand_bm25(const std::vector<Row>& rows, std::size_t r, const std::vector<std::string>& query) {
  const double k1 = 1.2, b = 0.75;
  double N = static_cast<double>(rows.size()), total = 0;
  for (const auto& row : rows) total += static_cast<double>(row.kernel.size() + row.note.size());
  double avgdl = total / N;
  double D = static_cast<double>(rows[r].kernel.size() + rows[r].note.size());
  double score = 0;
  for (const auto& q : query) {
    double n = 0;
    for (const auto& row : rows) {
      bool has = std::count(row.kernel.begin(), row.kernel.end(), q) + std::count(row.note.begin(), row.note.end(), q) > 0;
      n += has ? 1 : 0;
    }
    double idf = std::log((N - n + 0.5) / (n + 0.5));
    if (idf <= 0) idf = 1e-6;
    double f = kKernelTermsWeight * static_cast<double>(std::count(rows[r].kernel.begin(), rows[r].kernel.end(), q)) +
               kNoteTermsWeight * static_cast<double>(std::count(rows[r].note.begin(), rows[r].note.end(), q));
    score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl));
  }
  return score;
}

void expect_close(double got, double want) {
  EXPECT_LE(std::fabs(got - want), 1e-9 * std::fabs(want)) << "got " << got << ", want " << want;
}

}  // namespace

// ------------------------------------------------------------------------------------ op family

TEST(OpFamily, CausalVariantsMapOntoTheirFamily) {
  EXPECT_EQ(op_family("mha_fwd_causal"), "mha_fwd");
  EXPECT_EQ(op_family("mha_bwd_causal"), "mha_bwd");
  EXPECT_EQ(op_family("mha_fwd"), "mha_fwd");
  EXPECT_EQ(op_family("gemm"), "gemm");
  EXPECT_EQ(op_family("_causal"), "_causal");
}

// ------------------------------------------------------------------------------------ terms

TEST(KernelTerms, SplitsPtxInstructionsIntoPartsWordsAndOpcodePrefixes) {
  const char* src = R"(// wgmma in a comment is not a term
/* nor cp.async here */ char c = 'x';
asm volatile("mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t" :: "r"(addr));
ptxb::mbarrier_wait_parity(&full[s], 1.0f);
asm("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0}, %%cluster_ctarank;");
asm("cp.async.bulk.tensor.2d.shared::cluster.global [%0];");
int x = threadIdx.x; __syncthreads();
)";
  std::vector<std::string> want = {
      "mbarrier", "try_wait", "try", "wait", "parity", "shared", "cta", "b64", "mbarrier.try_wait",
      "mbarrier.try_wait.parity", "addr", "ptxb", "mbarrier_wait_parity", "mbarrier", "wait", "parity", "full",
      "wgmma", "mma_async", "mma", "async", "sync", "aligned", "m64n256k16", "f32", "bf16", "bf16", "wgmma.mma_async",
      "wgmma.mma_async.sync", "wgmma.mma_async.sync.aligned", "cluster_ctarank", "cluster", "ctarank", "cp", "async",
      "bulk", "tensor", "2d", "shared", "cluster", "global", "cp.async", "cp.async.bulk", "cp.async.bulk.tensor",
      "threadidx", "threadidx.x", "__syncthreads"};
  EXPECT_EQ(kernel_terms(src), want);
}

TEST(KernelTerms, DropsStopWordsShortTokensAndNumbers) {
  EXPECT_EQ(kernel_terms("for (int i = 0; i < 128; ++i) return x1 + 0x1F + 1e5f;"), std::vector<std::string>{"x1"});
  EXPECT_EQ(text_terms("Don't wait on the barrier: it's e.g. done."),
            (std::vector<std::string>{"don", "wait", "barrier", "done"}));
}

TEST(Fts5Quote, QuotesEveryTermAndDoublesInnerQuotes) {
  EXPECT_EQ(fts5_quote("AND"), "\"AND\"");
  EXPECT_EQ(fts5_quote("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(fts5_quote("\""), "\"\"\"\"");
}

// ------------------------------------------------------------------------------------ BM25

TEST_F(NotesStoreTest, Bm25ScoresMatchTheHandComputedFormula) {
  NotesStore store(path());
  // Rows as FTS5 indexes them: kernel terms, then the note's four fields' terms.
  std::vector<Row> rows = {
      {{"alpha", "beta", "beta"}, {"gamma", "delta", "gamma", "epsilon"}},
      {{"beta", "zeta"}, {"zeta", "eta", "theta", "iota"}},
      {{"alpha", "alpha", "alpha", "alpha"}, {"kappa", "lambda", "mu", "nu"}},
      {{"omega"}, {"beta", "omega", "sigma", "beta", "tau"}},
  };
  int64_t a = add(store, "gemm", 1, "alpha beta beta", text_of("gamma", "delta", "gamma", "epsilon"));
  int64_t b = add(store, "gemm", 2, "beta zeta", text_of("zeta", "eta", "theta", "iota"));
  int64_t c = add(store, "mha_fwd", 3, "alpha alpha alpha alpha", text_of("kappa", "lambda", "mu", "nu"));
  int64_t d = add(store, "gemm", 4, "omega", text_of("beta omega", "sigma", "beta", "tau"));
  ASSERT_EQ(store.count(), 4);

  // alpha: 2 of 4 notes (idf ln(1) = 0 → 1e-6); beta: 3 of 4 (negative → 1e-6); zeta: 1 (ln(3.5/1.5)).
  const std::string failing = "alpha(beta, zeta); unknownname();";
  EXPECT_EQ(store.query_terms(failing), (std::vector<std::string>{"zeta", "alpha", "beta"}));
  const std::vector<std::string> query = {"zeta", "alpha", "beta"};

  auto gemm = store.retrieve(failing, "gemm", 10);
  ASSERT_EQ(gemm.size(), 3u);
  std::map<int64_t, std::size_t> row_of = {{a, 0}, {b, 1}, {c, 2}, {d, 3}};
  for (const auto& s : gemm) expect_close(s.score, hand_bm25(rows, row_of[s.note.id], query));
  // b holds the one rare term. a's alpha and two betas outscore d's two note-column betas (f = 4):
  // both terms sit at the 1e-6 IDF floor, and f saturates (f·2.2/(f + K)).
  EXPECT_EQ(gemm[0].note.id, b);
  EXPECT_GT(hand_bm25(rows, 0, query), hand_bm25(rows, 3, query));
  EXPECT_EQ(gemm[1].note.id, a);
  EXPECT_EQ(gemm[2].note.id, d);
  EXPECT_GT(gemm[0].score, gemm[1].score);
  EXPECT_GT(gemm[1].score, gemm[2].score);

  // The other family's note is scored with the same store-wide N and avgdl.
  auto mha = store.retrieve(failing, "mha_fwd", 10);
  ASSERT_EQ(mha.size(), 1u);
  EXPECT_EQ(mha[0].note.id, c);
  expect_close(mha[0].score, hand_bm25(rows, 2, query));
}

TEST_F(NotesStoreTest, Bm25PositiveIdfScoreHasTheExpectedValue) {
  // One score written out. Rows (kernel | note): {zeta xx | zeta aa bb cc}, {pp | qq q1 q2 q3},
  // {rr | ss s1 s2 s3}: N = 3, zeta in n = 1 note, idf = ln(2.5/1.5); |D| = 2 + 4 = 6,
  // avgdl = (6 + 5 + 5)/3; f = 1·1 (kernel) + 2·1 (note) = 3; k1 + 1 = 2.2, 1 - b = 0.25.
  NotesStore store(path());
  add(store, "gemm", 1, "zeta xx", text_of("zeta", "aa", "bb", "cc"));
  add(store, "gemm", 2, "pp", text_of("qq", "q1", "q2", "q3"));
  add(store, "gemm", 3, "rr", text_of("ss", "s1", "s2", "s3"));
  auto got = store.retrieve("zeta", "gemm", 5);
  ASSERT_EQ(got.size(), 1u);
  double idf = std::log(2.5 / 1.5), avgdl = (6.0 + 5.0 + 5.0) / 3.0, f = 3.0, D = 6.0;
  double want = idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * D / avgdl));
  expect_close(got[0].score, want);
}

// ------------------------------------------------------------------------------------ ranking

TEST_F(NotesStoreTest, EqualScoresAreOrderedByIdAndKLimitsTheList) {
  NotesStore store(path());
  std::vector<int64_t> ids;
  for (int64_t t = 1; t <= 4; ++t)
    ids.push_back(add(store, "gemm", t, "sharedname other" + std::to_string(t), text_of("ww" + std::to_string(t), "rr", "ff", "ee")));
  add(store, "gemm", 9, "unrelated", text_of("ww", "rr", "ff", "ee"));
  auto got = store.retrieve("sharedname();", "gemm", 3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].note.id, ids[0]);
  EXPECT_EQ(got[1].note.id, ids[1]);
  EXPECT_EQ(got[2].note.id, ids[2]);
  EXPECT_EQ(got[0].score, got[2].score);
  EXPECT_TRUE(store.retrieve("sharedname();", "gemm", 0).empty());
  EXPECT_THROW((void)store.retrieve("sharedname();", "gemm", -1), InputError);
  EXPECT_TRUE(store.retrieve("nothing_known_here();", "gemm", 3).empty());
  EXPECT_TRUE(store.retrieve("", "gemm", 3).empty());
}

TEST_F(NotesStoreTest, ANoteWithTheTextOfABetterOneIsSkipped) {
  NotesStore store(path());
  // Two pairs of the same wrong kernel got the same note; a third note differs.
  int64_t a = add(store, "gemm", 1, "zero_c(); sharedname", text_of("wrote zeros", "compute it", "wgmma", "e"));
  add(store, "gemm", 2, "zero_c(); sharedname", text_of("wrote zeros", "compute it", "wgmma", "e"));
  int64_t c = add(store, "gemm", 3, "sharedname", text_of("other", "rule", "fix", "e"));
  auto got = store.retrieve("zero_c(); sharedname", "gemm", 3);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].note.id, a);
  EXPECT_EQ(got[1].note.id, c);
}

TEST_F(NotesStoreTest, RetrievalStaysWithinTheOpFamily) {
  NotesStore store(path());
  int64_t g = add(store, "gemm", 1, "wgmma_fence();", text_of("x wgmma", "r1", "f1", "e1"));
  int64_t f = add(store, "mha_fwd", 2, "wgmma_fence();", text_of("x wgmma", "r1", "f1", "e1"));
  auto fwd = store.retrieve("wgmma_fence();", op_family("mha_fwd_causal"), 5);
  ASSERT_EQ(fwd.size(), 1u);
  EXPECT_EQ(fwd[0].note.id, f);
  auto gemm = store.retrieve("wgmma_fence();", "gemm", 5);
  ASSERT_EQ(gemm.size(), 1u);
  EXPECT_EQ(gemm[0].note.id, g);
  EXPECT_TRUE(store.retrieve("wgmma_fence();", "mha_bwd", 5).empty());
  // An op_type given where a family is expected is read as its family.
  ASSERT_EQ(store.retrieve("wgmma_fence();", "mha_fwd_causal", 5).size(), 1u);
}

TEST_F(NotesStoreTest, PtxOpcodeInANoteIsFoundFromACppWrapperCall) {
  NotesStore store(path());
  int64_t id = add(store, "gemm", 1, "int main() {}",
                   text_of("waited with mbarrier.try_wait on the wrong parity", "flip the phase bit per ring pass",
                           "track the phase", "mbarrier.try_wait.parity.shared::cta.b64 p, [bar], phase;"));
  auto got = store.retrieve("ptxb::mbarrier_wait_parity(&full[s], phase);", "gemm", 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].note.id, id);
}

// ------------------------------------------------------------------------------------ query safety

TEST_F(NotesStoreTest, QueriesAreSafeForFts5Syntax) {
  NotesStore store(path());
  int64_t id = add(store, "gemm", 1, "NEAR(x, y); MATCH; rank;", text_of("ww", "rr", "ff", "ee"));
  // FTS5 operators, quotes, column filters, prefix and initial-token marks in a failing kernel.
  const std::string hostile = R"(AND OR NOT NEAR(a b) "x" 'y' * ^ : + - { } ( ) col:NEAR rank* MATCH)";
  std::vector<ScoredNote> got;
  ASSERT_NO_THROW(got = store.retrieve(hostile, "gemm", 5));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].note.id, id);
  // Any text quoted with fts5_quote is a plain string to FTS5, operators and quotes included.
  SqliteDb db(path());
  for (std::string t : {"AND", "OR", "NOT", "NEAR", "NEAR(a b)", "\"", "*", "a*", "^a", "col:x", "x + y", "-x", "{a}"}) {
    auto st = db.prepare("SELECT COUNT(*) FROM repair_notes_fts WHERE repair_notes_fts MATCH ?");
    st.bind(1, fts5_quote(t));
    EXPECT_NO_THROW(st.step()) << t;
  }
}

TEST_F(NotesStoreTest, QueryUsesAtMost64TermsRarestFirst) {
  NotesStore store(path());
  std::string all, half;
  for (int i = 0; i < 100; ++i) all += "v" + std::to_string(i) + " ";
  for (int i = 0; i < 50; ++i) half += "v" + std::to_string(i) + " ";
  add(store, "gemm", 1, all, text_of("ww", "rr", "ff", "ee"));
  add(store, "gemm", 2, half, text_of("ww", "rr", "ff", "ee"));
  auto terms = store.query_terms(all + " notinanynote");
  ASSERT_EQ(terms.size(), static_cast<std::size_t>(kMaxQueryTerms));
  std::set<std::string> rare;
  for (int i = 50; i < 100; ++i) rare.insert("v" + std::to_string(i));
  EXPECT_EQ(std::set<std::string>(terms.begin(), terms.begin() + 50), rare);  // the 50 in one note come first
  EXPECT_EQ(terms[50], "v0");  // then the commoner ones, alphabetically
  EXPECT_EQ(terms[51], "v1");
  EXPECT_EQ(terms[52], "v10");
}

// ------------------------------------------------------------------------------------ store

TEST_F(NotesStoreTest, AddStoresTheNoteAndBothKernels) {
  NotesStore store(path());
  RepairNote n = make_note("gemm", 7, 2, text_of("w", "r", "f", "e"), "wrong src", "fixed src", 1.5);
  int64_t id = store.add(n, "wrong src", "fixed src");
  auto back = store.find(id);
  ASSERT_TRUE(back);
  n.id = id;
  EXPECT_EQ(back->to_json(), n.to_json());
  EXPECT_EQ(store.find_by_source(n.source), id);
  EXPECT_EQ(store.kernel_source(sha256_hex("wrong src")), "wrong src");
  EXPECT_EQ(store.kernel_source(sha256_hex("fixed src")), "fixed src");
  EXPECT_FALSE(store.find(id + 1));
}

TEST_F(NotesStoreTest, AddRefusesASecondNoteForAPairAndMismatchedSources) {
  NotesStore store(path());
  RepairNote n = make_note("gemm", 7, 2, text_of("w", "r", "f", "e"), "wrong src", "fixed src");
  store.add(n, "wrong src", "fixed src");
  EXPECT_THROW(store.add(n, "wrong src", "fixed src"), NotesStoreError);
  RepairNote other = make_note("gemm", 8, 2, text_of("w", "r", "f", "e"), "wrong src", "fixed src");
  EXPECT_THROW(store.add(other, "another wrong src", "fixed src"), NotesStoreError);
  EXPECT_THROW(store.add(other, "wrong src", "another fixed src"), NotesStoreError);
  other.op_family = "mha_fwd_causal";
  EXPECT_THROW(store.add(other, "wrong src", "fixed src"), InputError);
  EXPECT_EQ(store.count(), 1);
}

TEST_F(NotesStoreTest, ReopensItsOwnFileAndRefusesOthers) {
  {
    NotesStore store(path());
    add(store, "gemm", 1, "alpha", text_of("w", "r", "f", "e"));
  }
  NotesStore again(path(), NotesStore::Open::existing);
  EXPECT_EQ(again.count(), 1);
  EXPECT_EQ(again.retrieve("alpha", "gemm", 1).size(), 1u);
  EXPECT_THROW(NotesStore((dir.path() / "absent.db").string(), NotesStore::Open::existing), NotesStoreError);
  std::string other = (dir.path() / "other.db").string();
  SqliteDb(other).exec("CREATE TABLE t (x)");
  EXPECT_THROW(NotesStore{other}, NotesStoreError);
}

TEST_F(NotesStoreTest, FastestFixedKernelHasTheBestSpeedupAmongTheNotes) {
  NotesStore store(path());
  int64_t slow = add(store, "gemm", 1, "aa", text_of("w1", "r", "f", "e"), 1.1, "slow");
  int64_t fast = add(store, "gemm", 2, "aa", text_of("w2", "r", "f", "e"), 2.0, "fast");
  int64_t tie = add(store, "gemm", 3, "aa", text_of("w3", "r", "f", "e"), 2.0, "tie");
  int64_t none = add(store, "gemm", 4, "aa", text_of("w4", "r", "f", "e"), std::nullopt, "none");
  EXPECT_EQ(store.fastest_fixed_kernel(std::vector<int64_t>{slow, fast, tie, none}), "fast2");
  EXPECT_EQ(store.fastest_fixed_kernel(std::vector<int64_t>{tie, slow}), "tie3");
  EXPECT_EQ(store.fastest_fixed_kernel(std::vector<int64_t>{none}), std::nullopt);
  EXPECT_EQ(store.fastest_fixed_kernel(std::vector<int64_t>{}), std::nullopt);
  EXPECT_EQ(store.fastest_fixed_kernel(store.retrieve("aa", "gemm", 4)), "fast2");
}

// ------------------------------------------------------------------------------------ note JSON

TEST(RepairNoteJson, RoundTripsAndRefusesMalformedNotes) {
  RepairNote n = make_note("mha_fwd", 3, 1, text_of("w", "r", "f", "e"), "a", "b", 1.25);
  n.id = 12;
  ordered_json j = n.to_json();
  EXPECT_EQ(RepairNote::from_json(j).to_json(), j);
  EXPECT_EQ(j["schema"], kRepairNoteSchema);

  auto refused = [&](auto edit) {
    ordered_json bad = j;
    edit(bad);
    EXPECT_THROW(RepairNote::from_json(bad), InputError) << bad.dump();
  };
  refused([](ordered_json& x) { x["extra"] = 1; });
  refused([](ordered_json& x) { x["schema"] = "ptxbench.verdict"; });
  refused([](ordered_json& x) { x.erase("rule"); });
  refused([](ordered_json& x) { x["rule"] = 5; });
  refused([](ordered_json& x) { x["rule"] = std::string(kRuleMaxChars + 1, 'r'); });
  refused([](ordered_json& x) { x["wrong_status"] = "PASSED"; });
  refused([](ordered_json& x) { x["wrong_status"] = "SOMETHING"; });
  refused([](ordered_json& x) { x["op_family"] = "mha_fwd_causal"; });
  refused([](ordered_json& x) { x["source"].erase("fixed_sha256"); });
  refused([](ordered_json& x) { x["source"]["fixed_turn"] = 1; });
  refused([](ordered_json& x) { x["source"]["wrong_sha256"] = "abc"; });
  refused([](ordered_json& x) { x["fixed_speedup"] = -1.0; });
  ordered_json null_speedup = j;
  null_speedup["fixed_speedup"] = nullptr;
  EXPECT_FALSE(RepairNote::from_json(null_speedup).fixed_speedup);
  try {
    ordered_json bad = j;
    bad.erase("fix");
    (void)RepairNote::from_json(bad, "notes.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("notes.json: fix: missing required field"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------------------------ teacher

TEST(TeacherAnswer, ReadsAPlainJsonObject) {
  NoteText t = parse_teacher_answer(
      R"({"what_was_wrong": " wrong parity ", "rule": "flip per pass", "fix": "track phase", "example": "x ^= 1;"})");
  EXPECT_EQ(t.what_was_wrong, "wrong parity");
  EXPECT_EQ(t.rule, "flip per pass");
  EXPECT_EQ(t.fix, "track phase");
  EXPECT_EQ(t.example, "x ^= 1;");
}

TEST(TeacherAnswer, ReadsAFencedObjectAndUnwrapsAFencedExample) {
  NoteText t = parse_teacher_answer(
      "Here is the note:\n```json\n{\"what_was_wrong\": \"w\", \"rule\": \"r\", \"fix\": \"f\", "
      "\"example\": \"```cuda\\nphase ^= 1;\\n```\"}\n```\nDone.");
  EXPECT_EQ(t.what_was_wrong, "w");
  EXPECT_EQ(t.example, "phase ^= 1;");
}

TEST(TeacherAnswer, RefusesMissingExtraEmptyOrWrongTypedFields) {
  EXPECT_THROW(parse_teacher_answer(R"({"what_was_wrong": "w", "fix": "f", "example": "e"})"), InputError);
  EXPECT_THROW(parse_teacher_answer(R"({"what_was_wrong": "w", "rule": "r", "fix": "f", "example": "e", "x": "y"})"),
               InputError);
  EXPECT_THROW(parse_teacher_answer(R"({"what_was_wrong": " ", "rule": "r", "fix": "f", "example": "e"})"), InputError);
  EXPECT_THROW(parse_teacher_answer(R"({"what_was_wrong": "w", "rule": 4, "fix": "f", "example": "e"})"), InputError);
  try {
    (void)parse_teacher_answer(R"({"what_was_wrong": "w", "fix": "f", "example": "e"})");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rule: missing required field"), std::string::npos) << e.what();
  }
}

TEST(TeacherAnswer, RefusesFieldsOverTheirLimits) {
  auto answer = [](const std::string& rule, const std::string& example) {
    return ordered_json{{"what_was_wrong", "w"}, {"rule", rule}, {"fix", "f"}, {"example", example}}.dump();
  };
  EXPECT_NO_THROW(parse_teacher_answer(answer(std::string(kRuleMaxChars, 'r'), std::string(kExampleMaxChars, 'e'))));
  EXPECT_THROW(parse_teacher_answer(answer(std::string(kRuleMaxChars + 1, 'r'), "e")), InputError);
  EXPECT_THROW(parse_teacher_answer(answer("r", std::string(kExampleMaxChars + 1, 'e'))), InputError);
  // Limits count code points: 400 two-byte characters are within the rule's limit.
  std::string wide;
  for (std::size_t i = 0; i < kRuleMaxChars; ++i) wide += "\xC3\xA9";
  EXPECT_NO_THROW(parse_teacher_answer(answer(wide, "e")));
}

TEST(TeacherAnswer, RefusesTextThatIsNotJson) {
  EXPECT_THROW(parse_teacher_answer("The kernel used the wrong parity."), InputError);
  EXPECT_THROW(parse_teacher_answer(""), InputError);
  EXPECT_THROW(parse_teacher_answer("```json\n{\"rule\": \n```"), InputError);
  EXPECT_THROW(parse_teacher_answer("[\"what_was_wrong\"]"), InputError);
}

TEST(TeacherPromptText, EmbedsBothKernelsAndTheFeedbackWithinLimits) {
  TeacherPrompt p = teacher_prompt("wrong();", "Compile: error.", "fixed();");
  EXPECT_NE(p.system.find("\"rule\" (at most 400 characters)"), std::string::npos);
  EXPECT_NE(p.system.find("one JSON object"), std::string::npos);
  EXPECT_NE(p.user.find("```cuda\nwrong();\n```"), std::string::npos);
  EXPECT_NE(p.user.find("```text\nCompile: error.\n```"), std::string::npos);
  EXPECT_NE(p.user.find("```cuda\nfixed();\n```"), std::string::npos);
  EXPECT_LT(p.user.find("wrong();"), p.user.find("fixed();"));

  std::string huge(100000, 'x');
  TeacherPrompt cut_p = teacher_prompt(huge, huge, huge + "```");
  EXPECT_LT(cut_p.user.size(), 2 * kTeacherSourceMaxChars + kTeacherFeedbackMaxChars + 1000);
  EXPECT_NE(cut_p.user.find("more characters cut"), std::string::npos);
  // A source holding ``` gets a longer fence, so it cannot close its block.
  TeacherPrompt ticks = teacher_prompt("a ``` b", "f", "c");
  EXPECT_NE(ticks.user.find("````cuda\na ``` b\n````"), std::string::npos);
}

// ------------------------------------------------------------------------------------ feedback

namespace {
ScoredNote scored(int64_t id, const std::string& status, const NoteText& text) {
  RepairNote n = make_note("gemm", id, 1, text, "w", "f");
  n.id = id;
  n.wrong_status = status;
  return {n, 1.0};
}
}  // namespace

TEST(NotesModeNames, ParseAndPrint) {
  EXPECT_EQ(parse_notes_mode("off"), NotesMode::off);
  EXPECT_EQ(parse_notes_mode("notes"), NotesMode::notes);
  EXPECT_EQ(parse_notes_mode("notes+kernel"), NotesMode::notes_and_kernel);
  EXPECT_EQ(to_string(NotesMode::notes_and_kernel), "notes+kernel");
  EXPECT_THROW(parse_notes_mode("kernel"), InputError);
}

TEST(AppendNotes, NotesModeText) {
  std::vector<ScoredNote> notes = {
      scored(1, "COMPILE_ERROR", text_of("Used wgmma without a fence.", "Fence before wgmma.", "Added the fence.",
                                         "wgmma.fence.sync.aligned;")),
      scored(2, "INCORRECT_NUMERICAL", text_of("Wrong parity.", "Flip per pass.", "Tracked the phase.", "p ^= 1;")),
  };
  std::string want =
      "Verdict: COMPILE_ERROR\n"
      "\n"
      "## Repair notes\n"
      "Notes written from earlier kernels of this operation family that failed and were then fixed, most relevant "
      "first. Use the ones that apply to your kernel.\n"
      "\n"
      "### Note 1 (from a kernel that got COMPILE_ERROR)\n"
      "What was wrong: Used wgmma without a fence.\n"
      "Rule: Fence before wgmma.\n"
      "Fix: Added the fence.\n"
      "Example:\n"
      "```\n"
      "wgmma.fence.sync.aligned;\n"
      "```\n"
      "\n"
      "### Note 2 (from a kernel that got INCORRECT_NUMERICAL)\n"
      "What was wrong: Wrong parity.\n"
      "Rule: Flip per pass.\n"
      "Fix: Tracked the phase.\n"
      "Example:\n"
      "```\n"
      "p ^= 1;\n"
      "```\n";
  EXPECT_EQ(append_notes("Verdict: COMPILE_ERROR\n", notes, NotesMode::notes, std::nullopt), want);
  // notes mode leaves the kernel out; a feedback without a final newline gets one before the gap.
  EXPECT_EQ(append_notes("Verdict: COMPILE_ERROR", notes, NotesMode::notes, std::string("kernel();")), want);
}

TEST(AppendNotes, NotesAndKernelModeText) {
  std::vector<ScoredNote> notes = {scored(1, "TIMEOUT", text_of("Spun forever.", "Bound waits.", "Fixed phase.", "ok();"))};
  std::string want =
      "feedback\n"
      "\n"
      "## Repair notes\n"
      "Notes written from earlier kernels of this operation family that failed and were then fixed, most relevant "
      "first. Use the ones that apply to your kernel.\n"
      "\n"
      "### Note 1 (from a kernel that got TIMEOUT)\n"
      "What was wrong: Spun forever.\n"
      "Rule: Bound waits.\n"
      "Fix: Fixed phase.\n"
      "Example:\n"
      "```\n"
      "ok();\n"
      "```\n"
      "\n"
      "## Fastest fixed kernel\n"
      "The fastest of the fixed kernels these notes came from. It passed for its own definition, which may differ "
      "from yours in shapes or options.\n"
      "```cuda\n"
      "__global__ void k() {}\n"
      "```\n";
  EXPECT_EQ(append_notes("feedback\n", notes, NotesMode::notes_and_kernel, std::string("__global__ void k() {}")), want);
  // Without a kernel, notes+kernel shows the notes alone.
  std::string notes_only = append_notes("feedback\n", notes, NotesMode::notes, std::nullopt);
  EXPECT_EQ(append_notes("feedback\n", notes, NotesMode::notes_and_kernel, std::nullopt), notes_only);
}

TEST(AppendNotes, OffOrNoNotesLeavesTheFeedbackUnchanged) {
  std::vector<ScoredNote> notes = {scored(1, "TIMEOUT", text_of("w", "r", "f", "e"))};
  EXPECT_EQ(append_notes("feedback", notes, NotesMode::off, std::string("k")), "feedback");
  EXPECT_EQ(append_notes("feedback", {}, NotesMode::notes, std::nullopt), "feedback");
  EXPECT_EQ(append_notes("feedback", {}, NotesMode::notes_and_kernel, std::string("k")), "feedback");
}

TEST(AppendNotes, KeepsWholeNotesAndCutsTheKernelWithinTheCaps) {
  NoteText big = text_of(std::string(kWhatWasWrongMaxChars, 'w'), std::string(kRuleMaxChars, 'r'),
                         std::string(kFixMaxChars, 'f'), std::string(kExampleMaxChars, 'e'));
  std::vector<ScoredNote> notes;
  for (int64_t i = 1; i <= 10; ++i) notes.push_back(scored(i, "TIMEOUT", big));
  const std::string feedback = "fb\n";
  std::string kernel(100000, 'k');
  std::string out = append_notes(feedback, notes, NotesMode::notes_and_kernel, kernel);
  std::string appended = out.substr(feedback.size() + 1);
  EXPECT_LE(appended.size(), kNotesAppendixMaxChars);
  std::size_t section = appended.find("\n## Fastest fixed kernel\n");
  ASSERT_NE(section, std::string::npos);
  EXPECT_LE(section, kNotesSectionMaxChars);
  // Only whole notes: as many "### Note" headings as complete examples.
  std::size_t headings = 0, examples = 0;
  for (std::size_t p = appended.find("### Note "); p != std::string::npos; p = appended.find("### Note ", p + 1)) ++headings;
  for (std::size_t p = appended.find(std::string(kExampleMaxChars, 'e') + "\n```\n"); p != std::string::npos;
       p = appended.find(std::string(kExampleMaxChars, 'e') + "\n```\n", p + 1))
    ++examples;
  EXPECT_GE(headings, 3u);
  EXPECT_LT(headings, notes.size());
  EXPECT_EQ(headings, examples);
  EXPECT_NE(appended.find("more characters cut ...]\n```\n"), std::string::npos);
  EXPECT_EQ(appended.substr(appended.size() - 4), "```\n");
  // A kernel that fits is shown whole.
  std::string small = append_notes(feedback, {notes[0]}, NotesMode::notes_and_kernel, std::string(20000, 'k'));
  EXPECT_NE(small.find(std::string(20000, 'k') + "\n```\n"), std::string::npos);
}

TEST_F(NotesStoreTest, FeedbackWithNotesIsOneCallInEachMode) {
  NotesStore store(path());
  add(store, "mha_fwd", 1, "online_softmax(rowmax);", text_of("Rescaled late.", "Rescale first.", "Moved it.", "o *= s;"),
      1.3, "best kernel ");
  const std::string failing = "online_softmax(rowmax2);";
  EXPECT_EQ(feedback_with_notes("fb\n", store, failing, "mha_fwd_causal", NotesMode::off), "fb\n");
  std::string with_notes = feedback_with_notes("fb\n", store, failing, "mha_fwd_causal", NotesMode::notes);
  EXPECT_NE(with_notes.find("Rule: Rescale first.\n"), std::string::npos);
  EXPECT_EQ(with_notes.find("## Fastest fixed kernel"), std::string::npos);
  std::string with_kernel = feedback_with_notes("fb\n", store, failing, "mha_fwd_causal", NotesMode::notes_and_kernel);
  EXPECT_NE(with_kernel.find("```cuda\nbest kernel 1\n```\n"), std::string::npos);
  EXPECT_EQ(feedback_with_notes("fb\n", store, failing, "gemm", NotesMode::notes_and_kernel), "fb\n");
}
