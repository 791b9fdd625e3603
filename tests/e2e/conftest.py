"""Start the real dashboard (streamlit run app.py) on a free port with a temporary store, and a headless
Chromium driven by Playwright. Chromium is Debian's package (`apt-get install -y chromium`); Playwright's own
browser download is never used."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("MORTAR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(db, log_name: str = "e2e-server.log"):
    """Start `streamlit run app.py` on a free port with $MORTAR_DB=db; yields its URL, stops it after."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {**os.environ, "MORTAR_DB": str(db), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    log = open(ARTIFACTS / log_name, "w")
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                               "--server.address", "127.0.0.1", "--server.headless", "true",
                               "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            server.kill()
            raise RuntimeError(f"the dashboard did not start; see {ARTIFACTS / log_name}")
        time.sleep(0.5)
    try:
        yield url
    finally:
        stop_background_runs(db)
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="session")
def dashboard(tmp_path_factory):
    """The URL of a freshly started dashboard on an empty store; the server's log is kept in the artifacts."""
    db = tmp_path_factory.mktemp("e2e") / "e2e.duckdb"
    with serve(db) as url:
        yield url, db


def stop_background_runs(db) -> None:
    """Runs launched from the dashboard outlive it by design; a failed test must not leave one running."""
    from mortar import jobs, store

    try:
        with store.connect(db, read_only=True) as con:
            running = con.execute("SELECT job_id FROM jobs WHERE status IN ('queued', 'running')").fetchall()
        for (job_id,) in running:
            jobs.cancel(job_id, db)
    except Exception as e:  # the test's own failure is the one to report
        print(f"could not stop background runs: {e}")


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@contextmanager
def fresh_page(browser):
    """A page in a browser context of its own (1440×1000, 30 s timeouts), closed after."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture
def page(browser):
    with fresh_page(browser) as pg:
        yield pg
