// The Triton compile stage without a GPU (docs/triton.md): every rule of the checker
// (src/python/ptxb_triton/triton_check.py) with small candidates that break it and close ones that do not,
// the report's JSON and its mapping to the compile result (status, message, lines), the size and
// time limits, that the candidate is parsed and never run, and the static verdicts of the Triton
// fixture suites (tests/fixtures/triton/).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "common/error.h"
#include "common/fs.h"
#include "compile/triton_check.h"
#include "definitions/definition.h"
#include "suite/candidate_suite.h"

using namespace ptxbench;
using namespace std::string_literals;

namespace {

fs::path fixtures() { return fs::path(PTXBENCH_TEST_DATA) / "fixtures/triton"; }

// A kernel and a launch, so that a snippet's own rule is the only finding. Six lines: the
// snippet's first line is line 7.
const char* kHeader = R"(import torch
import triton
import triton.language as tl
@triton.jit
def k(x, BLOCK: tl.constexpr):
    pass
)";
constexpr int kHeaderLines = 6;

/// One checker for the rule tests (the sandbox's start-up is tested once, below).
const TritonChecker& checker() {
  static const TritonChecker c = [] {
    TritonCheckOptions o;
    o.sandbox = Enforcement::off;
    return TritonChecker(o);
  }();
  return c;
}

TritonReport report_of(const std::string& source, const TritonChecker& c = checker()) {
  TritonCheck check = c.run(source);
  EXPECT_TRUE(check.report.has_value()) << check.result.message;
  return check.report.value_or(TritonReport{});
}

std::vector<std::string> rules_of(const TritonReport& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) out.push_back(f.rule);
  return out;
}

/// The rules a snippet breaks when it follows kHeader (a host function `run` that launches `k`
/// comes with the snippet when `with_run`).
std::vector<std::string> rules(const std::string& snippet, bool with_run = true) {
  std::string src = std::string(kHeader) + snippet + "\n";
  if (with_run) src += "def run(A, B, C):\n    k[(1,)](A)\n";
  return rules_of(report_of(src));
}

/// A snippet of host code inside run(A, B, C), where A, B, C are the tensors.
std::vector<std::string> in_run(const std::string& body) {
  std::string indented;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    indented += "    " + body.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return rules(std::string("def run(A, B, C):\n    k[(1,)](A)\n") + indented, false);
}

using Rules = std::vector<std::string>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// The fixtures and the report.
// ---------------------------------------------------------------------------------------------

TEST(TritonCheck, CorrectFixturesPassWithTheirEntryAndKernels) {
  struct Case {
    const char* file;
    int nargs;
    std::vector<std::string> params;
    const char* kernel;
  };
  for (const Case& c : {Case{"gemm_tl_dot.py", 3, {"A", "B", "C"}, "_gemm_abt_kernel"},
                        Case{"mha_fwd.py", 5, {"Q", "K", "V", "O", "LSE"}, "_attn_fwd_kernel"},
                        Case{"gemm_wrong_transpose.py", 3, {"A", "B", "C"}, "_gemm_kernel"}}) {
    SCOPED_TRACE(c.file);
    TritonCheckOptions o;
    o.sandbox = Enforcement::off;
    o.expected_args = c.nargs;
    TritonCheck check = TritonChecker(o).run(read_file(fixtures() / c.file));
    ASSERT_TRUE(check.result.ok()) << check.result.message;
    ASSERT_TRUE(check.report && check.report->entry);
    EXPECT_EQ(check.report->entry->params, c.params);
    EXPECT_FALSE(check.report->entry->varargs);
    EXPECT_EQ(check.result.kernels, std::vector<std::string>{c.kernel});
    EXPECT_EQ(check.report->launches, std::vector<std::string>{c.kernel});
    EXPECT_NE(std::find(check.report->imports.begin(), check.report->imports.end(), "triton.language"),
              check.report->imports.end());
    EXPECT_TRUE(check.result.source_findings.empty());
    EXPECT_TRUE(contains(check.result.message, "first call on the GPU"));
    EXPECT_EQ(check.result.key.size(), 64u);
    EXPECT_EQ(check.result.arch, "sm_90a");
  }
}

TEST(TritonCheck, CheckerRunsIsolatedFromTheDataRoot) {
  EXPECT_TRUE(fs::is_regular_file(default_triton_checker_path()));
  EXPECT_EQ(default_triton_checker_path().filename(), "triton_check.py");
  CompileResult r = checker().check(read_file(fixtures() / "gemm_tl_dot.py"));
  ASSERT_GE(r.command.size(), 6u);
  EXPECT_EQ(r.command[0], checker().python().executable);
  EXPECT_EQ(r.command[1], "-I");  // no user site, no PYTHON* variables
  EXPECT_EQ(r.command[2], "-S");  // no site-packages: the checker needs only the standard library
  EXPECT_FALSE(checker().python().version.empty());
  EXPECT_GT(r.seconds, 0.0);
}

TEST(TritonCheck, SandboxedByDefault) {
  TritonChecker sandboxed;  // the host's setting (best effort unless PTXBENCH_SANDBOX says otherwise)
  CompileResult r = sandboxed.check(read_file(fixtures() / "gemm_torch_matmul.py"));
  EXPECT_EQ(r.status, CompileStatus::banned_api) << r.message;
  SandboxPolicy p = sandboxed.sandbox_policy("/tmp/work");
  EXPECT_TRUE(p.network_namespace);
  EXPECT_EQ(p.writable, std::vector<std::string>{"/tmp/work"});
  EXPECT_NE(std::find(p.read_only.begin(), p.read_only.end(), sandboxed.python().prefix), p.read_only.end());
}

TEST(TritonCheck, ReportJsonRoundTripsAndIsReadStrictly) {
  TritonReport r = report_of(read_file(fixtures() / "gemm_torch_matmul.py"));
  ordered_json j = r;
  TritonReport back = j.get<TritonReport>();
  EXPECT_EQ(ordered_json(back).dump(), j.dump());
  ASSERT_EQ(back.findings.size(), 1u);
  EXPECT_EQ(back.findings[0].rule, "torch-compute");
  EXPECT_EQ(back.findings[0].kind, "banned");

  auto refused = [&](const std::function<void(ordered_json&)>& edit) {
    ordered_json bad = j;
    edit(bad);
    EXPECT_THROW((void)bad.get<TritonReport>(), InputError) << bad.dump();
  };
  refused([](ordered_json& b) { b["version"] = 2; });
  refused([](ordered_json& b) { b["checker"] = "other"; });
  refused([](ordered_json& b) { b["ok"] = true; });
  refused([](ordered_json& b) { b["findings"][0]["kind"] = "warning"; });
  refused([](ordered_json& b) { b["findings"] = "none"; });
}

// ---------------------------------------------------------------------------------------------
// The mapping to the compile result.
// ---------------------------------------------------------------------------------------------

TEST(TritonCheck, StatusFollowsTheKindsSyntaxThenBannedThenAbi) {
  TritonReport r;
  r.checker = kTritonCheckerName;
  r.version = kTritonCheckerVersion;
  EXPECT_EQ(r.status(), CompileStatus::ok);
  r.findings.push_back({"entry", "abi", 30, 1, "def gemm(A, B, C):", "no run"});
  EXPECT_EQ(r.status(), CompileStatus::abi_error);
  r.findings.push_back({"import", "banned", 4, 1, "import os", "imports are limited"});
  EXPECT_EQ(r.status(), CompileStatus::banned_api);
  r.findings.push_back({"syntax", "syntax", 9, 5, "def run(", "invalid syntax"});
  EXPECT_EQ(r.status(), CompileStatus::compile_error);

  r.findings.erase(r.findings.begin() + 2);
  r.truncated = 3;
  CompileResult c = triton_compile_result(r, "sm_90a");
  EXPECT_EQ(c.status, CompileStatus::banned_api);
  EXPECT_EQ(c.message,
            "The source uses banned APIs:\n  line 30:1: 'def gemm(A, B, C):': no run\n"
            "  line 4:1: 'import os': imports are limited\n  ... and 3 more");
  ASSERT_EQ(c.source_findings.size(), 2u);
  EXPECT_EQ(c.source_findings[1].line, 4);
  EXPECT_EQ(c.source_findings[1].rule, "import");
  EXPECT_EQ(c.source_findings[1].excerpt, "import os");
}

TEST(TritonCheck, CompileResultCarriesLinesColumnsAndTheKey) {
  std::string src = std::string(kHeader) + "def run(A, B, C):\n    k[(1,)](A)\n    x = torch.mm(A, B)\n";
  CompileResult r = checker().check(src);
  EXPECT_EQ(r.status, CompileStatus::banned_api);
  ASSERT_EQ(r.source_findings.size(), 1u);
  EXPECT_EQ(r.source_findings[0].line, kHeaderLines + 3);
  EXPECT_EQ(r.source_findings[0].excerpt, "torch.mm");
  EXPECT_TRUE(contains(r.message, "line 9:9: 'torch.mm': ")) << r.message;
  EXPECT_EQ(r.kernels, std::vector<std::string>{"k"});
  EXPECT_EQ(checker().check(src).key, r.key);
  EXPECT_NE(checker().check(src + "\n").key, r.key);
}

TEST(TritonCheck, SyntaxErrorsAreCompileErrorsWithTheirLine) {
  CompileResult r = checker().check("import triton\n\ndef run(A, B, C)\n    pass\n");
  EXPECT_EQ(r.status, CompileStatus::compile_error);
  ASSERT_EQ(r.source_findings.size(), 1u);
  EXPECT_EQ(r.source_findings[0].rule, "syntax");
  EXPECT_EQ(r.source_findings[0].line, 3);
  EXPECT_TRUE(contains(r.message, "The file is not valid Python:")) << r.message;
  EXPECT_EQ(checker().check("x = 1\0\n"s).status, CompileStatus::compile_error);
  EXPECT_EQ(checker().check("def run(A):\n\tif A:\n        pass\n  pass\n").status, CompileStatus::compile_error);
}

// ---------------------------------------------------------------------------------------------
// Limits, and that the candidate never runs.
// ---------------------------------------------------------------------------------------------

TEST(TritonCheck, OversizedFilesAreRefusedBeforeTheChecker) {
  TritonCheckOptions o;
  o.sandbox = Enforcement::off;
  o.max_source_bytes = 1000;
  TritonCheck c = TritonChecker(o).run(std::string(kHeader) + "# " + std::string(2000, 'x') + "\n");
  EXPECT_EQ(c.result.status, CompileStatus::compile_error);
  EXPECT_TRUE(contains(c.result.message, "the limit is 1000"));
  EXPECT_FALSE(c.report.has_value());
  EXPECT_TRUE(c.result.command.empty());
}

TEST(TritonCheck, DeepNestingIsACompileErrorNotACrash) {
  for (const std::string& deep : {"x = " + std::string(300, '(') + "1" + std::string(300, ')') + "\n",
                                  [] {
                                    std::string s = "x = 1";
                                    for (int i = 0; i < 5000; ++i) s += " + 1";
                                    return s + "\n";
                                  }(),
                                  [] {
                                    std::string s = "x = 1";
                                    for (int i = 0; i < 60000; ++i) s += "+1";
                                    return s + "\n";
                                  }()}) {
    CompileResult r = checker().check(deep);
    EXPECT_EQ(r.status, CompileStatus::compile_error) << r.message.substr(0, 300);
  }
}

TEST(TritonCheck, TimeLimitEndsTheChecker) {
  // A large, valid file and a limit that no interpreter start meets: the checker is killed and the
  // status says so (not an error of ours, not a verdict on the file's contents).
  std::string big = kHeader;
  while (big.size() < 200000) big += "value = other.attribute(first, second[third], fourth + fifth * sixth)\n";
  TritonCheckOptions o;
  o.sandbox = Enforcement::off;
  o.timeout_s = 0.02;
  TritonCheck c = TritonChecker(o).run(big);
  EXPECT_EQ(c.result.status, CompileStatus::timeout) << c.result.message;
  EXPECT_FALSE(c.report.has_value());
  EXPECT_TRUE(contains(c.result.message, "did not finish within 0.02 s")) << c.result.message;
  EXPECT_LT(c.result.seconds, 10.0);
}

TEST(TritonCheck, TheCandidateIsParsedNeverRun) {
  TempDir dir;
  fs::path marker = dir.path() / "ran";
  // Every way a file can run code when imported or executed: top-level statements, a default
  // argument, a decorator, a class body, and the main block. Valid Python, but banned.
  std::string evil = "import pathlib\nimport os\n"
                     "pathlib.Path(" + ("'" + marker.string() + "'") + ").write_text('top level')\n"
                     "os.system('touch " + marker.string() + "')\n"
                     "open('" + marker.string() + "', 'w').write('open')\n"
                     "def f(x=open('" + marker.string() + "', 'w')): pass\n"
                     "@(lambda g: open('" + marker.string() + "', 'w'))\n"
                     "def h(): pass\n"
                     "class C:\n    open('" + marker.string() + "', 'w')\n"
                     "if __name__ == '__main__':\n    open('" + marker.string() + "', 'w')\n";
  for (Enforcement e : {Enforcement::off, sandbox_enforcement_setting()}) {
    TritonCheckOptions o;
    o.sandbox = e;
    CompileResult r = TritonChecker(o).check(evil);
    EXPECT_EQ(r.status, CompileStatus::banned_api) << r.message;
    EXPECT_FALSE(fs::exists(marker)) << "the checker ran the candidate (sandbox " << to_string(e) << ")";
  }
  // Clean top-level code passes (it runs when the runner imports the file on the GPU host, in the
  // runner's sandbox), and is not run here either.
  std::string quiet = std::string(kHeader) + "import functools\nfunctools.reduce(lambda a, b: a, [1], " +
                      "print('ran'))\ndef run(A, B, C):\n    k[(1,)](A)\n";
  EXPECT_TRUE(checker().check(quiet).ok());
}

// ---------------------------------------------------------------------------------------------
// The rules, each with what breaks it and what is close but fine.
// ---------------------------------------------------------------------------------------------

TEST(TritonRules, EntryPoint) {
  EXPECT_EQ(rules("def gemm(A, B, C):\n    k[(1,)](A)", false), Rules{"entry"});
  EXPECT_EQ(rules("def _go(A):\n    k[(1,)](A)\nrun = _go", false), Rules{"entry"});
  EXPECT_EQ(rules("@torch.no_grad()\ndef run(A, B, C):\n    k[(1,)](A)", false), Rules{"entry"});
  EXPECT_EQ(rules("def run(A, B, C):\n    k[(1,)](A)\ndef run(A, B, C):\n    k[(1,)](A)", false), Rules{"entry"});
  EXPECT_EQ(rules("def run(A, B, C, *, scale):\n    k[(1,)](A)", false), Rules{"entry"});
  EXPECT_EQ(rules("async def run(A, B, C):\n    k[(1,)](A)", false), (Rules{"async", "entry"}));
  EXPECT_EQ(rules("def run(A, B, C, *, scale=1.0):\n    k[(1,)](A)", false), Rules{});
  EXPECT_EQ(rules("def helper():\n    def run(A, B, C):\n        pass\n    k[(1,)](1)", false), Rules{"entry"});

  // Arity against the definition: inputs then outputs.
  TritonCheckOptions o;
  o.sandbox = Enforcement::off;
  o.expected_args = 3;
  TritonChecker three(o);
  auto with_run = [&](const std::string& run) { return rules_of(report_of(std::string(kHeader) + run, three)); };
  EXPECT_EQ(with_run("def run(A, B, C):\n    k[(1,)](A)\n"), Rules{});
  EXPECT_EQ(with_run("def run(*tensors):\n    k[(1,)](tensors[0])\n"), Rules{});
  EXPECT_EQ(with_run("def run(A, B, C, D=None):\n    k[(1,)](A)\n"), Rules{});
  EXPECT_EQ(with_run("def run(A, B):\n    k[(1,)](A)\n"), Rules{"entry"});
  EXPECT_EQ(with_run("def run(Q, K, V, O, LSE):\n    k[(1,)](Q)\n"), Rules{"entry"});
  TritonReport r = report_of(std::string(kHeader) + "def run(A, B):\n    k[(1,)](A)\n", three);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(contains(r.findings[0].reason, "run takes 2 positional parameters; this definition passes 3"));
  EXPECT_EQ(r.status(), CompileStatus::abi_error);
  TritonReport v = report_of(std::string(kHeader) + "def run(*args):\n    k[(1,)](args[0])\n");
  ASSERT_TRUE(v.entry.has_value());
  EXPECT_EQ(v.entry->params, std::vector<std::string>{"*args"});
  EXPECT_TRUE(v.entry->varargs);
}

TEST(TritonRules, KernelsAndLaunches) {
  EXPECT_EQ(rules_of(report_of("import torch\ndef run(A, B, C):\n    C.zero_()\n")),
            (Rules{"kernel", "tensor-compute"}));
  EXPECT_EQ(rules_of(report_of("import triton\ndef run(A, B, C):\n    pass\n")), Rules{"kernel"});
  EXPECT_EQ(rules("def run(A, B, C):\n    pass", false), Rules{"launch"});  // k is defined, never launched
  // The decorator forms that make a kernel.
  EXPECT_EQ(rules_of(report_of("from triton import jit\nimport triton.language as tl\n@jit\ndef k(x):\n    pass\n"
                               "def run(A, B, C):\n    k[(1,)](A)\n")),
            Rules{});
  TritonReport r = report_of(std::string(kHeader) +
                             "@triton.autotune(configs=[triton.Config({'B': 64}, num_warps=4)], key=['n'])\n"
                             "@triton.jit(do_not_specialize=['n'])\ndef tuned(x, n, B: tl.constexpr):\n    pass\n"
                             "def run(A, B, C):\n    grid = lambda meta: (triton.cdiv(A.numel(), meta['B']),)\n"
                             "    tuned[grid](A, A.numel())\n");
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.kernels, (std::vector<std::string>{"k", "tuned"}));
  EXPECT_EQ(r.launches, std::vector<std::string>{"tuned"});
}

TEST(TritonRules, ImportAllowlist) {
  for (const char* banned : {"import os", "import sys", "import subprocess", "import ctypes", "import importlib",
                             "import builtins", "import socket", "import pickle", "import multiprocessing",
                             "import threading", "import numpy as np", "import operator", "import os.path",
                             "from os import environ", "from . import helper", "from torch import *",
                             "import torch.nn.functional as F", "import torch.utils.cpp_extension"})
    EXPECT_EQ(rules(banned), Rules{"import"}) << banned;
  for (const char* fine : {"import math", "import typing", "from typing import Optional, Tuple", "import functools",
                           "import itertools", "from __future__ import annotations",
                           "from triton.tools.tensor_descriptor import TensorDescriptor",
                           "from triton.language.extra import libdevice",
                           "import triton.language.extra.cuda.libdevice as ld", "from triton import language as tl2",
                           "from torch import empty, bfloat16"})
    EXPECT_EQ(rules(fine), Rules{}) << fine;
  TritonReport r = report_of(std::string(kHeader) + "import os\ndef run(A, B, C):\n    k[(1,)](A)\n");
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].line, kHeaderLines + 1);
  EXPECT_EQ(r.findings[0].text, "import os");
  EXPECT_TRUE(contains(r.findings[0].reason, "import of os"));
}

TEST(TritonRules, AliasesDoNotSmuggleTorchOps) {
  EXPECT_EQ(rules("from torch import matmul"), Rules{"torch-compute"});
  EXPECT_EQ(rules("from torch import nn"), Rules{"torch-compute"});
  EXPECT_EQ(rules("from torch.nn import functional as F"), Rules{"import"});
  EXPECT_EQ(in_run("m = torch.matmul\nm(A, B)"), Rules{"torch-compute"});
  EXPECT_EQ(in_run("t = torch\nt.matmul(A, B)"), (Rules{"module-value", "tensor-compute"}));
  EXPECT_EQ(in_run("helper(tl)"), Rules{"module-value"});
  EXPECT_EQ(in_run("c = torch.cuda"), Rules{"module-value"});
  EXPECT_EQ(in_run("torch = None"), Rules{"module-value"});
  EXPECT_EQ(in_run("getattr(torch, 'matmul')(A, B)"), Rules{"torch-compute"});
  EXPECT_EQ(in_run("torch.Tensor.matmul(A, B)"), Rules{"tensor-compute"});
  EXPECT_EQ(in_run("torch.matmul = None"), Rules{"torch-compute"});
  EXPECT_EQ(in_run("tl.dot = None"), Rules{"module-write"});
  EXPECT_EQ(in_run("triton.cdiv = max"), Rules{"module-write"});
  EXPECT_EQ(in_run("e = torch.empty\nbuf = e(16, device=A.device)"), Rules{});  // an allowed function stays allowed
}

TEST(TritonRules, TorchHostAllowlist) {
  for (const char* banned : {"torch.matmul(A, B)", "torch.mm(A, B)", "torch.bmm(A, B)",
                             "torch.einsum('ij,kj->ik', A, B)",
                             "torch.softmax(A, -1)", "torch.exp(A)", "torch.nn.functional.linear(A, B)",
                             "torch.nn.functional.scaled_dot_product_attention(A, B, C)", "torch.zeros(4)",
                             "torch.randn(4)", "torch.cat([A, B])", "torch.addmm(C, A, B)", "torch.version.cuda"})
    EXPECT_EQ(in_run(banned), Rules{"torch-compute"}) << banned;
  for (const char* banned : {"torch.ops.aten.mm(A, B)", "torch.compile(run)", "torch.library.Library('x', 'DEF')",
                             "torch.utils.cpp_extension.load_inline('x', '')",
                             "torch.backends.cuda.matmul.allow_tf32 = True",
                             "torch._C._cuda_getDevice()", "torch.load('w.pt')", "torch.jit.script(run)",
                             "torch.set_float32_matmul_precision('high')"})
    EXPECT_EQ(in_run(banned), Rules{"torch-escape"}) << banned;
  for (const char* banned : {"torch.cuda.set_device(0)", "torch.cuda.Stream()", "torch.cuda.empty_cache()",
                             "torch.cuda.CUDAGraph()", "torch.cuda.memory_allocated()"})
    EXPECT_EQ(in_run(banned), Rules{"torch-cuda"}) << banned;
  for (const char* fine :
       {"w = torch.empty((4, 4), device=A.device, dtype=torch.float32)", "w = torch.empty_like(C)",
        "w = torch.empty_strided((2, 2), (2, 1), device='cuda', dtype=torch.bfloat16)",
        "s = torch.cuda.current_stream()",
        "d = torch.cuda.current_device()", "n = torch.cuda.get_device_properties(A.device).multi_processor_count",
        "cc = torch.cuda.get_device_capability()", "torch.cuda.synchronize()", "e = torch.finfo(torch.bfloat16).eps",
        "f8 = torch.float8_e4m3fn", "size = torch.bfloat16.itemsize", "assert isinstance(A, torch.Tensor)",
        "with torch.no_grad():\n    k[(1,)](A)"})
    EXPECT_EQ(in_run(fine), Rules{}) << fine;
}

TEST(TritonRules, TritonAllowlist) {
  for (const char* banned : {"triton.runtime.driver.active.get_current_device()", "triton.compiler.compile(None)",
                             "triton.compile(None)", "triton.knobs.cache.dir = '/tmp'", "triton.testing.do_bench(run)",
                             "triton._C.libtriton", "triton.tools.disasm"})
    EXPECT_EQ(in_run(banned), Rules{"triton-escape"}) << banned;
  EXPECT_EQ(rules("from triton.runtime import driver"), Rules{"import"});
  EXPECT_EQ(rules("from triton import runtime"), Rules{"triton-escape"});
  for (const char* fine : {"n = triton.next_power_of_2(A.shape[0])", "g = (triton.cdiv(A.shape[0], 128),)",
                           "cfg = triton.Config({'B': 128}, num_warps=8, num_stages=3)",
                           "triton.set_allocator(lambda size, align, stream:"
                           " torch.empty(size, device='cuda', dtype=torch.int8))",
                           "z = tl.float32"})
    EXPECT_EQ(in_run(fine), Rules{}) << fine;
  EXPECT_EQ(in_run("x = tl.core.os"), Rules{"module-escape"});
  EXPECT_EQ(in_run("x = tl._semantic"), Rules{"private"});
}

TEST(TritonRules, BuiltinsThatRunOrReachCode) {
  for (const char* banned : {"eval('1')", "exec('x = 1')", "compile('1', 'f', 'eval')", "open('/etc/passwd')",
                             "globals()", "locals()", "vars(A)", "setattr(A, 'x', 1)", "delattr(A, 'x')",
                             "breakpoint()", "exit(0)", "quit()", "e = eval", "open = print"})
    EXPECT_EQ(in_run(banned), Rules{"builtin"}) << banned;
  EXPECT_EQ(rules("def helper(path, open=None):\n    pass"), Rules{"builtin"});
  EXPECT_EQ(in_run("T = type('T', (), {})"), Rules{"builtin"});
  for (const char* fine : {"t = type(A.shape[0])", "print('launching', A.shape)", "n = len(A)", "m = max(4, 8)",
                           "ok = isinstance(A, torch.Tensor)"})
    EXPECT_EQ(in_run(fine), Rules{}) << fine;
}

TEST(TritonRules, GetattrTakesALiteralName) {
  EXPECT_EQ(in_run("name = 'mat' + 'mul'\ngetattr(torch, name)(A, B)"), (Rules{"getattr", "module-value"}));
  EXPECT_EQ(in_run("g = getattr"), Rules{"getattr"});
  EXPECT_EQ(in_run("getattr(A, 'sum')()"), Rules{"tensor-compute"});
  EXPECT_EQ(in_run("getattr(A, '__class__')"), Rules{"dunder"});
  EXPECT_EQ(in_run("hasattr(A, '__globals__')"), Rules{"dunder"});
  EXPECT_EQ(in_run("s = getattr(A, 'shape')\nh = hasattr(A, 'data_ptr')\nw = getattr(cfg, 'width', 1)"), Rules{});
}

TEST(TritonRules, DunderNamesAndAttributes) {
  for (const char* banned : {"c = A.__class__", "s = ().__class__.__base__.__subclasses__()", "g = run.__globals__",
                             "b = __builtins__", "m = __import__('os')", "d = A.__dict__", "f = __file__",
                             "__name__ = 'x'"})
    EXPECT_EQ(in_run(banned), Rules{"dunder"}) << banned;
  EXPECT_EQ(rules("def __getattr__(name):\n    return name"), Rules{"dunder"});
  EXPECT_EQ(rules("from torch import __version__"), Rules{"dunder"});
  EXPECT_EQ(rules("@triton.jit\ndef k2(x):\n    y = x.__class__\ndef run(A, B, C):\n    k2[(1,)](A)", false),
            Rules{"dunder"});
  EXPECT_EQ(in_run("is_main = __name__ == '__main__'"), Rules{});
  EXPECT_EQ(in_run("s = '__class__'"), Rules{});  // a string is only a string
}

TEST(TritonRules, HostCodeDoesNotComputeWithTensors) {
  for (const char* banned : {"x = A.float()", "x = A.to(torch.float32)", "x = A.clone()", "s = A.sum()", "C.copy_(A)",
                             "A.exp_()", "C.zero_()", "C.fill_(0)", "x = A.matmul(B.T)", "x = A.T.contiguous().sum()",
                             "x = A.add(B)", "A.sort()", "x = A.type(torch.float)", "x = A.cpu()", "v = A.item()",
                             "x = A.untyped_storage()", "print(A)", "s = f'{A}'", "s = sum(A)",
                             "import math\nx = math.sqrt(A)",
                             "x = A + B", "x = -A", "x = A == B", "x = A[0] * 2", "x = [t.float() for t in (A, B)]",
                             "w = torch.empty_like(C)\nw.zero_()", "x = C.view(-1).softmax(0)"})
    EXPECT_EQ(in_run(banned), Rules{"tensor-compute"}) << banned;
  // Through a helper that receives the tensors, by position or keyword.
  EXPECT_EQ(rules("def _launch(a, c):\n    k[(1,)](a)\n    c.zero_()\ndef run(A, B, C):\n    _launch(A, c=C)", false),
            Rules{"tensor-compute"});
  EXPECT_EQ(rules("def run(*args):\n    A, B, C = args\n    k[(1,)](A)\n    A.exp_()", false), Rules{"tensor-compute"});
  // Setup that touches no data.
  for (const char* fine :
       {"M, K = A.shape", "N = B.shape[0]", "s = A.stride(0)", "st = A.stride()", "p = A.data_ptr()",
        "assert A.is_contiguous() and A.dtype == torch.bfloat16", "n = A.numel()", "e = A.element_size()",
        "Bt = B.T", "a = A.contiguous()", "flat = C.view(-1)", "q = A.reshape(-1, A.shape[-1])",
        "u = A.unsqueeze(0).expand(2, -1, -1)", "same = A is B", "dev = A.device.type == 'cuda'",
        "cfgs = [1, 3]\ncfgs.sort()\nseen = set()\nseen.add(1)", "parts = 'a,b'.split(',')",
        "grid = lambda A: (A['M'] * 2,)", "x = A.shape[0] * 2 + B.shape[1]", "d = {}\nd['x'] = A"})
    EXPECT_EQ(in_run(fine), Rules{}) << fine;
}

TEST(TritonRules, HostCodeDoesNotWriteTensors) {
  for (const char* banned : {"C[:] = 0", "C[0, 0] = 1", "C += 1", "C.data = A", "C.view(-1)[0] = 1", "C *= 0"})
    EXPECT_EQ(in_run(banned), Rules{"tensor-write"}) << banned;
}

TEST(TritonRules, MatmulOperatorOnlyInKernels) {
  EXPECT_EQ(in_run("x = A @ B.T"), Rules{"matmul-operator"});
  EXPECT_EQ(in_run("x = A\nx @= B"), Rules{"matmul-operator"});
  EXPECT_EQ(in_run("x = P @ Q"), Rules{"matmul-operator"});  // whatever the operands are
  EXPECT_EQ(rules("@triton.jit\ndef k2(a, b):\n    x = tl.load(a)\n    y = x @ x\n    z = x.to(tl.float32).sum()\n"
                  "    tl.store(b, z.exp())\ndef run(A, B, C):\n    k2[(1,)](A, B)",
                  false),
            Rules{});
}

TEST(TritonRules, ClassesAndAsync) {
  EXPECT_EQ(rules("class Cache:\n    pass"), Rules{"class"});
  EXPECT_EQ(rules("async def helper():\n    pass"), Rules{"async"});
  EXPECT_EQ(rules("def helper():\n    return (x async for x in y)"), Rules{"async"});
}

TEST(TritonRules, TestCodeUnderMainIsCheckedAndSaysSo) {
  TritonReport r = report_of(std::string(kHeader) +
                             "def run(A, B, C):\n    k[(1,)](A)\n"
                             "if __name__ == '__main__':\n    x = torch.randn(4, 4)\n"
                             "    print(x @ x)\n");
  EXPECT_EQ(rules_of(r), (Rules{"torch-compute", "matmul-operator"}));
  for (const auto& f : r.findings) EXPECT_TRUE(contains(f.reason, "leave it out")) << f.reason;
}

// ---------------------------------------------------------------------------------------------
// The fixture suites: what the compile stage decides is decided without a GPU.
// ---------------------------------------------------------------------------------------------

TEST(TritonFixtures, SuitesLoadAsTritonWithPythonComments) {
  for (const char* file : {"suite.json", "mha_fwd_suite.json"}) {
    CandidateSuite s = load_suite(fixtures() / file);
    ASSERT_FALSE(s.cases.empty()) << file;
    for (const auto& c : s.cases) {
      EXPECT_EQ(c.language, CandidateLanguage::triton) << c.name;
      if (contains(c.origin, " edit")) {
        EXPECT_EQ(c.source.rfind("# ptxbench suite case " + c.name, 0), 0u) << c.name;
      }
    }
  }
}

TEST(TritonFixtures, StaticVerdictsMatchTheSuites) {
  int decided = 0;
  for (const char* file : {"suite.json", "mha_fwd_suite.json"}) {
    CandidateSuite s = load_suite(fixtures() / file);
    fs::path def_file = fs::path(PTXBENCH_SOURCE_DIR) / "definitions" / (s.definition + ".json");
    Definition def = parse_definition(read_file(def_file), def_file.string());
    TritonCheckOptions o;
    o.sandbox = Enforcement::off;
    o.expected_args = static_cast<int>(def.inputs.size() + def.outputs.size());
    TritonChecker c(o);
    for (const auto& sc : s.cases) {
      CompileResult r = c.check(sc.source);
      SCOPED_TRACE(std::string(file) + ": " + sc.name + ": " + r.message);
      switch (sc.expect.status) {
        case Status::COMPILE_ERROR: EXPECT_EQ(r.status, CompileStatus::compile_error); ++decided; break;
        case Status::BANNED_API: EXPECT_EQ(r.status, CompileStatus::banned_api); ++decided; break;
        case Status::ABI_ERROR: EXPECT_EQ(r.status, CompileStatus::abi_error); ++decided; break;
        default: EXPECT_EQ(r.status, CompileStatus::ok); break;  // decided on the GPU
      }
      if (r.status != CompileStatus::ok && !sc.expect.message_contains.empty()) {
        EXPECT_TRUE(contains(r.message, sc.expect.message_contains));
      }
    }
  }
  EXPECT_GE(decided, 10);
}

TEST(TritonFixtures, FilesOutsideTheSuitesCheckAsTheirHeadersSay) {
  // Each fixture file runs alone through `ptxbench compile FILE.py`.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fixtures()))
    if (e.path().extension() == ".py") files.push_back(e.path());
  ASSERT_GE(files.size(), 7u);
  for (const auto& p : files) {
    std::string text = read_file(p);
    CompileResult r = checker().check(text);
    std::string first_line = text.substr(0, text.find('\n'));
    SCOPED_TRACE(p.filename().string() + ": " + r.message);
    CompileStatus want = contains(first_line, "BANNED_API") ? CompileStatus::banned_api
                         : contains(first_line, "ABI_ERROR")  ? CompileStatus::abi_error
                                                              : CompileStatus::ok;
    EXPECT_EQ(r.status, want);
  }
}

TEST(TritonLanguage, ByExtensionOrByName) {
  EXPECT_EQ(language_of_path("x/kernel.py"), CandidateLanguage::triton);
  EXPECT_EQ(language_of_path("kernel.cu"), CandidateLanguage::cuda);
  EXPECT_EQ(language_of_path("kernel"), CandidateLanguage::cuda);
  EXPECT_EQ(parse_candidate_language("triton"), CandidateLanguage::triton);
  EXPECT_EQ(to_string(CandidateLanguage::cuda), "cuda");
  try {
    (void)parse_candidate_language("ptx");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "cuda")) << e.what();
  }
  // Probed, not required: the static checks never need Triton.
  (void)installed_triton_version(checker().options().python);
}
