"""What the loopback chat servers of the tests share (each runs as a script: ``python tests/NAME.py``): a JSON
reply, and serving on a free port of 127.0.0.1, announced as ``serving at URL`` on stdout for the test to read."""

import json
from http.server import ThreadingHTTPServer


def send_json(handler, status: int, doc: dict) -> None:
    payload = json.dumps(doc).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


def serve(handler_class) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    server.daemon_threads = True
    print(f"serving at http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
