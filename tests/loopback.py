"""What the loopback chat servers of the tests share (each runs as a script: ``python tests/NAME.py``): a JSON
reply, the request log, serving on a free port of 127.0.0.1 announced as ``serving at URL`` on stdout; and, for the
tests, starting such a server as a process of its own."""

import json
import subprocess
import sys
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

from mortar.sut.serve import send_json  # noqa: F401  (the stub servers' JSON replies)


def serve(handler_class) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    server.daemon_threads = True
    print(f"serving at http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


def read_logged(handler, log: str, lock) -> dict:
    """The request's JSON body, appended to the ``log`` file (one request a line) for the test to read."""
    body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
    with lock, open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(body) + "\n")
    return body


def started(script: Path, log: Path, *args: str):
    """A stub server script started as a process of its own (run as a generator fixture: yields the server's URL and
    its request log, and stops it afterwards)."""
    log.touch()
    proc = subprocess.Popen([sys.executable, str(script), "--log", str(log), *args], cwd=script.parents[1],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert line.startswith("serving at http://127.0.0.1:"), line
    yield SimpleNamespace(url=line.split(" at ")[1].strip(), log=log)
    proc.terminate()
    proc.wait(timeout=10)
