#!/usr/bin/env python3
"""Peak RSS of `imago fetch` against hostile HTTP servers (RELIABILITY.md §3).

Usage: python3 scripts/hostile-servers-rss.py .build/debug/imago
Serves an endless body, a 256 MiB gzip bomb, a Content-Length lie and a slow drip on 127.0.0.1, runs
`imago fetch` on each (defaults, then --max-bytes 1M) and prints one JSON line per run with the exit status,
the wall time and the child's peak RSS (VmHWM from /proc, sampled every 5 ms until it exits). Measurement only.
"""
import gzip, io, sys, time, threading, resource, subprocess, json
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
import zlib
def make_bomb(size):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [c.compress(b"\0" * (1 << 20)) for _ in range(size >> 20)]
    out.append(c.flush())
    return b"".join(out)
BOMB = make_bomb(256 << 20)
class H(BaseHTTPRequestHandler):
    def handle(self):
        try:
            super().handle()
        except ConnectionResetError:
            pass  # the client aborts hostile transfers on purpose

    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        p = self.path
        try:
            if p == "/endless":
                self.send_response(200); self.send_header("Content-Type", "image/png"); self.end_headers()
                chunk = b"\x89PNG" + b"\0" * 65532
                while True:
                    self.wfile.write(chunk)
            elif p == "/gzip-bomb":
                self.send_response(200); self.send_header("Content-Type", "image/png")
                self.send_header("Content-Encoding", "gzip"); self.send_header("Content-Length", str(len(BOMB))); self.end_headers()
                self.wfile.write(BOMB)
            elif p == "/length-lie":
                self.send_response(200); self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(1 << 40)); self.end_headers()
                self.wfile.write(b"\x89PNG" + b"\0" * 1000); self.wfile.flush(); self.close_connection = True
            elif p == "/drip":
                self.send_response(200); self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", "100000"); self.end_headers()
                while True:
                    self.wfile.write(b"\0" * 10); self.wfile.flush(); time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
srv = ThreadingHTTPServer(("127.0.0.1", 0), H); srv.daemon_threads = True
port = srv.server_address[1]
threading.Thread(target=srv.serve_forever, daemon=True).start()
imago = sys.argv[1]
for extra in ([], ["--max-bytes", "1M"]):
    for path in ["/endless", "/gzip-bomb", "/length-lie", "/drip"]:
        cache = f"/tmp/hostile-cache-{int(time.time()*1000)}"
        t0 = time.time()
        proc = subprocess.Popen([imago, "fetch", f"http://127.0.0.1:{port}{path}", "--timeout", "5", "--retries", "0", "--cache-dir", cache] + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = 0
        while proc.poll() is None:
            try:
                for line in open(f"/proc/{proc.pid}/status"):
                    if line.startswith("VmHWM:"): peak = max(peak, int(line.split()[1]))
            except (FileNotFoundError, ProcessLookupError, ValueError):
                pass
            time.sleep(0.005)
        out, err = proc.communicate()
        r = proc
        dt = time.time() - t0
        print(json.dumps({"path": path, "options": " ".join(extra) or "defaults", "status": r.returncode, "seconds": round(dt, 2), "peak_rss_mb": round(peak/1024, 1), "stderr": err.strip()[:150]}))
