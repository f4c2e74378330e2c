"""ptxbench's static checker for Triton candidates (docs/triton.md, "The rules").

It parses one candidate file with `ast` and never imports or runs it. ptxbench runs it isolated
(`python3 -I -S -B triton_check.py [--nargs N] FILE`: no site-packages, in the compile sandbox) and
reads the one JSON object it prints on stdout:

  {"checker": ..., "version": 1, "python": "3.11.7", "ok": bool, "reason": str,
   "entry": {"name": "run", "params": [...], "varargs": bool, "line": int} | null,
   "kernels": [names of @triton.jit functions], "launches": [kernels launched as kernel[grid](...)],
   "imports": [modules], "findings": [{rule, kind, line, col, text, reason}], "truncated": int}

Each finding's kind decides the compile status (src/compile/triton_check.cpp): "syntax" ->
COMPILE_ERROR, "banned" -> BANNED_API, "abi" -> ABI_ERROR (banned wins over abi). Exit status 0
whenever a report was printed, 2 for a usage error. Standard library only.

The rules are the early, precise message, not the whole defence: what a candidate does at run
time is policed again on the GPU host (the runner's sandbox and its list of the kernels that ran).
"""

import ast
import json
import sys

CHECKER = "ptxbench-triton-check"
VERSION = 1
MAX_FINDINGS = 100
MAX_DEPTH = 1000  # AST nesting; real kernels stay under ~40
TEXT_LIMIT = 120

# ---------------------------------------------------------------------------------------------
# The rules: id -> (kind, reason shown to the model).
# ---------------------------------------------------------------------------------------------

SETUP_NOTE = ("in host code torch may only allocate (torch.empty, torch.empty_like, torch.empty_strided) and "
              "describe tensors (shape, stride, dtype, device, data_ptr, views such as .T or .view); every "
              "computation and data copy happens in your @triton.jit kernels")

RULES = {
    "syntax": ("syntax", "the file is not valid Python"),
    "too-deep": ("syntax", "the file nests expressions or statements too deeply to check"),
    "entry": ("abi", "the file must define `def run(*inputs, *outputs)` at top level: the runner calls it with the "
                     "definition's input tensors, then its output tensors"),
    "kernel": ("abi", "a Triton candidate defines at least one @triton.jit kernel"),
    "launch": ("abi", "run must launch a @triton.jit kernel (`kernel[grid](...)`); no kernel of this file is launched"),
    "import": ("banned", "imports are limited to torch, triton, triton.language, "
                         "triton.tools.tensor_descriptor, math, typing, functools, itertools and __future__"),
    "builtin": ("banned", "eval, exec, compile, open, globals, locals, vars, setattr, delattr, breakpoint, exit and "
                          "quit (and names that shadow them) are not allowed in a candidate"),
    "getattr": ("banned", "getattr/hasattr take an object and a literal attribute name; computed names are not "
                          "allowed"),
    "dunder": ("banned", "double-underscore names and attributes (__class__, __subclasses__, __globals__, "
                         "__builtins__, __dict__, ...) reach the interpreter's internals and are not allowed"),
    "private": ("banned", "private (underscore) members of torch and triton are not allowed"),
    "module-value": ("banned", "modules may only be used as `module.name`: passing a module around, storing it in "
                               "another name or rebinding an imported name hides what is called"),
    "module-write": ("banned", "assigning attributes of torch or triton changes the libraries for everyone"),
    "module-escape": ("banned", "os, sys, builtins, subprocess, importlib, ctypes, the Triton runtime, compiler and "
                                "driver, and torch's operator registries are out of bounds for a candidate"),
    "torch-compute": ("banned", SETUP_NOTE),
    "torch-escape": ("banned", "torch.ops, torch.compile, torch.library, torch.utils, torch.jit, torch.backends, "
                               "torch.load/save and the like run code that is not your Triton kernels (or change "
                               "global settings)"),
    "torch-cuda": ("banned", "from torch.cuda only current_stream, current_device, get_device_properties, "
                             "get_device_capability and synchronize are allowed: run launches on the current "
                             "stream of the current device"),
    "triton-escape": ("banned", "a candidate uses triton.jit, autotune, heuristics, Config, cdiv, next_power_of_2, "
                                "set_allocator, triton.language and triton.tools.tensor_descriptor; the runtime, "
                                "compiler, driver, knobs and testing modules belong to the evaluator"),
    "tensor-compute": ("banned", SETUP_NOTE),
    "tensor-write": ("banned", "writing into a tensor from host code (indexed assignment, .data =, in-place "
                               "operators) runs a torch kernel; outputs are written by your Triton kernels"),
    "matmul-operator": ("banned", "the @ operator in host code is a torch matrix multiply; use tl.dot in a kernel"),
    "class": ("banned", "class definitions are not allowed in a candidate (use functions): methods such as "
                        "__del__ or __getattr__ run code outside the call"),
    "async": ("banned", "async code is not allowed in a candidate"),
}

# ---------------------------------------------------------------------------------------------
# Allow and deny lists.
# ---------------------------------------------------------------------------------------------

# Modules that may be imported (and their submodules, for triton.language).
ALLOWED_MODULES = {"torch", "triton", "triton.language", "triton.tools.tensor_descriptor", "math", "typing",
                   "functools", "itertools", "__future__"}
ALLOWED_MODULE_PREFIXES = ("triton.language.",)
# Paths that name modules or namespaces: an expression that evaluates to one is a module value.
MODULE_PATHS = {"torch", "torch.cuda", "triton", "triton.language", "triton.tools", "triton.tools.tensor_descriptor",
                "math", "typing", "functools", "itertools"}
# Modules whose public members are all fine, less these (they evaluate strings as code).
OPEN_MODULES = {"math", "typing", "functools", "itertools", "__future__"}
OPEN_MODULE_DENIED = {"typing.get_type_hints", "typing.ForwardRef", "typing.evaluate_forward_ref"}

# torch members allowed in host code; a path is allowed when one of these is a prefix of it
# (torch.bfloat16.itemsize). What follows a leaf is still checked as an attribute (torch.Tensor.matmul).
TORCH_DTYPES = ["bfloat16", "float16", "half", "float32", "float", "float64", "double", "int8", "uint8", "int16",
                "short", "int32", "int", "int64", "long", "uint16", "uint32", "uint64", "bool", "float8_e4m3fn",
                "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
TORCH_ALLOWED = {"torch." + n for n in TORCH_DTYPES} | {
    "torch.empty", "torch.empty_like", "torch.empty_strided",
    "torch.dtype", "torch.device", "torch.Size", "torch.Tensor", "torch.finfo", "torch.iinfo", "torch.is_tensor",
    "torch.no_grad", "torch.inference_mode",
    "torch.cuda.current_stream", "torch.cuda.current_device", "torch.cuda.get_device_properties",
    "torch.cuda.get_device_capability", "torch.cuda.synchronize",
}
TORCH_ALLOC = {"torch.empty", "torch.empty_like", "torch.empty_strided"}
TORCH_ESCAPES = {"ops", "compile", "library", "utils", "jit", "_C", "_dynamo", "_inductor", "backends", "classes",
                 "hub", "load", "save", "autograd", "distributed", "multiprocessing", "profiler", "fx", "export",
                 "cpp_extension", "overrides", "package", "set_default_device", "set_default_dtype",
                 "use_deterministic_algorithms", "set_float32_matmul_precision", "manual_seed", "random"}

TRITON_ALLOWED = {"triton.jit", "triton.autotune", "triton.heuristics", "triton.Config", "triton.cdiv",
                  "triton.next_power_of_2", "triton.set_allocator", "triton.language",
                  "triton.tools.tensor_descriptor"}
TRITON_NAMESPACES = {"triton", "triton.tools"}

# Attribute names that lead out of any object or module into the interpreter or the libraries' guts.
ESCAPE_NAMES = {"os", "sys", "builtins", "subprocess", "importlib", "ctypes", "runtime", "compiler", "backends",
                "driver", "knobs", "inspect", "gc", "ops", "library", "pickle", "marshal", "threading",
                "multiprocessing", "socket", "signal", "shutil"}

BANNED_BUILTINS = {"eval", "exec", "compile", "open", "breakpoint", "globals", "locals", "vars", "setattr",
                   "delattr", "exit", "quit"}
ATTR_BUILTINS = {"getattr", "hasattr"}  # allowed only as direct calls with a literal name
# Builtins that compute with, convert or print a tensor passed to them.
TENSOR_BUILTINS = {"sum", "max", "min", "abs", "pow", "round", "float", "int", "bool", "complex", "divmod", "any",
                   "all", "sorted", "list", "tuple", "print", "str", "repr", "format"}

# What host code may touch on a tensor it knows (run's parameters and what derives from them).
TENSOR_SETUP = {"shape", "stride", "size", "dtype", "device", "data_ptr", "is_contiguous", "numel", "nelement",
                "dim", "ndim", "ndimension", "element_size", "itemsize", "nbytes", "is_cuda", "storage_offset",
                "layout", "requires_grad", "is_floating_point", "get_device", "T", "mT", "t", "view", "view_as",
                "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "unsqueeze", "squeeze",
                "expand", "expand_as", "narrow", "select", "as_strided", "unflatten", "flatten", "reshape",
                "reshape_as", "contiguous", "split", "chunk", "unbind", "tensor_split", "diagonal", "detach",
                "data", "new_empty", "new_empty_strided"}
TENSOR_VIEW_ATTRS = {"T", "mT", "data"}
TENSOR_VIEW_METHODS = {"t", "view", "view_as", "transpose", "swapaxes", "swapdims", "permute", "movedim",
                       "moveaxis", "unsqueeze", "squeeze", "expand", "expand_as", "narrow", "select", "as_strided",
                       "unflatten", "flatten", "reshape", "reshape_as", "contiguous", "diagonal", "detach",
                       "new_empty", "new_empty_strided", "split", "chunk", "unbind", "tensor_split"}
# Tensor methods that compute or copy, banned on any object in host code (the receiver's type is
# unknown statically). Names that Python's own types also have (add, sort, copy, index, count,
# split, type, ...) and max/min (torch.finfo(...).max) are left out here; on a known tensor they
# fail TENSOR_SETUP instead.
TENSOR_COMPUTE = set("""
abs absolute acos acosh add_ addbmm addcdiv addcmul addmm addmv addr all allclose amax amin aminmax angle any
apply_ arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort argwhere asin asinh atan atan2
atanh backward baddbmm bernoulli bfloat16 bincount bitwise_and bitwise_left_shift bitwise_not bitwise_or
bitwise_right_shift bitwise_xor bmm bool byte cauchy_ ceil char cholesky cholesky_inverse cholesky_solve clamp
clamp_max clamp_min clip clone copy_ copysign cos cosh count_nonzero cov cpu cross cuda cummax cummin cumprod
cumsum deg2rad det diag diag_embed diagflat diff digamma dist div div_ divide dot double eq equal erf erfc erfinv
exp exp2 expm1 exponential_ fill_ fill_diagonal_ fix flip fliplr flipud float float_power floor floor_divide fmax
fmin fmod frac frexp gather gcd ge geometric_ ger greater greater_equal gt half hardshrink heaviside histc
histogram hypot i0 igamma igammac index_add index_copy index_fill index_put index_reduce index_select inner int
int_repr inverse isclose isfinite isinf isnan isneginf isposinf isreal item kron kthvalue lcm ldexp le lerp less
less_equal lgamma log log10 log1p log2 log_normal_ log_softmax logaddexp logaddexp2 logcumsumexp logdet
logical_and logical_not logical_or logical_xor logit logsumexp long lt lu lu_solve map_ masked_fill
masked_scatter masked_select matmul matrix_exp matrix_power maximum mean median minimum mm mode msort mul
mul_ multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow_copy ne neg negative
new_full new_ones new_tensor new_zeros nextafter nonzero norm normal_ not_equal numpy orgqr ormqr outer
pin_memory pinverse polygamma positive pow prod put put_ qr quantile rad2deg random_ ravel reciprocal relu
remainder renorm repeat repeat_interleave requires_grad_ resize_ resize_as_ retain_grad roll rot90 round rsqrt
scatter scatter_add scatter_reduce set_ sgn share_memory_ short sigmoid sign signbit sin sinc sinh slogdet
softmax sqrt square std storage sub sub_ subtract sum sum_to_size svd take take_along_dim tan tanh tile to
to_dense to_sparse tolist topk trace tril triu true_divide trunc type_as unique unique_consecutive
untyped_storage var vdot where xlogy zero_ record_stream register_hook
""".split())


BINDER_TYPES = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.comprehension, ast.Call)


def is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def compute_name(attr):
    """Whether `attr` is a tensor method that computes (in-place `exp_` too)."""
    return attr in TENSOR_COMPUTE or (attr.endswith("_") and attr[:-1] in TENSOR_COMPUTE)


def module_allowed(path):
    return path in ALLOWED_MODULES or path.startswith(ALLOWED_MODULE_PREFIXES)


def path_problem(path):
    """The rule a dotted module path breaks, or None. Dunder parts are reported by the caller."""
    parts = path.split(".")
    root, rest = parts[0], parts[1:]
    if any(p in ESCAPE_NAMES for p in rest):
        if root == "torch" and rest[0] in TORCH_ESCAPES:
            return "torch-escape"
        return "triton-escape" if root == "triton" else "module-escape"
    if any(p.startswith("_") and not is_dunder(p) for p in rest):
        if root == "torch" and rest[0] in TORCH_ESCAPES:
            return "torch-escape"
        return "triton-escape" if root == "triton" else "private"
    if root == "torch":
        if path in ("torch", "torch.cuda") or any(path == a or path.startswith(a + ".") for a in TORCH_ALLOWED):
            return None
        if rest[0] == "cuda":
            return "torch-cuda"
        if rest[0] in TORCH_ESCAPES:
            return "torch-escape"
        return "torch-compute"
    if root == "triton":
        if path in TRITON_NAMESPACES or any(path == a or path.startswith(a + ".") for a in TRITON_ALLOWED):
            return None
        return "triton-escape"
    if root in OPEN_MODULES:
        return "module-escape" if any(path == d or path.startswith(d + ".") for d in OPEN_MODULE_DENIED) else None
    return "import"  # a module that may not be imported (its import is reported too)


# ---------------------------------------------------------------------------------------------
# The analysis.
# ---------------------------------------------------------------------------------------------


class Scope:
    """A function's (or the module's) names that hold tensors, for the host-code tensor rules."""

    def __init__(self, parent):
        self.parent = parent
        self.tensors = set()
        self.locals = set()  # parameters and assigned names: they hide the enclosing scopes' names

    def has(self, name):
        s = self
        while s is not None:
            if name in s.tensors:
                return True
            if name in s.locals:
                return False
            s = s.parent
        return False


def unwind(node):
    """An attribute chain a.b.c as (base expression, [(receiver, attr, node)...] innermost first)."""
    links = []
    while isinstance(node, ast.Attribute):
        links.append((node.value, node.attr, node))
        node = node.value
    links.reverse()
    return node, links


def literal_str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class Checker:
    def __init__(self, source_text, nargs):
        self.lines = source_text.split("\n")
        self.binders = []          # (node, scope) of the nodes that can bind tensors to names
        self.nargs = nargs
        self.findings = []
        self.aliases = {}          # local name -> dotted path (torch, triton.language, triton.jit, ...)
        self.module_names = set()  # local names bound to modules
        self.imports = []
        self.kernels = []          # names of @triton.jit functions
        self.kernel_nodes = set()
        self.launches = []
        self.functions = {}        # name -> FunctionDef (host helpers, for tensor parameters)
        self.scopes = {}           # id(function node) -> Scope
        self.module_scope = Scope(None)
        self.in_kernel = False
        self.in_main = False
        self.scope = self.module_scope

    # -- reporting -------------------------------------------------------------------------------

    def segment(self, node):
        """The node's text, on one line, cut at TEXT_LIMIT (ast offsets count UTF-8 bytes)."""
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if not first or first > len(self.lines):
            return ""
        if hasattr(node, "body") and not isinstance(node, ast.Lambda):
            last = first  # a def, class or block: its first line says which
        last = min(last or first, len(self.lines), first + 4)
        pieces = []
        for n in range(first, last + 1):
            b = self.lines[n - 1].encode("utf-8")
            if n == getattr(node, "end_lineno", None):
                b = b[:node.end_col_offset]
            if n == first:
                b = b[node.col_offset:]
            pieces.append(b.decode("utf-8", errors="replace"))
        return " ".join(" ".join(pieces).split())[:TEXT_LIMIT]

    def report(self, rule, node, detail=None):
        kind, reason = RULES[rule]
        text = self.segment(node)
        if detail and detail != text:
            reason = detail + ": " + reason
        if self.in_main:
            reason += (" (this is test code under `if __name__ == \"__main__\":`; it is checked like the rest: "
                       "leave it out)")
        line = getattr(node, "lineno", 0) or 0
        col = (getattr(node, "col_offset", 0) or 0) + 1
        self.findings.append({"rule": rule, "kind": kind, "line": line, "col": col, "text": text, "reason": reason})

    # -- pass 1: imports, functions, kernels ------------------------------------------------------

    def bind_import(self, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                self.imports.append(a.name)
                if not module_allowed(a.name):
                    self.report("import", node, "import of " + a.name)
                local = a.asname or a.name.split(".")[0]
                self.aliases[local] = a.name if a.asname else local
                self.module_names.add(local)
        else:
            module = node.module or ""
            if node.level:
                self.report("import", node, "relative import")
                return
            self.imports.append(module)
            if not module_allowed(module):
                self.report("import", node, "import from " + module)
                bad_module = True
            else:
                bad_module = False
            for a in node.names:
                if a.name == "*":
                    self.report("import", node, "`from " + module + " import *` hides which names are used")
                    continue
                path = module + "." + a.name
                local = a.asname or a.name
                self.aliases[local] = path
                if path in MODULE_PATHS:
                    self.module_names.add(local)
                if bad_module:
                    continue
                if is_dunder(a.name):
                    self.report("dunder", node, "import of " + path)
                    continue
                rule = path_problem(path)
                if rule:
                    self.report(rule, node, "import of " + path)

    def resolve(self, node):
        """The dotted path of a Name/Attribute chain rooted at an imported name, or None."""
        base, links = unwind(node)
        if not isinstance(base, ast.Name) or base.id not in self.aliases:
            return None
        return ".".join([self.aliases[base.id]] + [a for _, a, _ in links])

    def is_jit(self, decorator):
        d = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.resolve(d) == "triton.jit"

    def index(self, tree):
        """One walk over the tree, without recursion: its depth, the imports and functions, the
        scopes with their local names, and the nodes that can bind tensors. False when the tree is
        nested deeper than MAX_DEPTH (then nothing else is checked)."""
        imports, defs = [], []
        stack = [(tree, self.module_scope, 1)]
        while stack:
            node, scope, depth = stack.pop()
            if depth > MAX_DEPTH:
                return False
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.append(node)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                scope.locals.add(node.id)
            if isinstance(node, BINDER_TYPES):
                self.binders.append((node, scope))
            for child in ast.iter_child_nodes(node):
                inner = scope
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    inner = Scope(scope)
                    a = child.args
                    inner.locals.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
                                        if x is not None)
                    self.scopes[id(child)] = inner
                stack.append((child, inner, depth + 1))
        position = lambda n: (n.lineno, n.col_offset)  # noqa: E731
        for node in sorted(imports, key=position):
            self.bind_import(node)
        for node in sorted(defs, key=position):
            if any(self.is_jit(d) for d in node.decorator_list):
                self.kernels.append(node.name)
                self.kernel_nodes.add(id(node))
                # A kernel named like the evaluator's own launches or a library's mangled C++
                # symbol would hide among kernels that are not the candidate's (the GPU side
                # refuses it too: triton_build.cpp, suspicious_triton_kernel_name).
                if node.name.startswith(("ptxb_internal_", "_Z")):
                    self.report("kernel", node, "the kernel name '" + node.name + "' is reserved "
                                "(ptxb_internal_ is the evaluator's prefix, _Z a mangled C++ symbol's); rename it")
            else:
                self.functions.setdefault(node.name, node)
        self.binders.reverse()  # source order, roughly: fewer rounds to the fixpoint
        return True

    # -- pass 2: which names hold tensors (flow-insensitive, to a fixpoint) -----------------------

    def is_tensor(self, node, scope):
        if isinstance(node, ast.Name):
            return scope.has(node.id)
        if isinstance(node, ast.Attribute):
            return node.attr in TENSOR_VIEW_ATTRS and self.is_tensor(node.value, scope)
        if isinstance(node, ast.Subscript):
            return self.is_tensor(node.value, scope)
        if isinstance(node, ast.Starred):
            return self.is_tensor(node.value, scope)
        if isinstance(node, ast.IfExp):
            return self.is_tensor(node.body, scope) or self.is_tensor(node.orelse, scope)
        if isinstance(node, ast.Call):
            f = node.func
            if self.resolve(f) in TORCH_ALLOC:
                return True
            if isinstance(f, ast.Attribute) and f.attr in TENSOR_VIEW_METHODS:
                return self.is_tensor(f.value, scope)
        return False

    def bind_target(self, target, value, scope):
        """Marks names in `target` that receive tensors from `value`; True when something changed."""
        changed = False
        if isinstance(target, ast.Name):
            if value is not None and self.is_tensor(value, scope) and target.id not in scope.tensors:
                scope.tensors.add(target.id)
                changed = True
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    changed |= self.bind_target(t, v, scope)
            elif value is not None and self.is_tensor(value, scope):
                for t in target.elts:
                    changed |= self.bind_target(t, value, scope)
        elif isinstance(target, ast.Starred):
            changed |= self.bind_target(target.value, value, scope)
        return changed

    def iterated(self, iterable, scope):
        """An element of `iterable` when it is a tensor, else None (for loop and comprehension targets)."""
        if isinstance(iterable, (ast.Tuple, ast.List)):
            for e in iterable.elts:
                if self.is_tensor(e, scope):
                    return e
            return None
        return iterable if self.is_tensor(iterable, scope) else None

    def taint_node(self, node, scope):
        changed = False
        if isinstance(node, ast.Assign):
            for t in node.targets:
                changed |= self.bind_target(t, node.value, scope)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            changed |= self.bind_target(node.target, node.value, scope)
        elif isinstance(node, (ast.For, ast.comprehension)):
            changed |= self.bind_target(node.target, self.iterated(node.iter, scope), scope)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
            callee = self.functions[node.func.id]
            callee_scope = self.scopes.get(id(callee))
            if callee_scope is not None:
                params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
                for i, arg in enumerate(node.args):
                    if isinstance(arg, ast.Starred):
                        break
                    if i < len(params) and self.is_tensor(arg, scope) and params[i] not in callee_scope.tensors:
                        callee_scope.tensors.add(params[i])
                        changed = True
                names = {a.arg for a in callee.args.posonlyargs + callee.args.args + callee.args.kwonlyargs}
                for kw in node.keywords:
                    if kw.arg in names and self.is_tensor(kw.value, scope) and kw.arg not in callee_scope.tensors:
                        callee_scope.tensors.add(kw.arg)
                        changed = True
        return changed

    def taint(self, tree):
        runs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "run"]
        for run in runs:
            a = run.args
            self.scopes[id(run)].tensors.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
            if a.vararg:
                self.scopes[id(run)].tensors.add(a.vararg.arg)
        for _ in range(20):
            changed = False
            for node, scope in self.binders:
                changed |= self.taint_node(node, scope)
            if not changed:
                break

    # -- pass 3: the rules -------------------------------------------------------------------------

    def visit(self, node):
        if node is None:
            return
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is not None:
            method(node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node):
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def visit_all(self, nodes):
        for n in nodes:
            self.visit(n)

    def visit_Import(self, node):
        pass  # judged in pass 1

    visit_ImportFrom = visit_Import

    def check_binding(self, name, node):
        """A name being bound (assigned, a parameter, a def, a global)."""
        if is_dunder(name):
            self.report("dunder", node, "binding " + name)
        elif name in BANNED_BUILTINS or name in ATTR_BUILTINS:
            self.report("builtin", node, "the name " + name + " shadows a builtin the checker judges")
        elif name in self.module_names and not isinstance(node, (ast.Import, ast.ImportFrom)):
            self.report("module-value", node, "rebinding the imported name " + name)

    def visit_function(self, node):
        self.check_binding(node.name, node)
        self.visit_all(node.decorator_list)
        args = node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None:
                self.check_binding(a.arg, a)
                self.visit(a.annotation)
        self.visit_all(args.defaults)
        self.visit_all([d for d in args.kw_defaults if d is not None])
        self.visit(node.returns)
        saved = (self.in_kernel, self.scope)
        self.in_kernel = self.in_kernel or id(node) in self.kernel_nodes
        self.scope = self.scopes.get(id(node), self.scope)
        self.visit_all(node.body)
        self.in_kernel, self.scope = saved

    def visit_FunctionDef(self, node):
        self.visit_function(node)

    def visit_AsyncFunctionDef(self, node):
        self.report("async", node, "async def " + node.name)
        self.visit_function(node)

    def visit_Lambda(self, node):
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs + [node.args.vararg, node.args.kwarg]:
            if a is not None:
                self.check_binding(a.arg, a)
        self.visit_all(node.args.defaults)
        self.visit_all([d for d in node.args.kw_defaults if d is not None])
        saved = self.scope
        self.scope = self.scopes.get(id(node), self.scope)
        self.visit(node.body)
        self.scope = saved

    def visit_ClassDef(self, node):
        self.report("class", node, "class " + node.name)
        self.generic_visit(node)

    def visit_Await(self, node):
        self.report("async", node)
        self.generic_visit(node)

    def visit_AsyncFor(self, node):
        self.report("async", node)
        self.generic_visit(node)

    visit_AsyncWith = visit_AsyncFor

    def visit_comprehension(self, node):
        if node.is_async:
            self.report("async", node.iter)
        self.generic_visit(node)

    def visit_Global(self, node):
        for n in node.names:
            if is_dunder(n) or n in BANNED_BUILTINS or n in ATTR_BUILTINS:
                self.check_binding(n, node)

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node):
        if node.name:
            self.check_binding(node.name, node)
        self.generic_visit(node)

    def visit_If(self, node):
        t = node.test
        main = (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"
                and len(t.comparators) == 1 and literal_str(t.comparators[0]) == "__main__")
        self.visit(node.test)
        saved = self.in_main
        self.in_main = self.in_main or main
        self.visit_all(node.body)
        self.in_main = saved
        self.visit_all(node.orelse)

    def visit_Name(self, node):
        name = node.id
        if not isinstance(node.ctx, ast.Load):
            self.check_binding(name, node)
            return
        if is_dunder(name) and name != "__name__":
            self.report("dunder", node, name)
        elif name in BANNED_BUILTINS:
            self.report("builtin", node, name)
        elif name in ATTR_BUILTINS:
            self.report("getattr", node, name + " used other than as a direct call")
        elif name in self.module_names and path_problem(self.aliases.get(name, name)) != "import":
            self.report("module-value", node, "the module " + name + " used as a value")

    def check_link(self, receiver, attr, node, known_tensor):
        """One `receiver.attr` of a chain that is not rooted at an imported module."""
        if is_dunder(attr):
            self.report("dunder", node, "." + attr)
            return
        if attr in ESCAPE_NAMES:
            self.report("module-escape", node, "." + attr)
            return
        if self.in_kernel:
            return
        if known_tensor:
            if attr not in TENSOR_SETUP:
                self.report("tensor-compute", node, "." + attr + " on a tensor")
            elif not isinstance(node.ctx, ast.Load):
                self.report("tensor-write", node, "assigning ." + attr + " of a tensor")
        elif compute_name(attr):
            self.report("tensor-compute", node, "." + attr)

    def leaf_length(self, parts):
        """How many leading parts of a path make an allowed torch/triton leaf, or 0."""
        for i in range(1, len(parts) + 1):
            p = ".".join(parts[:i])
            if p in TORCH_ALLOWED or p in TRITON_ALLOWED:
                return i
        return 0

    def check_module_chain(self, node, base, links):
        """A chain rooted at an imported name: torch.cuda.current_stream, tl.dot, TensorDescriptor.from_tensor."""
        root = self.aliases[base.id]
        attrs = [a for _, a, _ in links]
        for a in attrs:
            if is_dunder(a):
                self.report("dunder", node, "." + a)
                return
        if path_problem(root) == "import":
            return  # a module that may not be imported: its import is the finding
        parts = root.split(".") + attrs
        path = ".".join(parts)
        leaf = self.leaf_length(parts)
        rule = path_problem(".".join(parts[:leaf]) if leaf else path)
        if rule:
            self.report(rule, node, path)
            return
        after = parts[leaf:] if leaf else []
        for a in after:
            if a in ESCAPE_NAMES:
                self.report("module-escape", node, path)
                return
            if a.startswith("_"):
                self.report("private", node, path)
                return
            # What follows a torch leaf is an attribute of that object (torch.Tensor.matmul).
            if parts[0] == "torch" and not self.in_kernel and compute_name(a):
                self.report("tensor-compute", node, path)
                return
        if not isinstance(node.ctx, ast.Load):
            self.report("module-write", node, path)
        elif path in MODULE_PATHS:
            # The outermost expression of a chain: the module object itself is the value.
            self.report("module-value", node, "the module " + path + " used as a value")

    def visit_Attribute(self, node):
        base, links = unwind(node)
        if isinstance(base, ast.Name) and base.id in self.aliases:
            self.check_module_chain(node, base, links)
            return
        self.visit(base)
        known = self.is_tensor(base, self.scope) if not self.in_kernel else False
        for receiver, attr, link in links:
            self.check_link(receiver, attr, link, known)
            known = known and attr in TENSOR_VIEW_ATTRS

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id in ATTR_BUILTINS:
            name = literal_str(node.args[1]) if len(node.args) >= 2 else None
            if name is None or node.keywords or len(node.args) > 3:
                self.report("getattr", node, f.id + " with a computed name")
                self.visit_all(node.args)
                return
            target = node.args[0]
            synthetic = ast.Attribute(value=target, attr=name, ctx=ast.Load())
            ast.copy_location(synthetic, node)
            synthetic.end_lineno, synthetic.end_col_offset = node.end_lineno, node.end_col_offset
            self.visit(synthetic)
            self.visit_all(node.args[2:])
            return
        if isinstance(f, ast.Name) and f.id == "type" and len(node.args) == 3:
            self.report("builtin", node, "type() with three arguments creates a class")
        if not self.in_kernel:
            path = self.resolve(f)
            tensor_args = [a for a in node.args if self.is_tensor(a, self.scope)] + [
                k.value for k in node.keywords if self.is_tensor(k.value, self.scope)]
            if tensor_args:
                if isinstance(f, ast.Name) and f.id in TENSOR_BUILTINS and f.id not in self.aliases:
                    self.report("tensor-compute", node, f.id + "() of a tensor")
                elif path and path.startswith("math."):
                    self.report("tensor-compute", node, path + "() of a tensor")
        self.visit(f)
        self.visit_all(node.args)
        self.visit_all(node.keywords)

    def visit_Subscript(self, node):
        if not self.in_kernel:
            if isinstance(node.value, ast.Name) and node.value.id in self.kernels:
                self.launches.append(node.value.id)
            if not isinstance(node.ctx, ast.Load) and self.is_tensor(node.value, self.scope):
                self.report("tensor-write", node, "indexed assignment into a tensor")
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if not self.in_kernel:
            if isinstance(node.op, ast.MatMult):
                self.report("matmul-operator", node)
            elif self.is_tensor(node.left, self.scope) or self.is_tensor(node.right, self.scope):
                self.report("tensor-compute", node, "arithmetic on a tensor")
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if not self.in_kernel and self.is_tensor(node.operand, self.scope):
            self.report("tensor-compute", node, "arithmetic on a tensor")
        self.generic_visit(node)

    def visit_Compare(self, node):
        if not self.in_kernel:
            operands = [node.left] + node.comparators
            for op, (a, b) in zip(node.ops, zip(operands, operands[1:])):
                if isinstance(op, (ast.Is, ast.IsNot)):
                    continue
                if self.is_tensor(a, self.scope) or self.is_tensor(b, self.scope):
                    self.report("tensor-compute", node, "comparison of a tensor")
                    break
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if not self.in_kernel:
            if isinstance(node.op, ast.MatMult):
                self.report("matmul-operator", node)
            elif self.is_tensor(node.target, self.scope):
                self.report("tensor-write", node, "in-place arithmetic on a tensor")
        self.generic_visit(node)

    def visit_FormattedValue(self, node):
        if not self.in_kernel and self.is_tensor(node.value, self.scope):
            self.report("tensor-compute", node, "formatting a tensor")
        self.generic_visit(node)

    # -- the entry point ---------------------------------------------------------------------------

    def check_entry(self, tree):
        runs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "run"]
        others = []
        for n in tree.body:
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    for sub in ast.walk(t):
                        if isinstance(sub, ast.Name) and sub.id == "run":
                            others.append(n)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                if any((a.asname or a.name.split(".")[0]) == "run" for a in n.names):
                    others.append(n)
        if not runs:
            hosts = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and id(n) not in self.kernel_nodes]
            detail = "no top-level `def run(...)`"
            if others:
                detail += " (run is assigned, not defined)"
            elif hosts:
                detail += " (the top-level functions are " + ", ".join(n.name for n in hosts) + ")"
            where = others[0] if others else hosts[0] if hosts else tree.body[0] if tree.body else tree
            self.report("entry", where, detail)
            return None
        run = runs[-1]
        entry = {"name": "run", "params": [], "varargs": False, "line": run.lineno}
        if len(runs) > 1 or others:
            self.report("entry", run, "run is defined more than once")
        if isinstance(run, ast.AsyncFunctionDef):
            self.report("entry", run, "run is async")
        if run.decorator_list:
            self.report("entry", run, "run is decorated; the runner calls the plain function")
        if id(run) in self.kernel_nodes:
            return entry
        a = run.args
        positional = a.posonlyargs + a.args
        entry["params"] = [x.arg for x in positional]
        entry["varargs"] = a.vararg is not None
        if entry["varargs"]:
            entry["params"].append("*" + a.vararg.arg)
        required_kw = [k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
        if required_kw:
            self.report("entry", run, "run has keyword-only parameters without defaults (" +
                        ", ".join(required_kw) + "); the runner passes tensors by position only")
        if self.nargs is not None:
            required = len(positional) - len(a.defaults)
            most = None if a.vararg else len(positional)
            if self.nargs < required or (most is not None and self.nargs > most):
                takes = str(len(positional)) + " positional parameters" + (" and *" + a.vararg.arg if a.vararg else "")
                self.report("entry", run, "run takes " + takes + "; this definition passes " + str(self.nargs) +
                            " tensors (inputs, then outputs)")
        return entry

    # -- driver --------------------------------------------------------------------------------------

    def check(self, tree):
        """The entry point's description; None when there is none or the tree is too deep."""
        if not self.index(tree):
            self.findings = [syntax_finding("too-deep", 0, 0, "", "more than %d levels" % MAX_DEPTH)]
            return None
        self.taint(tree)
        entry = self.check_entry(tree)
        self.visit_all(tree.body)
        if not self.kernels:
            self.report("kernel", tree.body[0] if tree.body else tree, "no function is decorated with @triton.jit")
        elif not self.launches:
            node = self.functions.get("run") or tree
            self.report("launch", node)
        return entry


def syntax_finding(rule, line, col, text, detail):
    kind, reason = RULES[rule]
    return {"rule": rule, "kind": kind, "line": line or 0, "col": col or 0, "text": (text or "").strip()[:TEXT_LIMIT],
            "reason": detail + ": " + reason if detail else reason}


def check_source(data, nargs=None):
    """The report for the candidate's bytes."""
    report = {"checker": CHECKER, "version": VERSION, "python": ".".join(str(v) for v in sys.version_info[:3]),
              "ok": False, "reason": "", "entry": None, "kernels": [], "launches": [], "imports": [], "findings": [],
              "truncated": 0}
    text = data.decode("utf-8", errors="replace")
    try:
        tree = ast.parse(data, filename="candidate.py")
    except SyntaxError as e:
        report["findings"].append(syntax_finding("syntax", e.lineno, e.offset, e.text, e.msg))
    except (RecursionError, MemoryError) as e:
        report["findings"].append(syntax_finding("too-deep", 0, 0, "", type(e).__name__))
    except ValueError as e:  # null bytes
        report["findings"].append(syntax_finding("syntax", 0, 0, "", str(e)))
    else:
        checker = Checker(text, nargs)
        try:
            report["entry"] = checker.check(tree)
        except RecursionError:
            checker.findings = [syntax_finding("too-deep", 0, 0, "", "RecursionError")]
        report["kernels"] = checker.kernels
        report["launches"] = sorted(set(checker.launches))
        report["imports"] = checker.imports
        seen = set()
        findings = []
        for f in sorted(checker.findings, key=lambda f: (f["line"], f["col"], f["rule"])):
            key = (f["rule"], f["line"], f["col"])
            if key not in seen:
                seen.add(key)
                findings.append(f)
        report["findings"] = findings
    findings = report["findings"]
    if len(findings) > MAX_FINDINGS:
        report["truncated"] = len(findings) - MAX_FINDINGS
        report["findings"] = findings[:MAX_FINDINGS]
    report["ok"] = not report["findings"]
    if report["findings"]:
        f = report["findings"][0]
        report["reason"] = ("line %d: %s" % (f["line"], f["reason"])) if f["line"] else f["reason"]
    else:
        report["reason"] = "ok"
    return report


def main(argv):
    nargs = None
    args = list(argv[1:])
    if len(args) >= 2 and args[0] == "--nargs":
        try:
            nargs = int(args[1])
        except ValueError:
            nargs = -1
        args = args[2:]
    if len(args) != 1 or (nargs is not None and nargs < 0):
        sys.stderr.write("usage: triton_check.py [--nargs N] FILE\n")
        return 2
    with open(args[0], "rb") as f:
        data = f.read()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 8 * MAX_DEPTH + 1000))
    sys.stdout.write(json.dumps(check_source(data, nargs)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
