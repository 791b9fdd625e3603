"""Dashboard components the pages share: the glossary, store reads, the run picker and runs overview, the
background-job panel, the labelling form, the knowledge-graph figure and downloads.

Every read goes through ``mortar.store.session``: reads under way at once share one read-only connection, closed
when the last ends, so a run in the background can write between two page renders. The Inspector and Violations
pages keep what they read in Streamlit's cache, keyed by the runs' stamps (``store.run_stamps``): a run whose results
or labels change is read again. Dataset and SUT text is shown with ``st.text``,
``st.dataframe`` or escaped markdown, never as HTML.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

# A pages/ folder next to app.py makes Streamlit run the app as a legacy pages/ app (file names as the
# navigation) until st.navigation has run once in the server process: a fresh server's first request to
# /datasets, or the first rerun of a tab left open across a restart, ran pages/datasets.py without app.py.
# app.py and every page import this package first, so the first run of a new process leaves that mode here
# and starts again on the same page, now through app.py. (A private attribute: recheck on upgrades.)
if PagesManager.uses_pages_directory:
    PagesManager.uses_pages_directory = False
    st.rerun()

from mortar.ui.access import READ_WAIT_S, WRITE_WAIT_S, read, try_read  # noqa: E402
from mortar.ui.downloads import csv_download, figure_downloads, png_export_available  # noqa: E402
from mortar.ui.inspector import ec_summary, line_diff, verdict_table, word_diff  # noqa: E402
from mortar.ui.job_panel import (DEMO_CONFIG, DEMO_DURATION, env_status, job_rows, jobs_panel,  # noqa: E402
                                 secrets_to_environment, start_job, start_study_job)
from mortar.ui.kg_figure import kg_figure  # noqa: E402
from mortar.ui.labelling import annotator_box, label_form, ppd_metrics, quick_label, run_ppd  # noqa: E402
from mortar.ui.runs import (DATA, SAMPLE, cached_runs_overview, current_runs, no_runs_yet, open_inspector, pick_run,  # noqa: E402
                            pick_run_or_stop, run_label, run_stamps, runs_overview)
from mortar.ui.tables import MISSING, table, tidy  # noqa: E402
from mortar.ui.text import GLOSSARY, LEVELS_HELP, fmt, glossary, help_for, md_escape  # noqa: E402

__all__ = ["READ_WAIT_S", "WRITE_WAIT_S", "read", "try_read", "csv_download", "figure_downloads",
           "png_export_available", "ec_summary", "verdict_table", "word_diff", "line_diff", "DEMO_CONFIG", "DEMO_DURATION", "env_status",
           "job_rows", "jobs_panel", "secrets_to_environment", "start_job", "start_study_job", "kg_figure", "annotator_box",
           "label_form", "ppd_metrics", "quick_label", "run_ppd", "DATA", "SAMPLE", "no_runs_yet", "open_inspector",
           "pick_run", "pick_run_or_stop", "run_label", "runs_overview", "run_stamps", "cached_runs_overview", "current_runs", "GLOSSARY", "LEVELS_HELP", "fmt",
           "glossary", "help_for", "md_escape", "MISSING", "table", "tidy"]
