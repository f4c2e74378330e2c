// Token counts for prompt components. We ship no tokenizer, so this is a documented approximation
// of GPT-style byte-pair encoding (docs/prompts.md): a letter run of up to 6 characters is one token
// and each further 6 characters one more; a digit run costs one token per 3 digits; each punctuation
// character is one token; a whitespace run is free unless it holds a line break (one token) or is
// an indentation of 4+ spaces (one token per 4).
#pragma once

#include <cstddef>
#include <string_view>

namespace ptxbench {

std::size_t estimate_tokens(std::string_view text);

}  // namespace ptxbench
