"""How long the Studies page takes per interaction in a real browser, with six systems on five seeds, against the
Compare page (two of the same runs) in the same run.

A store is filled with a study of ``--systems`` scripted systems on the first ``--seeds`` sample seeds (the
answers are scripted, the judging real: spaCy, MiniLM, the answer oracle). The real dashboard is started on
it (`streamlit run app.py` on loopback) and a headless Chromium opens the page, picks another seed question,
another system in the cell picker, and another relation, ``--repeats`` times each. A time runs from the
action to the moment the page's text has changed and no element is left stale by Streamlit's rerun. The same seed-question
change on the Compare page of two of the study's runs is the baseline.

    .venv/bin/python benchmarks/study_page.py                  # 6 systems × 5 seeds, 5 repeats
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import SAMPLE  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402
from tests.scripted_sut import scripted_study  # noqa: E402

TARGET_S = 1.0  # the bar: under a second per interaction


MAIN_TEXT = "() => document.querySelector('[data-testid=\"stMain\"]').innerText"
SETTLED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
                && !document.querySelector('[data-stale="true"]')"""


def idle(page, timeout_s: float = 60) -> None:
    """Until Streamlit's script has finished (no status widget, no element left stale by a rerun)."""
    page.wait_for_timeout(50)
    page.wait_for_function(SETTLED, timeout=timeout_s * 1000, polling=20)


def selectbox(page, label: str):
    """The selectbox labelled ``label`` (exactly)."""
    return page.locator('[data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=re.compile(f"^{re.escape(label)}$"))).first


def pick(page, label: str, steps: int) -> float:
    """Move the selectbox ``label`` ``steps`` options down (up when negative); seconds until the page shows what the
    new value gives (its text changed) and Streamlit has finished the rerun."""
    selectbox(page, label).click()
    for _ in range(abs(steps)):
        page.keyboard.press("ArrowDown" if steps > 0 else "ArrowUp")
    before = page.evaluate(MAIN_TEXT)
    start = time.perf_counter()
    page.keyboard.press("Enter")
    page.wait_for_function(f"before => ({MAIN_TEXT})() !== before", arg=before, timeout=60_000, polling=20)
    page.wait_for_function(SETTLED, timeout=60_000, polling=20)
    return time.perf_counter() - start


def opened(browser, url: str, text: str) -> float:
    """Seconds from asking for ``url`` in a new browser session until ``text`` shows and the script has finished."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    start = time.perf_counter()
    page.goto(url)
    page.get_by_text(text).first.wait_for()
    idle(page)
    seconds = time.perf_counter() - start
    page.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", type=int, default=6)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "study.duckdb"
        started = time.perf_counter()
        result = scripted_study(db, SAMPLE, args.systems, args.seeds)
        print(f"study of {args.systems} scripted systems × {args.seeds} seeds stored in "
              f"{time.perf_counter() - started:.0f} s")
        runs = list(result.runs.values())
        with serve(db, "bench-study-page.log") as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.set_default_timeout(60_000)
            start = time.perf_counter()
            page.goto(f"{url}/study?study={result.study_id}")
            page.get_by_role("heading", name="Studies").first.wait_for()
            page.get_by_text("One question, every system").wait_for()
            idle(page)
            first_open = time.perf_counter() - start
            # a new session in the same server: what opening the page costs a reader; opening the Datasets page
            # (a table and a few lines) is the framework's own cost
            warm = [opened(browser, f"{url}/study?study={result.study_id}", "One question, every system")
                    for _ in range(args.repeats)]
            plain = [opened(browser, f"{url}/datasets", "Datasets") for _ in range(args.repeats)]
            times = {"seed question": [], "cell system": [], "cell relation": []}
            for k in range(args.repeats):
                step = 1 if k % 2 == 0 else -1  # back and forth, so every pick changes the value
                times["seed question"].append(pick(page, "Seed question", step))
                times["cell system"].append(pick(page, "System", step))
                times["cell relation"].append(pick(page, "Relation", step))
            page.goto(f"{url}/compare?a={runs[0]}&b={runs[1]}")
            page.get_by_role("heading", name="Compare runs").first.wait_for()
            page.locator('[data-testid="stTable"]').first.wait_for()
            idle(page)
            compare = [pick(page, "Seed question", 1 if k % 2 == 0 else -1) for k in range(args.repeats)]
            browser.close()
    print(f"Studies page, first open in a fresh server (cold: imports, the study's report computed): {first_open:.2f} s")
    print(f"Studies page, opened in a new browser session: median {statistics.median(warm):.2f} s "
          f"(max {max(warm):.2f} s); the Datasets page: median {statistics.median(plain):.2f} s, "
          f"so the study costs {statistics.median(warm) - statistics.median(plain):.2f} s on top of the framework")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"Studies page, change the {name}: median {median:.2f} s (max {max(values):.2f} s) "
              f"= {median / TARGET_S:.2f}× the 1 s target")
    base = statistics.median(compare)
    study = statistics.median(times["seed question"])
    print(f"Compare page (2 systems), change the seed question: median {base:.2f} s; the Studies page with "
          f"{args.systems} systems takes {study / base:.2f}× that")


if __name__ == "__main__":
    main()
