#!/usr/bin/env python3
"""A scripted "student" model for the Fixit chain: an OpenAI-compatible endpoint that answers each
turn with a known-wrong kernel, so a real run on the GPU gets real failed verdicts to mine seeds
from (`ptxbench data seeds`) without a model's weights or a network.

The kernels are the fixture suites' own (tests/fixtures/**/*_suite.json): a suite's base kernel
and its broken variants (exact find/replace edits, as `ptxbench suite` applies them). Turn 1 of a
trajectory gets the base kernel with a compile error; turn k > 1 the (k-1)-th variant whose
expected status is not PASSED (cycling). The definition is found by name in the task message.

    scripts/bench/scripted_student.py --port 18080 [--suites DIR]
    # then a run config with "model": {"provider": "openai", "base_url": "http://127.0.0.1:18080/v1",
    #                                   "model": "scripted-student", "api_key_env": ""}
"""

import argparse
import json
import pathlib
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = pathlib.Path(__file__).resolve().parents[2]


def apply_edits(text, edits, where):
    for edit in edits:
        if text.count(edit["find"]) != 1:
            raise SystemExit(f"scripted_student: an edit of {where} does not match exactly once")
        text = text.replace(edit["find"], edit["replace"])
    return text


def load_kernels(suites_dir):
    """definition -> [compile-error kernel, wrong variant, ...] from every suite file."""
    kernels = {}
    for path in sorted(suites_dir.rglob("*_suite.json")) + sorted(suites_dir.rglob("suite.json")):
        suite = json.loads(path.read_text())
        definition = suite.get("definition")
        cases = suite.get("cases", [])
        base = next((c for c in cases if "file" in c and c["expect"]["status"] == "PASSED"), None)
        if not definition or base is None or definition in kernels:
            continue
        source = (path.parent / base["file"]).read_text()
        broken = source + "\nthis line is not C++ (a scripted compile error)\n"
        wrong = [
            apply_edits((path.parent / c["base"]).read_text(), c["edits"], f"{path.name}:{c['name']}")
            for c in cases
            if "base" in c and c["expect"]["status"] not in ("PASSED", "COMPILE_ERROR")
        ]
        kernels[definition] = [broken] + wrong
    return kernels


class Handler(BaseHTTPRequestHandler):
    kernels = {}

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        messages = body.get("messages", [])
        task = next((m["content"] for m in messages if m.get("role") == "user"), "")
        turn = sum(1 for m in messages if m.get("role") == "assistant")  # answers so far
        # The longest definition name in the task: mha_with_lse_d128_causal before mha_with_lse_d128.
        names = sorted((d for d in self.kernels if re.search(r"\b" + re.escape(d) + r"\b", task)), key=len)
        if not names:
            self.reply(400, {"error": {"message": "scripted_student: no known definition in the task"}})
            return
        options = self.kernels[names[-1]]
        kernel = options[0] if turn == 0 or len(options) == 1 else options[1 + (turn - 1) % (len(options) - 1)]
        content = f"A scripted student answer (turn {turn + 1}).\n\n```cuda\n{kernel}```\n"
        self.reply(200, {
            "id": f"scripted-{turn}", "object": "chat.completion", "model": body.get("model", "scripted-student"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": len(kernel) // 4, "total_tokens": 1000 + len(kernel) // 4},
        })

    def reply(self, code, doc):
        data = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--suites", type=pathlib.Path, default=ROOT / "tests" / "fixtures")
    args = ap.parse_args()
    Handler.kernels = load_kernels(args.suites)
    print(f"scripted_student: {len(Handler.kernels)} definitions on port {args.port}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
