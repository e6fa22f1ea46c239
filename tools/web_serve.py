"""Serves a folder on localhost with the two headers that make a page cross-origin isolated
(Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy), which browsers require before they
give a page SharedArrayBuffer and so Web Workers sharing memory (the browser build's threads).
Usage: python3 tools/web_serve.py FOLDER [PORT] [--no-isolation] (tools/web.sh --serve).
--no-isolation leaves the two headers out, as most static hosting does: the page then runs its
one-thread build (docs/web.md; the page's test checks it so)."""
import functools
import http.server
import sys


class IsolatedHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".js": "text/javascript", ".data": "application/octet-stream"}

    isolated = True

    def end_headers(self):
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, fmt, *args):
        if "-q" not in sys.argv:
            super().log_message(fmt, *args)


def main():
    args = [a for a in sys.argv[1:] if a not in ("-q", "--no-isolation")]
    IsolatedHandler.isolated = "--no-isolation" not in sys.argv
    folder = args[0]
    port = int(args[1]) if len(args) > 1 else 8037
    handler = functools.partial(IsolatedHandler, directory=folder)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    print(f"web_serve: http://localhost:{server.server_address[1]}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
