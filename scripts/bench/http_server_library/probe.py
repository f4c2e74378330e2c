"""Malformed and oversized requests, one per connection, against two probe_server binaries (ours,
cpp-httplib's port); prints a markdown table of the status lines each answered."""
import socket
import subprocess
import sys

CASES = [
    ("GARBAGE\r\n\r\n", 400),
    ("GET  / HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    ("GET / HTTP/1.1 extra\r\nHost: t\r\n\r\n", 400),
    ("GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505),
    ("GET nope HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    ("GET /a%zz HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    ("GET /?a=%4 HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: t\r\nNoColon\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost : t\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n folded\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: t\r\nX: a\x01\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 12x\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400),
    ("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411),
    ("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
    ("POST / HTTP/1.1\r\nHost: t\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx", 417),
    ("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + "a" * 3000 + "\r\n\r\n", 431),
    ("GET / HTTP/1.1\r\nHost: t\r\n" + "".join(f"X-{i}: v\r\n" for i in range(300)) + "\r\n", 431),
    ("GET /" + "a" * 4000, 414),
    ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000000\r\n\r\n", 413),
    ("GET / HTTP/1.1\r\nHost: t\r\n", 408),
    ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly part", 408),
]


def answer(port, request):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(3)
    s.sendall(request.encode("latin1"))
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head = data.split(b"\r\n\r\n")[0]
                length = [h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")]
                if len(data) >= len(head) + 4 + (int(length[0].split(b":")[1]) if length else 0):
                    break
    except socket.timeout:
        pass
    s.close()
    return data.split(b"\r\n")[0].decode("latin1")[9:] if data else "no reply"


def run(binary):
    p = subprocess.Popen([binary], stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline())
    answers = [answer(port, request) for request, _ in CASES]
    p.kill()
    return answers


ours, theirs = run(sys.argv[1]), run(sys.argv[2])
print("| request (first line ... second) | expected | ours | cpp-httplib |")
print("|---|---|---|---|")
for (request, want), a, b in zip(CASES, ours, theirs):
    lines = request.split("\r\n")
    shown = lines[0][:40] + (" ... " + lines[1][:30] if len(lines) > 2 and lines[1] else "")
    print(f"| `{shown!r}` | {want} | {a} | {b} |")
