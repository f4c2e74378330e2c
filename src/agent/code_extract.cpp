#include "agent/code_extract.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "common/text.h"

namespace ptxbench {
namespace {

struct Block {
  std::string lang, body;
  bool closed = false;
};

std::string lower_trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return lower(std::move(s));
}

// Fences are lines starting (after up to 3 spaces) with ``` or ~~~; a block closes at a fence of
// the same character at least as long (CommonMark's rule).
std::vector<Block> fenced_blocks(const std::string& text) {
  std::vector<Block> blocks;
  std::size_t pos = 0;
  bool open = false;
  char fence_char = 0;
  std::size_t fence_len = 0;
  Block current;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::size_t indent = 0;
    while (indent < line.size() && indent < 3 && line[indent] == ' ') ++indent;
    std::size_t run = 0;
    char c = indent < line.size() ? line[indent] : 0;
    if (c == '`' || c == '~')
      while (indent + run < line.size() && line[indent + run] == c) ++run;
    if (!open && run >= 3) {
      open = true;
      fence_char = c;
      fence_len = run;
      current = Block{};
      current.lang = lower_trim(line.substr(indent + run));
      if (auto sp = current.lang.find_first_of(" \t{"); sp != std::string::npos) current.lang.resize(sp);
    } else if (open && c == fence_char && run >= fence_len && lower_trim(line.substr(indent + run)).empty()) {
      current.closed = true;
      blocks.push_back(current);
      open = false;
    } else if (open) {
      current.body += line + "\n";
    }
    if (end == text.size()) break;
    pos = end + 1;
  }
  if (open) blocks.push_back(current);  // unclosed: a truncated answer
  return blocks;
}

bool code_language(const std::string& lang, CandidateLanguage language) {
  static const char* cuda[] = {"", "cuda", "cu", "cpp", "c++", "cxx", "c", "cc", "h", "hpp", "cuh"};
  static const char* python[] = {"", "python", "py", "python3", "triton"};
  auto in = [&](const auto& list) {
    return std::any_of(std::begin(list), std::end(list), [&](const char* l) { return lang == l; });
  };
  return language == CandidateLanguage::triton ? in(python) : in(cuda);
}

// A line that starts a top-level `def run(` (spaces allowed before the parenthesis). An indented
// `def run` (a method, a nested helper) is not the entry point; the static checker says the rest.
bool defines_python_run(const std::string& body) {
  for (std::size_t pos = 0; pos < body.size();) {
    std::size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    std::string_view line(body.data() + pos, end - pos);
    if (line.rfind("def run", 0) == 0) {
      std::size_t i = 7;
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] == '(') return true;
    }
    pos = end + 1;
  }
  return false;
}

bool defines_entry(const std::string& body, CandidateLanguage language) {
  return language == CandidateLanguage::triton ? defines_python_run(body) : body.find("ptxb_run") != std::string::npos;
}

}  // namespace

Extraction extract_candidate(const std::string& answer, CandidateLanguage language) {
  Extraction e;
  std::vector<Block> blocks = fenced_blocks(answer);
  e.blocks_seen = static_cast<int>(blocks.size());
  bool truncated = false;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (!it->closed) {
      truncated = truncated || defines_entry(it->body, language);
      continue;
    }
    if (!code_language(it->lang, language) || lower_trim(it->body).empty()) continue;
    if (!defines_entry(it->body, language)) continue;
    e.source = it->body;
    return e;
  }
  const bool triton = language == CandidateLanguage::triton;
  const std::string fence = triton ? "```python ... ```" : "```cuda ... ```";
  const std::string entry = triton ? "a top-level def run(...) that launches your @triton.jit kernels"
                                   : "extern \"C\" int ptxb_run(const ptxb_tensor*, int32_t, cudaStream_t)";
  if (blocks.empty())
    e.error = "No code block found in your answer. Answer with the complete " + std::string(triton ? "Python file" : "kernel source") +
              " in one fenced code block (" + fence + ") that defines " + entry + ".";
  else if (truncated)
    e.error = "Your last code block is not closed (the answer was cut off, probably at the output token limit). Send the "
              "complete " + std::string(triton ? "file" : "kernel") + " in one closed fenced code block; keep explanations short.";
  else
    e.error = "None of the " + std::to_string(blocks.size()) + " code block(s) in your answer " +
              (triton ? "is a Python block that defines run" : "defines ptxb_run") + ". Send the complete " +
              (triton ? "Python file" : "kernel source") + ", including " + entry + ", in one fenced code block" +
              (triton ? " (" + fence + ")." : ".");
  return e;
}

}  // namespace ptxbench
