"""The dashboard at study scale: five browser sessions at once on a store of more than 50,000 detections, against
one session alone on the same store.

The store: one real run of the whole CoQA sample (30 dialogues) with the scripted system (tests/scripted_sut.py:
its answers scripted, everything else real: knowledge graphs, perturbations, the context check, the answer
oracle), about 2,000 detections; then ``--copies`` - 1 copies of that run, made in SQL, each under a run id of
its own and naming a system of its own (``keyword-overlap-v1 #k``), as a study of that many systems would store
them: every row of the run's tables copied under the new run id. 26 runs (the default) hold 51,428 detections.

The real dashboard is started on it (`streamlit run app.py` on loopback, its own process). Per repeat a session
opens a fresh Streamlit session on the Datasets page (not timed), then: opens the Violations page from the sidebar,
filters one run (the Runs filter), goes to the next page of results, follows the link that opens the picked
detection (the first of that page) in the Inspector, and picks another round of its dialogue (a fragment of the
page). Every session and repeat filters a run of its own, so no session finds what another read in the cache.
The sessions begin every interaction at the same moment (a barrier).

Two kinds of session (``--clients``):

- ``simulated`` (the default): a client of Streamlit's own websocket protocol per session, as a browser speaks it
  (the page and query string, every widget's state it set, a fragment's rerun), without drawing anything. A time
  runs from the message that asks for the rerun until the server's "script finished", every message of the rerun
  received; each interaction checks that its result arrived (the matching count, page 2, the round's graph).
  This is what the server does for its users; their browsers draw on their own machines.
- ``chromium``: a headless Chromium per session, driven from a thread of its own. A time runs from the action until
  a text that only its result shows is visible and Streamlit has finished (benchmarks/study_page.py's SETTLED);
  a second time ends at the server's last websocket message of that rerun. The browsers draw on the same two
  cores as the server, and their drawing takes several times the server's CPU.

A first session goes through the interactions once before the timing (a fresh server's first script run imports
the engine). Per interaction the benchmark prints the median and the largest time over the sessions and repeats,
with one session and with ``--sessions`` at once, the ratio of their medians, and whether the sessions settle
under 1 s.

    .venv/bin/python benchmarks/dashboard_scale.py                         # 5 sessions vs 1, 3 repeats
    .venv/bin/python benchmarks/dashboard_scale.py --clients chromium      # the same with real browsers
    .venv/bin/python benchmarks/dashboard_scale.py --store /tmp/big.duckdb # build once, keep it for the next time
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.study_page import SETTLED, TARGET_S, idle, selectbox  # noqa: E402
from tests.conftest import SAMPLE  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402

RUN_TABLES = ("test_cases", "test_case_rounds", "run_rounds", "checks", "run_metrics", "orig_samples",
              "confirmations", "selections", "mutants", "priorities")


def build_store(db: Path, copies: int) -> None:
    """The scripted run of the sample and ``copies`` - 1 copies of it (see the module docstring)."""
    from mortar.formats import load_dataset
    from mortar.pipeline import RunConfig, run
    from tests.scripted_sut import ScriptedSUT

    base = run(load_dataset(SAMPLE), RunConfig(sut="scripted"), db=db, sut=ScriptedSUT()).run_id
    copy_run(db, base, copies)


def copy_run(db: Path, base: str, copies: int) -> None:
    """``copies`` - 1 copies of run ``base``, each under its own run id and system name."""
    from mortar import store

    with store.connect(db) as con:
        config = json.loads(con.execute("SELECT config FROM runs WHERE run_id = ?", [base]).fetchone()[0])
        for k in range(1, copies):
            run_id = f"{base}-{k:02d}"
            config["sut"]["model"] = f"keyword-overlap-v1 #{k}"
            con.execute("INSERT INTO runs SELECT * REPLACE (? AS run_id, ? AS config) FROM runs WHERE run_id = ?",
                        [run_id, json.dumps(config, sort_keys=True), base])
            for table in RUN_TABLES:
                con.execute(f"INSERT INTO {table} SELECT * REPLACE (? AS run_id) FROM {table} WHERE run_id = ?",
                            [run_id, base])


INTERACTIONS = ("open Violations", "filter one run", "next page", "open in the Inspector", "another round")


class Session:
    """One browser session of the dashboard (a page of its own Chromium), and when the server last sent it a
    message: the end of the server's answer to an interaction, before the browser has drawn it."""

    def __init__(self, page, url: str):
        self.page, self.url, self.last_heard = page, url, 0.0
        page.on("websocket", lambda ws: ws.on("framereceived", self._heard))

    def _heard(self, _frame) -> None:
        self.last_heard = time.perf_counter()

    def timed(self, act, shown) -> tuple[float, float]:
        """Seconds from ``act()`` until ``shown`` (a locator) is visible and Streamlit has finished the rerun, and
        until the server's last message of that rerun."""
        start = time.perf_counter()
        act()
        shown.first.wait_for()
        self.page.wait_for_function(SETTLED, timeout=60_000, polling=20)
        return time.perf_counter() - start, self.last_heard - start

    def start(self) -> None:
        """A fresh Streamlit session on a light page (the Datasets page), not timed."""
        self.page.goto(f"{self.url}/datasets")
        self.page.get_by_role("heading", name="Datasets").first.wait_for()
        idle(self.page)

    def open_violations(self) -> tuple[float, float]:
        link = self.page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Violations")
        return self.timed(link.first.click, self.page.get_by_text("Matching detections"))

    def filter_run(self, run_id: str, detections: int) -> tuple[float, float]:
        """Choose one run in the Runs filter (the page reruns when its list closes)."""
        self.page.locator('[data-testid="stMultiSelect"]').filter(has_text="Runs").locator("input").click()
        self.page.keyboard.type(run_id)  # the list shows the first runs only, and the runs that match what is typed
        option = self.page.get_by_role("option").filter(has_text=f"{run_id} ·").first

        def choose():
            option.click()
            self.page.keyboard.press("Escape")
        return self.timed(choose, self.page.get_by_text(f"of {detections:,} matching detections"))

    def next_page(self) -> tuple[float, float]:
        return self.timed(self.page.locator('[data-testid="stNumberInputStepUp"]').first.click,
                          self.page.get_by_text(re.compile(r"· page 2 of")))

    def open_in_inspector(self) -> tuple[float, float]:
        """Open the detection the picker shows (the first of the page) in the Inspector: until its knowledge graph
        is drawn and the page has finished."""
        return self.timed(self.page.get_by_role("link", name="Open in the inspector").first.click,
                          self.page.get_by_text("· original context"))

    def another_round(self) -> tuple[float, float]:
        """Pick the first round that is not the detection's in the Inspector's round picker: until that round's
        knowledge graph is drawn."""
        selectbox(self.page, "Round").locator("input").click()
        self.page.keyboard.press("ArrowDown")  # opens the list
        option = self.page.get_by_role("option").filter(has_not_text="the detection").first
        seed_round = re.search(r"seed round (\d+)", option.inner_text()).group(1)
        return self.timed(option.click, self.page.get_by_text(f"Round {seed_round} · original context"))


def steps(session, run_id: str, detections: int) -> tuple:
    """The five interactions of INTERACTIONS, in order, for a browser :class:`Session` or a :class:`Simulated` one."""
    return (session.open_violations, lambda: session.filter_run(run_id, detections), session.next_page,
            session.open_in_inspector, session.another_round)


def browse(url: str, run_ids: list[str], detections: int, start: threading.Barrier, times: dict[str, list]) -> None:
    """One browser session per run, each through the five interactions, every interaction begun together with
    the other threads' (``start``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.set_default_timeout(60_000)
        session = Session(page, url)
        for run_id in run_ids:
            session.start()
            for name, step in zip(INTERACTIONS, steps(session, run_id, detections)):
                start.wait()
                times[name].append(step())
        browser.close()


def together(url: str, runs_per_session: list[list[str]], detections: int) -> dict[str, list[tuple[float, float]]]:
    """The sessions at once, one thread and browser each: every interaction's times over the sessions and runs."""
    times = {name: [] for name in INTERACTIONS}
    start = threading.Barrier(len(runs_per_session), timeout=300)
    errors = []

    def work(run_ids):
        try:
            browse(url, run_ids, detections, start, times)
        except Exception as e:  # reported below; the others must not wait for this one
            errors.append(e)
            start.abort()

    threads = [threading.Thread(target=work, args=(run_ids,)) for run_ids in runs_per_session]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return times


class Simulated:
    """One browser session as the server sees it, without the drawing: a client of Streamlit's own websocket
    protocol (BackMsg / ForwardMsg protobufs on /_stcore/stream) that keeps what a browser keeps (the page, the
    query string, the widget states it set) and reads the elements of each rerun. A time runs from the message that
    asks for the rerun until the server's "script finished"; every message of the rerun has arrived by then."""

    def __init__(self, url: str):
        self.stream = url.replace("http://", "ws://") + "/_stcore/stream"
        self.ws, self.pages, self.page_hash, self.query = None, {}, "", ""
        self.widgets: dict[str, object] = {}  # widget id → its WidgetState, as the browser sends them all each time
        self.elements: list[tuple[str, object, str]] = []  # the last rerun's (type, element, fragment id)

    async def start(self) -> None:
        """A fresh Streamlit session on a light page (the Datasets page), not timed."""
        import websockets

        if self.ws is not None:
            await self.ws.close()
        self.ws = await websockets.connect(self.stream, subprotocols=["streamlit"], max_size=None)
        self.page_hash, self.query, self.widgets = "", "", {}
        await self.rerun(page_name="datasets")
        self.shown("heading", "Datasets")

    async def rerun(self, page_name: str = "", fragment_id: str = "", **changed) -> float:
        """Ask for a rerun (another page, a fragment, widgets ``changed``: id → WidgetState) and read its messages
        until the server has finished it; the seconds that took."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self.widgets.update(changed)
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string, state.page_name, state.fragment_id = self.query, page_name, fragment_id
        state.page_script_hash = self.pages.get(page_name, self.page_hash) if page_name else self.page_hash
        state.widget_states.widgets.extend(self.widgets.values())
        for widget_id, w in list(self.widgets.items()):  # a button's click is sent once
            if w.HasField("trigger_value"):
                del self.widgets[widget_id]
        self.elements = []
        started = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        while True:
            forward = ForwardMsg()
            forward.ParseFromString(await self.ws.recv())
            kind = forward.WhichOneof("type")
            if kind == "navigation":
                self.pages = {p.url_pathname or p.page_name.lower(): p.page_script_hash
                              for p in forward.navigation.app_pages}
                self.page_hash = forward.navigation.page_script_hash or self.page_hash
            elif kind == "page_info_changed":
                self.query = forward.page_info_changed.query_string
            elif kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                which = element.WhichOneof("type")
                self.elements.append((which, getattr(element, which), forward.delta.fragment_id))
            elif kind == "script_finished" and forward.script_finished in (
                    forward.FINISHED_SUCCESSFULLY, forward.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
                return time.perf_counter() - started
            elif kind == "script_finished" and forward.script_finished == forward.FINISHED_WITH_COMPILE_ERROR:
                raise RuntimeError("the page failed to compile")

    def widget(self, kind: str, label: str) -> tuple[object, str]:
        """The last rerun's widget of this kind whose label starts with ``label``, and its fragment's id."""
        for which, element, fragment in self.elements:
            if which == kind and element.label.startswith(label):
                return element, fragment
        raise AssertionError(f"no {kind} {label!r} on the page")

    def shown(self, kind: str, text: str) -> None:
        """Fail unless the last rerun sent an element of this kind that shows ``text`` (what its result shows)."""
        if not any(which == kind and text in _text(which, element) for which, element, _ in self.elements):
            exceptions = [e.message for which, e, _ in self.elements if which == "exception"]
            raise AssertionError(f"no {kind} showing {text!r}" + (f"; the page failed: {exceptions}" if exceptions
                                                                   else ""))

    @staticmethod
    def state(widget_id: str, **value):
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        state = WidgetState(id=widget_id)
        for field, v in value.items():
            if isinstance(v, list):
                getattr(state, field).data.extend(v)
            else:
                setattr(state, field, v)
        return state

    async def open_violations(self) -> float:
        seconds = await self.rerun(page_name="violations")
        self.shown("metric", "Matching detections")
        return seconds

    async def filter_run(self, run_id: str, detections: int) -> float:
        runs, _ = self.widget("multiselect", "Runs")
        option = next(o for o in runs.options if o.startswith(f"{run_id} ·"))
        seconds = await self.rerun(**{runs.id: self.state(runs.id, string_array_value=[option])})
        self.shown("markdown", f"of {detections:,} matching detections")
        return seconds

    async def next_page(self) -> float:
        page, _ = self.widget("number_input", "Page (of")
        seconds = await self.rerun(**{page.id: self.state(page.id, double_value=2.0)})
        self.shown("markdown", "· page 2 of")
        return seconds

    async def open_in_inspector(self) -> float:
        """Follow the page's link to the Inspector, as a browser does: that page with the link's query string (the
        code before the link: click its button)."""
        link = [e for which, e, _ in self.elements if which == "page_link" and e.label == "Open in the inspector"]
        if link:
            self.query = link[0].query_string
            seconds = await self.rerun(page_name="inspector")
        else:
            button, _ = self.widget("button", "Open in the inspector")
            seconds = await self.rerun(**{button.id: self.state(button.id, trigger_value=True)})
        self.shown("plotly_chart", "· original context")
        return seconds

    async def another_round(self) -> float:
        rounds, fragment = self.widget("selectbox", "Round")
        option = next(o for o in rounds.options if "the detection" not in o)
        seed_round = re.search(r"seed round (\d+)", option).group(1)
        seconds = await self.rerun(fragment_id=fragment, **{rounds.id: self.state(rounds.id, string_value=option)})
        self.shown("plotly_chart", f"Round {seed_round} · original context")
        return seconds


def _text(which: str, element) -> str:
    """What an element shows as text: a figure's title, a heading's or a markdown's body, a metric's label."""
    if which == "plotly_chart":
        return json.loads(element.spec).get("layout", {}).get("title", {}).get("text", "")
    return " ".join(str(getattr(element, field, "")) for field in ("label", "body"))


async def browse_simulated(url: str, run_ids: list[str], detections: int, start, times: dict[str, list]) -> None:
    """:func:`browse` with a :class:`Simulated` session instead of a browser."""
    session = Simulated(url)
    for run_id in run_ids:
        await session.start()
        for name, step in zip(INTERACTIONS, steps(session, run_id, detections)):
            await start.wait()
            times[name].append(await step())
    await session.ws.close()


def together_simulated(url: str, runs_per_session: list[list[str]], detections: int) -> dict[str, list[float]]:
    """The simulated sessions at once, in one event loop: every interaction's times over the sessions and runs."""
    import asyncio

    async def all_sessions():
        times = {name: [] for name in INTERACTIONS}
        start = asyncio.Barrier(len(runs_per_session))
        await asyncio.gather(*(browse_simulated(url, run_ids, detections, start, times)
                               for run_ids in runs_per_session))
        return times
    return asyncio.run(all_sessions())


def figures(values: list[float]) -> str:
    return f"{statistics.median(values):5.2f} {max(values):5.2f}"


def report(single: dict[str, list], many: dict[str, list], sessions: int, columns: tuple[str, ...]) -> None:
    """Per interaction and time (``columns``: what each of a step's times measures): median and max seconds with
    one session and with ``sessions``, the ratio of the medians, whether the sessions settle under 1 s."""
    print(f"{'':24}" + "  ".join(f"{c:^38}" for c in columns))
    print(f"{'interaction':24}" + "  ".join(f"{'1 session':>11}{f'{sessions} sessions':>13}{'ratio':>7}{'< 1 s':>7}"
                                            for _ in columns))
    print(f"{'':24}" + "  ".join(f"{'med   max':>11}{'med   max':>13}{'':>14}" for _ in columns))
    for name in INTERACTIONS:
        line = f"{name:24}"
        for which in range(len(columns)):
            one, several = [t[which] for t in single[name]], [t[which] for t in many[name]]
            ratio = statistics.median(several) / statistics.median(one)
            under = "yes" if max(several) < TARGET_S else "median" if statistics.median(several) < TARGET_S else "no"
            line += f"{figures(one):>11}{figures(several):>13}{ratio:>6.2f}×{under:>7}  "
        print(line.rstrip())
    print("'< 1 s': yes when every time of the sessions is under 1 s, median when their median is, else no.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--copies", type=int, default=26, help="runs in the store (the sample's run and its copies)")
    parser.add_argument("--store", type=Path, help="build the store here, or use the one already built there")
    parser.add_argument("--clients", choices=("simulated", "chromium"), default="simulated",
                        help="simulated: sessions speaking Streamlit's websocket protocol, no drawing (the server "
                             "alone on these cores); chromium: a headless Chromium each, drawing on the same cores")
    args = parser.parse_args()
    needed = (args.sessions + 1) * args.repeats + 1
    if args.copies < needed:
        parser.error(f"--copies must be at least {needed}: every session and repeat filters a run of its own")
    with tempfile.TemporaryDirectory() as tmp:
        db = args.store or Path(tmp) / "scale.duckdb"
        if not db.exists():
            started = time.perf_counter()
            build_store(db, args.copies)
            print(f"store built in {time.perf_counter() - started:.0f} s")
        runs, per_run = run_detections(db)
        print(f"{sum(per_run.values()):,} detections in {len(runs)} runs")
        # every session and repeat inspects a run of its own, so no session finds another's reads in the cache
        copies = runs[1:]
        alone, rest = copies[:args.repeats], copies[args.repeats:]
        shared = [rest[k::args.sessions][:args.repeats] for k in range(args.sessions)]
        count = per_run[runs[1]]
        if args.clients == "chromium":
            sessions, columns = together, ("settled in the browser", "answered by the server")
        else:
            def sessions(*a):
                return {name: [(t,) for t in ts] for name, ts in together_simulated(*a).items()}
            columns = ("settled: the server's last message",)
        with serve(db, "bench-dashboard-scale.log") as url:
            sessions(url, [[runs[0]]], per_run[runs[0]])  # warm-up: a fresh server's first run imports the engine
            single = sessions(url, [alone], count)
            many = sessions(url, shared, count)
    print(f"seconds over {args.repeats} repeats, every session on runs of its own, {sum(per_run.values()):,} detections "
          f"in the store, {args.clients} sessions:")
    report(single, many, args.sessions, columns)


def run_detections(db: Path) -> tuple[list[str], dict[str, int]]:
    """The store's run ids (the sample's run first) and each run's number of detections."""
    from mortar import store

    with store.connect(db, read_only=True) as con:
        rows = con.execute("SELECT r.run_id, count(d.detection_id) FROM runs r "
                           "LEFT JOIN detections d ON d.run_id = r.run_id GROUP BY r.run_id ORDER BY r.run_id").fetchall()
    return [r for r, _ in rows], dict(rows)


if __name__ == "__main__":
    main()
