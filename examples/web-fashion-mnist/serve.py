#!/usr/bin/env python3
"""Serves this folder like `python3 -m http.server`, plus the two headers that make the page
cross-origin isolated (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy:
require-corp), so that browsers give it SharedArrayBuffer and ember.js loads the threaded
build. Usage: python3 serve.py [PORT] [ADDRESS]   (default 8000 on 127.0.0.1, this machine only;
0.0.0.0 for every interface). Serves the folder this file is in."""
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
    address = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    handler = functools.partial(IsolatedHandler, directory=os.path.dirname(os.path.abspath(__file__)))
    with http.server.ThreadingHTTPServer((address, port), handler) as server:
        print(f"serving {handler.keywords['directory']} at http://{address}:{port} (cross-origin isolated)")
        server.serve_forever()
