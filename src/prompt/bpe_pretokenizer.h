// Qwen's pre-tokenizer for the byte-level BPE (bpe_tokenizer.h), written out by hand over code
// points: UTF-8 decoding, the character classes of Qwen's split regex, the regex itself as a
// function (piece_end), and GPT-2's byte-level spelling of bytes as code points.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ptxbench::bpe {

/// The split regex of Qwen2/2.5/3 (Qwen2 wrote \p{N}{1} for the same \p{N}); piece_end() is it.
inline constexpr std::string_view kQwenSplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// Byte-level BPE spells every byte as one printable code point so that the vocabulary is text:
/// the printable Latin-1 bytes stand for themselves, the other 68 take U+0100.. in byte order.
std::array<char32_t, 256> byte_to_codepoint();

inline constexpr char32_t kInvalid = 0xFFFFFFFF;  ///< a byte that starts no valid UTF-8 sequence

/// The code point at s[i] (advancing i past it); kInvalid and one byte for malformed UTF-8.
char32_t next_codepoint(std::string_view s, std::size_t& i);

/// The character classes of the split regex.
enum class CharClass : uint8_t {
  Letter,   ///< \p{L}
  Number,   ///< \p{N}
  Space,    ///< \s other than \r and \n
  Newline,  ///< \r or \n
  Other,    ///< everything else ([^\s\p{L}\p{N}]): punctuation, symbols, marks, controls
};
CharClass classify(char32_t c);

/// A text as code points: class, value and byte offset of each (offsets has one more, the end).
struct CodePoints {
  std::vector<CharClass> cls;
  std::vector<char32_t> cp;
  std::vector<std::size_t> offset;
  explicit CodePoints(std::string_view text);
  [[nodiscard]] std::size_t size() const noexcept { return cp.size(); }
};

/// End (a code point index) of the pre-token that starts at i: Qwen's split regex
///   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N} | ?[^\s\p{L}\p{N}]+[\r\n]*
///   | \s*[\r\n]+ | \s+(?!\S) | \s+
/// alternative by alternative: the first that matches wins, each as long as it can be.
std::size_t piece_end(const CodePoints& d, std::size_t i);

}  // namespace ptxbench::bpe
