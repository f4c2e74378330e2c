#!/usr/bin/env python3
# A scripted stand-in for a teacher model (OpenAI-compatible /v1/chat/completions, not streamed) for
# `ptxbench data notes` where no model endpoint is reachable (the build machine of session 10): it
# answers each repair-note request with a fixed note chosen by the rejected kernel's verdict status
# named in the prompt. The notes it writes are ours, labelled as such in results/h200.md; a real
# teacher replaces it by changing the recipe's teacher.base_url.
#   scripted_teacher.py PORT
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

NOTES = {
    "INCORRECT_NUMERICAL": {
        "what_was_wrong": "The kernel never computed the product: it overwrote C with a constant, so every element differs from the reference.",
        "rule": "Every output element must be the fp32-accumulated dot product of its row of A and its row of B, rounded once to bf16.",
        "fix": "Stage A and B tiles by TMA into swizzled shared memory and accumulate with wgmma over the whole K loop before the epilogue writes C.",
        "example": "for (int kt = 0; kt < K / 64; ++kt) { wait_full(kt); wgmma_m64n256k16(acc, desc_a(kt), desc_b(kt)); commit(); }\nstore_bf16(C, acc);",
    },
    "COMPILE_ERROR": {
        "what_was_wrong": "The kernel used an identifier that was never declared, so nvcc stopped before producing a cubin.",
        "rule": "Declare every index and tile variable in the scope where it is used; compile locally with -arch=sm_90a before submitting.",
        "fix": "Declare the missing loop variable and derive it from the K-tile loop counter.",
        "example": "for (int k_tile = 0; k_tile < K / BK; ++k_tile) { /* use k_tile */ }",
    },
    "RUNTIME_ERROR": {
        "what_was_wrong": "ptxb_run dereferenced a null host pointer before launching anything, so the process crashed.",
        "rule": "ptxb_run reads only its ptxb_tensor arguments; validate nargs, dtypes and shapes and return an error code instead of touching other memory.",
        "fix": "Remove the stray host dereference and return cudaErrorInvalidValue when an argument check fails.",
        "example": "if (nargs != 3 || args[0].dtype != PTXB_BF16) return cudaErrorInvalidValue;",
    },
    "TIMEOUT": {
        "what_was_wrong": "Blocks spun on a flag that nothing set, so the kernel never finished.",
        "rule": "Every wait needs a producer that is guaranteed to run: pair mbarrier waits with the arrivals or TMA transactions that complete them.",
        "fix": "Replace the spin on a device flag with an mbarrier armed by the TMA load it waits for.",
        "example": "mbarrier_arrive_expect_tx(&full[s], bytes); tma_load_2d(dst, &map, &full[s], x, y); mbarrier_wait_parity(&full[s], phase);",
    },
}


class Teacher(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = "\n".join(m.get("content", "") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                           for m in body.get("messages", []))
        note = next((n for status, n in NOTES.items() if f"verdict: {status}" in prompt), NOTES["INCORRECT_NUMERICAL"])
        answer = {"id": "scripted", "object": "chat.completion", "model": body.get("model", "scripted-teacher"),
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": json.dumps(note)}}],
                  "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 150, "total_tokens": len(prompt) // 4 + 150}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", int(sys.argv[1])), Teacher).serve_forever()
