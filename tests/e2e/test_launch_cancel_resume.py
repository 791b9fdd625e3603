"""Cancel and resume of a real background run, in a real browser: the Launch page starts a run of a slow Python SUT
(tests/e2e/slow_bot.py: one seed, one perturbation), cancels it while it answers, shows it cancelled, resumes it,
and shows it done; the answers stored before the cancel are kept and never asked again."""

import re

from mortar import jobs, store
from tests.e2e import test_dashboard as dashboard
from tests.e2e.conftest import fresh_page, serve

RUN_TIMEOUT_MS = 600_000  # a busy machine: the run's process loads spaCy and MiniLM twice (start and resume)


def stored_answers(db) -> dict[str, tuple]:
    """Every stored answer: conversation hash → (answer, when it was stored)."""
    with store.session(db, read_only=True, wait_s=30) as con:
        rows = con.execute("SELECT conversation_hash, answer, created_at FROM answers").fetchall()
    return {h: (a, t) for h, a, t in rows}


def asked(log) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_launch_cancel_and_resume_a_background_run(tmp_path, browser, monkeypatch):
    db, log = tmp_path / "cancel.duckdb", tmp_path / "asked.jsonl"
    monkeypatch.setenv("MORTAR_SLOW_BOT_LOG", str(log))  # the run's process inherits the dashboard's environment
    monkeypatch.setenv("MORTAR_SLOW_BOT_S", "0.4")
    with serve(db, "e2e-server-cancel.log") as url, fresh_page(browser) as page:
        page.goto(f"{url}/launch")
        page.get_by_role("heading", name="Launch a run").first.wait_for()
        dashboard.settle(page)
        page.get_by_role("spinbutton", name="Seed limit").fill("1")
        dashboard.only_perturbation(page, "DRS")
        page.locator('[data-testid="stSelectbox"]').filter(has_text="SUT (system under test)").click()
        page.keyboard.type("python")
        page.keyboard.press("Enter")
        page.get_by_role("textbox", name="Model name or folder").fill("tests.e2e.slow_bot:reply")
        page.get_by_role("button", name=re.compile("Start run")).click()
        page.get_by_text(re.compile(r"Started job \w+")).wait_for()
        page.get_by_text(re.compile(r"SUT tests\.e2e\.slow_bot:reply")).first.wait_for()

        # cancel while it answers
        for _ in range(RUN_TIMEOUT_MS // 500):
            if len(asked(log)) >= 4:
                break
            page.wait_for_timeout(500)
        assert len(asked(log)) >= 4, "the run never started answering"
        page.get_by_role("button", name="Cancel").first.click()
        page.get_by_text(re.compile(r"Job \w+ — cancelled")).first.wait_for()
        page.get_by_text("cancelled; resume continues where it stopped").first.wait_for()
        with store.session(db, read_only=True, wait_s=30) as con:
            (job_id, pid), = con.execute("SELECT job_id, pid FROM jobs").fetchall()
        for _ in range(60):  # the run's process group got SIGTERM: wait until it is gone
            if not jobs.alive(pid):
                break
            page.wait_for_timeout(500)
        assert not jobs.alive(pid)
        before, asked_before = stored_answers(db), len(asked(log))
        assert 0 < len(before) <= asked_before  # some answers stored (one in flight at the kill may be lost)
        with store.session(db, read_only=True, wait_s=30) as con:
            assert con.execute("SELECT count(*) FROM runs WHERE status = 'done'").fetchone()[0] == 0
        dashboard.shot(page, "27-launch-cancelled")

        # resume: a new job continues the same run to the end
        page.get_by_role("button", name="Resume").first.click()
        ended = page.get_by_text(re.compile(r"Job \w+ — (done|failed)")).first
        ended.wait_for(timeout=RUN_TIMEOUT_MS)
        logs = "\n".join(f.read_text()[-2000:] for f in tmp_path.glob("job-*.log"))
        assert "— done" in ended.inner_text(), logs
        assert page.locator('[data-testid="stException"]').count() == 0
        dashboard.shot(page, "28-launch-resumed")

    after, asked_after = stored_answers(db), asked(log)[asked_before:]
    assert len(after) > len(before)  # it was cancelled before the end
    assert all(after[h] == kept for h, kept in before.items())  # kept as they were: not asked and stored again
    assert len(asked_after) == len(after) - len(before)  # the resumed run asked only what was not stored
    assert len(set(asked_after)) == len(asked_after)
    with store.session(db, read_only=True) as con:
        jobs_rows = dict(con.execute("SELECT job_id, status FROM jobs").fetchall())
        runs = con.execute("SELECT run_id, status FROM runs").fetchall()
    assert jobs_rows.pop(job_id) == "cancelled" and list(jobs_rows.values()) == ["done"]
    assert len(runs) == 1 and runs[0][1] == "done"  # one run: the resumed job continued it
