#!/usr/bin/env python3
"""A scripted stand-in for a model behind an OpenAI-compatible endpoint, for lora_smoke.sh: it lets
`ptxbench run` store real fixit trajectories without a key, a network or a GPU. It answers
POST /v1/chat/completions (not streamed) on a loopback port: the first turn of a trajectory is a
wrong kernel, every later turn a kernel the fake evaluation backend (`serve --fake-gpus`) passes with
its target instructions met. The fake backend reads its verdict from markers in the source
(src/service/eval_backend.h: PTXB_FAKE_STATUS, PTXB_FAKE_SPEEDUP). Each answer depends only on the
conversation (the hash of the messages before the first answer — system prompt and task — picks
the kernel, the assistant messages so far give the turn), so trajectories of different definitions
or prompt tags give different pairs, and a rerun gives the same store.

    python3 scripts/bench/lora_smoke_model.py --port-file PORT_FILE   # serves until killed
"""
import argparse
import hashlib
import http.server
import json
import pathlib
import sys

WRONG_STATUSES = ("COMPILE_ERROR", "INCORRECT_NUMERICAL", "RUNTIME_ERROR")


def kernel(tag, marker, variant):
    """A CUDA answer block defining ptxb_run; `marker` sets the fake verdict, `variant` the body."""
    tile = 64 << (variant % 3)
    body = [
        "#include \"ptxbench_abi.h\"",
        f"// lora smoke kernel {tag}: {marker}",
        f"constexpr int kTile = {tile};",
        "__global__ void smoke_kernel(const float* a, float* c, int n) {",
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
        f"  if (i < n) c[i] = a[i] * {variant % 7 + 1}.0f;",
        "}",
        "extern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {",
        "  (void)args; (void)nargs; (void)stream;",
        "  return 0;",
        "}",
    ]
    return "```cuda\n" + "\n".join(body) + "\n```\n"


def answer(messages):
    """The scripted reply to a conversation: (text, prompt characters)."""
    opening = []
    for m in messages:
        if m.get("role") == "assistant":
            break
        opening.append(f"{m.get('role')}:{m.get('content') or ''}")
    digest = hashlib.sha256("\n".join(opening).encode()).hexdigest()
    variant = int(digest[:8], 16)
    turn = 1 + sum(1 for m in messages if m.get("role") == "assistant")
    if turn == 1:
        status = WRONG_STATUSES[variant % len(WRONG_STATUSES)]
        text = f"A first attempt.\n\n{kernel(digest[:12], f'PTXB_FAKE_STATUS={status} PTXB_FAKE_SECONDS=0.01', variant)}"
    else:
        text = f"Fixed from the feedback.\n\n{kernel(digest[:12], 'PTXB_FAKE_SPEEDUP=1.5 PTXB_FAKE_SECONDS=0.01', variant + 1)}"
    return text, sum(len(m.get("content") or "") for m in messages)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length", "0"))
        try:
            body = json.loads(self.rfile.read(length))
            text, prompt_chars = answer(body["messages"])
        except (ValueError, KeyError, TypeError) as e:
            self.send_error(400, str(e))
            return
        reply = {
            "id": "lora-smoke",
            "object": "chat.completion",
            "model": body.get("model", "lora-smoke"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(text) // 4},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):  # quiet: the driver's log is ptxbench's
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port-file", required=True, help="the chosen loopback port is written here")
    a = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = pathlib.Path(a.port_file + ".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.rename(a.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
