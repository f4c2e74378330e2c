#include "compile/source_scan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <string_view>

namespace ptxbench {
namespace {

// ---------------------------------------------------------------------------------------------
// The rules. Each has an id and the reason the model is told. Token rules are regular expressions
// run on the source with comments stripped and every whitespace run collapsed to one space (so
// `exit  (` and `exit\n(` read `exit (`); when a pattern has a capture group 1 that matched, the
// finding points at it. Quantifiers are bounded: libstdc++'s std::regex recurses once per
// repetition, and a candidate must not be able to crash the compile stage with a long token.
// Directive, __has_include and string-literal rules are checked by hand below, without limits.
// ---------------------------------------------------------------------------------------------

struct RuleInfo {
  const char* id;
  const char* reason;
};

// A call `f(` of one of `names`, group 1 being the name. Member calls (`x.f(`, `p->f(`), longer
// identifiers (`resend(`) and calls qualified by another namespace (`ns::f(`) do not count; `::f(`
// does, and with `or_std` so does `std::f(`.
std::string call_of(const std::string& names, bool or_std) {
  std::string qualifier = or_std ? R"((?:^|[^\w:])(?:std ?)?::)" : R"((?:^|[^\w:])::)";
  return R"((?:^|[^\w.>:]|)" + qualifier + R"() ?()" + names + R"() ?\()";
}
std::string include_of(const std::string& headers) {
  return R"((?:#|%:) ?include ?[<"](?:)" + headers + R"()[>"])";
}

struct TokenRule {
  RuleInfo info;
  std::string pattern;
  bool icase = false;
};

struct CompiledRule {
  RuleInfo info;
  std::regex re;
};

const std::vector<CompiledRule>& token_rules() {
  static const std::vector<TokenRule> rules = {
      {{"cublas", "cuBLAS/cuBLASLt are banned: the kernel must be your own code"}, R"(cublas\w{0,64})", true},
      {{"cudnn", "cuDNN is banned: the kernel must be your own code"}, R"(cudnn\w{0,64})", true},
      {{"cutlass", "CUTLASS is banned as a library: write the PTX yourself"}, R"(\bcutlass\b|cutlass/)", true},
      {{"cute", "CuTe is banned as a library: write the PTX yourself"}, R"(\bcute ?::|[<"]cute/)", true},
      {{"vendor-library", "vendor math libraries are banned"},
       R"(\bcusparse\w{0,64}|\bcufft\w{0,64}|\bcusolver\w{0,64}|\bnccl\w{0,64}|\bnvshmem\w{0,64})",
       true},
      {{"framework", "framework calls are banned"}, R"(\btorch\b|\bATen/|\bc10::|\bat::)", true},
      {{"cupti", "CUPTI and the profiler interfaces belong to the evaluator, which measures your kernels with them"},
       R"(\bcupti\w{0,64}|\bNVPW_\w{0,64}|\bnvperf\w{0,64})", true},
      {{"module-loading",
        "loading or JIT-compiling modules at run time is banned: every kernel that runs must come from this file"},
       R"(\b(?:cuModule(?:Load|Unload)|cuLink(?:Create|AddData|AddFile|Complete)|cuLibraryLoad|cudaLibraryLoad|nvrtc|nvJitLink|nvPTXCompiler)\w{0,64})"},
      {{"driver-entry-point",
        "cuGetProcAddress/cudaGetDriverEntryPoint hand out any driver function and are banned; call the "
        "driver function directly (<cuda.h>, linked with -lcuda)"},
       R"(\b(?:cuGetProcAddress|cudaGetDriverEntryPoint|cuGetExportTable|cudaGetExportTable)\w{0,64})"},
      {{"dynamic-loading", "loading or looking up code at run time is banned (it would bypass the import checks)"},
       R"(\b(?:dl(?:open|mopen|sym|vsym|addr1?|info|_iterate_phdr)|_r_debug|getauxval)\b|)" +
           include_of(R"(dlfcn\.h|link\.h)")},
      {{"process-creation", "creating, tracing or signalling processes is not allowed in a candidate"},
       call_of(R"(fork|vfork|popen|system|posix_spawnp?|exec[lv]p?e?|execveat|fexecve|clone3?|ptrace|prctl|unshare|setns|kill|tgkill)",
               true) +
           "|" + include_of(R"(spawn\.h|sys/wait\.h|sys/ptrace\.h|sys/prctl\.h)")},
      // exit() itself is allowed: the runner intercepts it during a call (docs/sandbox.md) and the
      // call fails as RUNTIME_ERROR, as the field's CUDA_CHECK macros expect. These variants skip
      // the process's exit handling and end it without the runner's say.
      {{"process-exit",
        "_exit/_Exit/quick_exit end the process past the runner's accounting and are not allowed; exit(code) "
        "in an error path is (the call then fails as RUNTIME_ERROR), but returning a nonzero cudaError_t from "
        "ptxb_run says more"},
       call_of(R"(_exit|_Exit|quick_exit|at_quick_exit)", true)},
      {{"file-io", "file access is not allowed in a candidate (print to stdout instead)"},
       call_of(R"(fopen|fopen64|freopen|freopen64|fdopen|creat|creat64|open|open64|openat|openat64|openat2|tmpfile|tmpnam|tempnam|mkstemp|mkostemp|mkdtemp|opendir|fdopendir|readlink|readlinkat|realpath|name_to_handle_at|open_by_handle_at)",
               true) +
           R"(|\b(?:basic_)?[io]?fstream\b|\b(?:basic_|stdio_|stdio_sync_)?filebuf\b|\b__basic_file\b|\bfilesystem ?::|)" +
           include_of(R"(fstream|filesystem|experimental/filesystem)")},
      {{"file-descriptor",
        "duplicating or controlling file descriptors is not allowed: the runner talks to the evaluator over one"},
       call_of(R"(dup|dup2|dup3|fcntl|ioctl|close_range|pidfd_open|pidfd_getfd)", false) + "|" +
           include_of(R"(sys/ioctl\.h)")},
      {{"network", "network calls are not allowed: there is no network in the sandbox"},
       call_of(R"(socket|socketpair|connect|bind|listen|accept4?|send|sendto|sendmsg|sendmmsg|recv|recvfrom|recvmsg|recvmmsg|getaddrinfo|gethostbyname2?|getsockopt|setsockopt)",
               false) +
           "|" + include_of(R"(sys/socket\.h|sys/un\.h|netinet/\w{1,32}\.h|arpa/inet\.h|netdb\.h)")},
      {{"threads",
        "threads are not allowed: they run outside the call, racing the evaluator's checks and timing "
        "(the sandbox forbids them)"},
       R"(\bstd ?:: ?(?:thread|jthread|async)\b|\b(?:pthread_create|thrd_create)\b|)" +
           include_of(R"(thread|future|pthread\.h|threads\.h)")},
      {{"environment",
        "reading the environment is not allowed: tools announce themselves through it, and a kernel must not "
        "behave differently under them"},
       R"(\b(?:secure_getenv|getenv|setenv|putenv|unsetenv|clearenv|__environ|_environ|environ)\b)"},
      {{"raw-syscall", "raw system calls are not allowed"},
       R"(\bsyscall\b|\bsysenter\b|\bint \$?0x80\b|\bSYS_\w{1,64}|\b__NR_\w{1,64}|)" + include_of(R"(sys/syscall\.h)")},
      {{"signals", "installing signal handlers or timers is not allowed: they could hide a crash or fire outside the call"},
       R"(\b(?:sigaction|sigprocmask|sigaltstack|pthread_sigmask|pthread_kill|signalfd|setitimer|timer_create)\b|\bstd ?:: ?(?:signal|raise)\b|)" +
           include_of(R"(csignal|signal\.h)")},
      {{"memory-mapping",
        "mapping or re-protecting memory is not allowed (it could patch code in the process); use malloc/new "
        "or cudaMalloc for scratch"},
       R"(\b(?:mmap|mmap64|munmap|mremap|mprotect|pkey_mprotect|memfd_create|shm_open|shmget|shmat|process_vm_readv|process_vm_writev)\b|)" +
           include_of(R"(sys/mman\.h|sys/shm\.h)")},
      {{"pragma-dependency", "#pragma GCC dependency reads a host file's timestamp and is not allowed"},
       R"(\bGCC ?dependency\b)"},
      {{"assembler-include", "assembler .incbin/.include read host files at build time and are not allowed"},
       R"(\.(?:incbin|include)\b ?\\?")"},
  };
  static const std::vector<CompiledRule> compiled = [] {
    std::vector<CompiledRule> out;
    for (const auto& r : rules) {
      auto flags = std::regex::ECMAScript;
      if (r.icase) flags |= std::regex::icase;
      out.push_back({r.info, std::regex(r.pattern, flags)});
    }
    return out;
  }();
  return compiled;
}

// Rules checked by hand (no regular expression can follow an unbounded directive or literal).
const RuleInfo kIncludePath{"include-path",
                            "#include of absolute or parent-relative paths is not allowed: the candidate is one file"};
const RuleInfo kIncludeForm{
    "include-form",
    "#include and __has_include take a literal \"file\" or <file>; a macro operand (#include F) is not allowed "
    "because it can name any host file"};
const RuleInfo kIncludeDirective{
    "include-directive", "#include_next, #import, #embed and __has_include_next/__has_embed are not allowed"};
const RuleInfo kLineDirective{"line-directive",
                              "#line and line markers are not allowed: a file name in one makes compiler "
                              "diagnostics print lines of that host file"};
const RuleInfo kHostPath{"host-path",
                         "host paths (/proc, /sys, /dev, /etc, home folders, ...) are out of bounds for a candidate"};

// ---------------------------------------------------------------------------------------------
// The source as the compiler's later phases see it.
// ---------------------------------------------------------------------------------------------

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool space_char(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

struct Literal {
  std::size_t begin, end;            ///< the whole literal in Source::text, quotes included
  std::size_t body_begin, body_end;  ///< its characters (after R"d( for a raw string)
};

struct Source {
  std::string text;                   ///< backslash-newlines removed, comments blanked (line breaks kept)
  std::vector<std::size_t> origin;    ///< origin[i]: offset in the original of text[i]; one past the end too
  std::vector<std::size_t> line_starts;  ///< offsets in the original where lines start
  std::vector<Literal> strings;       ///< string literals

  [[nodiscard]] int line(std::size_t text_offset) const {
    std::size_t o = origin[std::min(text_offset, origin.size() - 1)];
    return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), o) - line_starts.begin());
  }
};

// Phase 2: a backslash followed by a newline joins lines. Done before comments are found, as the
// compiler does: `*\<newline>/` ends a block comment, so a scan that skipped this step would
// blank code the compiler compiles.
void splice(const std::string& s, Source& out) {
  out.line_starts.push_back(0);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n') out.line_starts.push_back(i + 1);
    if (s[i] == '\\') {
      std::size_t j = i + 1;
      if (j < s.size() && s[j] == '\r') ++j;
      if (j < s.size() && s[j] == '\n') {
        out.line_starts.push_back(j + 1);
        i = j;
        continue;
      }
    }
    out.text.push_back(s[i]);
    out.origin.push_back(i);
  }
  out.origin.push_back(s.size());
}

// Where a quoted literal that opens at `i` ends (one past the closing quote, or at the newline of
// an unterminated one).
std::size_t quoted_end(const std::string& t, std::size_t i, char quote) {
  for (std::size_t j = i + 1; j < t.size(); ++j) {
    if (t[j] == '\\') ++j;
    else if (t[j] == quote) return j + 1;
    else if (t[j] == '\n') return j;
  }
  return t.size();
}

// A raw string literal R"d(...)d" whose quote is at text offset `i`; false when it is not one. The
// compiler undoes line splicing inside raw strings, so the closing delimiter is found in the original.
bool raw_string(const std::string& original, const Source& src, std::size_t i, Literal& lit) {
  const std::string& t = src.text;
  std::size_t k = i;
  while (k > 0 && ident_char(t[k - 1])) --k;
  std::string_view prefix(t.data() + k, i - k);
  if (prefix != "R" && prefix != "u8R" && prefix != "uR" && prefix != "UR" && prefix != "LR") return false;
  std::size_t j = i + 1;
  while (j < t.size() && j - i - 1 <= 16 && t[j] != '(' && !space_char(t[j]) && t[j] != ')' && t[j] != '\\') ++j;
  if (j >= t.size() || t[j] != '(') return false;
  std::string close = ")" + t.substr(i + 1, j - i - 1) + "\"";
  std::size_t at = original.find(close, src.origin[j] + 1);
  auto to_text = [&](std::size_t o) {
    return static_cast<std::size_t>(std::lower_bound(src.origin.begin(), src.origin.end(), o) - src.origin.begin());
  };
  lit = {i, to_text(at == std::string::npos ? original.size() : at + close.size()), j + 1,
         to_text(at == std::string::npos ? original.size() : at)};
  return true;
}

// A preprocessing number from `i` on: digits, letters, '.', exponent signs and ' digit separators.
std::size_t pp_number_end(const std::string& t, std::size_t i) {
  std::size_t j = i + 1;
  while (j < t.size()) {
    char c = t[j], prev = t[j - 1];
    if (ident_char(c) || c == '.') ++j;
    else if (c == '\'' && j + 1 < t.size() && ident_char(t[j + 1])) j += 2;
    else if ((c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) ++j;
    else break;
  }
  return j;
}

Source lex(const std::string& original) {
  Source src;
  splice(original, src);
  std::string& t = src.text;
  const std::string code = t;  // read from the unblanked copy; blank in `t`
  auto blank = [&](std::size_t k) {
    if (code[k] != '\n') t[k] = ' ';
  };
  std::size_t i = 0;
  while (i < code.size()) {
    char c = code[i], next = i + 1 < code.size() ? code[i + 1] : '\0';
    if (c == '/' && next == '/') {
      while (i < code.size() && code[i] != '\n') blank(i++);
    } else if (c == '/' && next == '*') {
      blank(i);
      blank(i + 1);
      i += 2;
      while (i < code.size() && !(code[i] == '*' && i + 1 < code.size() && code[i + 1] == '/')) blank(i++);
      if (i < code.size()) {
        blank(i);
        blank(i + 1);
        i += 2;
      }
    } else if (c == '"') {
      Literal lit{};
      if (!raw_string(original, src, i, lit)) {
        std::size_t end = quoted_end(code, i, '"');
        bool closed = end > i + 1 && code[end - 1] == '"';
        lit = {i, end, i + 1, closed ? end - 1 : end};
      }
      src.strings.push_back(lit);
      i = std::max(lit.end, i + 1);
    } else if (c == '\'') {
      i = quoted_end(code, i, '\'');
    } else if ((std::isdigit(static_cast<unsigned char>(c)) ||
                (c == '.' && std::isdigit(static_cast<unsigned char>(next)))) &&
               (i == 0 || !ident_char(code[i - 1]))) {
      i = pp_number_end(code, i);
    } else {
      ++i;
    }
  }
  return src;
}

// ---------------------------------------------------------------------------------------------
// Hand-written checks.
// ---------------------------------------------------------------------------------------------

struct Hit {
  const RuleInfo* rule;
  std::size_t order;  ///< rank of the rule, for a stable report
  std::size_t begin, end;
};

bool bad_header_path(std::string_view path) {
  return !path.empty() && (path[0] == '/' || path == ".." || path.rfind("../", 0) == 0 ||
                           path.find("/../") != std::string_view::npos ||
                           (path.size() >= 3 && path.substr(path.size() - 3) == "/.."));
}

std::size_t skip_blanks(const std::string& t, std::size_t i, std::size_t end) {
  while (i < end && t[i] != '\n' && space_char(t[i])) ++i;
  return i;
}

// `#include` and friends, line by line: a directive is '#' (or the digraph %:) first on a line.
void check_directives(const Source& src, std::vector<Hit>& hits, std::size_t order) {
  const std::string& t = src.text;
  for (std::size_t line = 0; line < t.size();) {
    std::size_t eol = t.find('\n', line);
    if (eol == std::string::npos) eol = t.size();
    std::size_t i = skip_blanks(t, line, eol);
    std::size_t hash = i;
    bool directive = false;
    if (i < eol && t[i] == '#') directive = true, i += 1;
    else if (t.compare(i, 2, "%:") == 0) directive = true, i += 2;
    else if (t.compare(i, 3, "?\?=") == 0) directive = true, i += 3;
    if (directive) {
      i = skip_blanks(t, i, eol);
      std::size_t name_end = i;
      while (name_end < eol && ident_char(t[name_end])) ++name_end;
      std::string_view name(t.data() + i, name_end - i);
      std::size_t operand = skip_blanks(t, name_end, eol);
      const RuleInfo* rule = nullptr;
      if (name == "include") {
        char open = operand < eol ? t[operand] : '\0';
        if (open == '<' || open == '"') {
          std::size_t close = t.find(open == '<' ? '>' : '"', operand + 1);
          if (close == std::string::npos || close > eol) close = eol;
          if (bad_header_path(std::string_view(t.data() + operand + 1, close - operand - 1))) rule = &kIncludePath;
        } else {
          rule = &kIncludeForm;
        }
      } else if (name == "include_next" || name == "import" || name == "embed") {
        rule = &kIncludeDirective;
      } else if (name == "line" || (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0])))) {
        rule = &kLineDirective;
      }
      if (rule) hits.push_back({rule, order, hash, eol});
    }
    line = eol + 1;
  }
}

// __has_include(...) anywhere (also in #define bodies): a literal operand or nothing.
void check_has_include(const Source& src, std::vector<Hit>& hits, std::size_t order) {
  const std::string& t = src.text;
  for (std::size_t at = t.find("__has_"); at != std::string::npos; at = t.find("__has_", at + 1)) {
    if (at > 0 && ident_char(t[at - 1])) continue;
    std::size_t name_end = at;
    while (name_end < t.size() && ident_char(t[name_end])) ++name_end;
    std::string_view name(t.data() + at, name_end - at);
    if (name == "__has_include_next" || name == "__has_embed") {
      hits.push_back({&kIncludeDirective, order, at, name_end});
      continue;
    }
    if (name != "__has_include") continue;
    std::size_t i = name_end;
    while (i < t.size() && space_char(t[i])) ++i;
    if (i >= t.size() || t[i] != '(') continue;  // `#ifdef __has_include` names the feature
    ++i;
    while (i < t.size() && space_char(t[i])) ++i;
    char open = i < t.size() ? t[i] : '\0';
    if (open != '<' && open != '"') {
      hits.push_back({&kIncludeForm, order, at, i});
      continue;
    }
    std::size_t close = t.find(open == '<' ? '>' : '"', i + 1);
    if (close == std::string::npos) close = t.size();
    if (bad_header_path(std::string_view(t.data() + i + 1, close - i - 1)))
      hits.push_back({&kIncludePath, order, at, std::min(close + 1, t.size())});
  }
}

// String literals that name host paths: "/proc/self/maps", "/dev/shm/x", "/etc/passwd".
void check_string_literals(const Source& src, std::vector<Hit>& hits, std::size_t order) {
  static const std::array<std::string_view, 3> kAnywhere = {"/proc/", "/sys/", "/dev/"};
  static const std::array<std::string_view, 18> kRoots = {"proc", "sys", "dev", "etc", "home", "root", "tmp",
                                                          "var", "run", "usr", "opt", "mnt", "srv", "boot",
                                                          "lib", "lib64", "bin", "sbin"};
  for (const auto& lit : src.strings) {
    std::string_view body(src.text.data() + lit.body_begin, lit.body_end - std::min(lit.body_begin, lit.body_end));
    bool bad = std::any_of(kAnywhere.begin(), kAnywhere.end(),
                           [&](std::string_view p) { return body.find(p) != std::string_view::npos; });
    if (!bad && body.size() > 1 && body[0] == '/') {
      for (std::string_view root : kRoots) {
        if (body.compare(1, root.size(), root) != 0) continue;
        if (body.size() == root.size() + 1 || body[root.size() + 1] == '/') bad = true;
      }
    }
    if (bad) hits.push_back({&kHostPath, order, lit.begin, lit.end});
  }
}

// Whitespace runs become one space; `at[i]` is the offset in src.text of collapsed[i].
std::string collapse_whitespace(const std::string& t, std::vector<std::size_t>& at) {
  std::string out;
  out.reserve(t.size());
  at.reserve(t.size() + 1);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (space_char(t[i])) {
      if (!out.empty() && out.back() == ' ') continue;
      out.push_back(' ');
    } else {
      out.push_back(t[i]);
    }
    at.push_back(i);
  }
  at.push_back(t.size());
  return out;
}

}  // namespace

std::string strip_comments(const std::string& source) {
  // Callers get their own text back (same length, same lines): map what the lexer blanked in the
  // spliced text onto the original, including the backslash of a splice inside a comment.
  Source src = lex(source);
  std::string out = source;
  auto blanked = [&](std::size_t i) { return i < src.text.size() && src.text[i] != source[src.origin[i]]; };
  for (std::size_t i = 0; i < src.text.size(); ++i) {
    if (!blanked(i)) continue;
    out[src.origin[i]] = ' ';
    for (std::size_t o = src.origin[i] + 1; o < src.origin[i + 1]; ++o)
      if (out[o] == '\\' && blanked(i + 1)) out[o] = ' ';
  }
  return out;
}

std::vector<SourceFinding> scan_source(const std::string& source) {
  Source src = lex(source);
  std::vector<Hit> hits;
  std::size_t order = 0;

  std::vector<std::size_t> at;
  std::string flat = collapse_whitespace(src.text, at);
  for (const auto& rule : token_rules()) {
    for (auto it = std::sregex_iterator(flat.begin(), flat.end(), rule.re); it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      int g = m.size() > 1 && m[1].matched ? 1 : 0;
      auto begin = static_cast<std::size_t>(m.position(g));
      auto end = begin + static_cast<std::size_t>(m.length(g));
      hits.push_back({&rule.info, order, at[begin], at[end]});
    }
    ++order;
  }
  check_directives(src, hits, order++);
  check_has_include(src, hits, order++);
  check_string_literals(src, hits, order++);

  // One report per piece of text: a hit inside another's range (the "/etc/x" of an #include
  // "/etc/x" already reported as include-path) adds nothing.
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end > b.end;
    return a.order < b.order;
  });
  // Sorted by start, a hit lies inside an earlier one exactly when it ends before the furthest end
  // seen so far.
  std::vector<SourceFinding> found;
  std::size_t furthest = 0;
  for (const auto& h : hits) {
    if (h.end <= furthest) continue;
    furthest = h.end;
    if (found.size() == kMaxSourceFindings) break;
    std::string excerpt = src.text.substr(h.begin, std::min<std::size_t>(h.end - h.begin, 120));
    std::replace(excerpt.begin(), excerpt.end(), '\n', ' ');
    found.push_back({h.rule->id, h.rule->reason, src.line(h.begin), excerpt});
  }
  return found;  // in text order, hence by line
}

}  // namespace ptxbench
