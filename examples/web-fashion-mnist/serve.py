#!/usr/bin/env python3
"""Serves this folder like `python3 -m http.server`, plus the two headers that make the page
cross-origin isolated (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy:
require-corp), so that browsers give it SharedArrayBuffer and ember.js loads the threaded
build. Usage: python3 serve.py [PORT]   (default 8000; serves the folder this file is in)."""
import functools
import http.server
import os
import sys


class IsolatedHandler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    handler = functools.partial(IsolatedHandler, directory=os.path.dirname(os.path.abspath(__file__)))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving {handler.keywords['directory']} at http://localhost:{port} (cross-origin isolated)")
        server.serve_forever()
