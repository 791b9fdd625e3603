"""The ``mortar`` command: a thin shell over the engine."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

from mortar.chat import ChatError as ServiceError
from mortar.config import KG_BACKENDS, RunConfig, dataset_beside, make_extractor, read_document, run_sut_spec, validate
from mortar.formats import FORMATS, load_dataset
from mortar.errors import InputError
from mortar.budgets import EXIT_BUDGET_EXCEEDED, BudgetExceeded
from mortar.guide.prioritise import INITIAL, ORDERS
from mortar.guide.sensitivity import GOLD, SENSITIVITIES, TARGETS
from mortar.methods import methods
from mortar.oracle import DEFAULT_ORACLE, ORACLES
from mortar.perturb import PerturbationSettings
from mortar.settings import options
from mortar.settings import problems as settings_problems
from mortar.profiles import PROFILES, apply_profile, settings_lines
from mortar.sut import DEFAULT_MAX_NEW_TOKENS, DEFAULT_SUT, LOCAL_LANES
from mortar.vocab import ALL_METHODS, DIALTEST_METHOD, LEVELS, MORTAR_METHOD, RANDOM, RBT

EXIT_USER_ERROR = 2

UserError = InputError  # bad input from the user: reported in one line, exit code 2, no traceback


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def add_settings_options(p: argparse.ArgumentParser, method) -> None:
    """A method's settings as options, each from its field's declaration (``mortar.settings``)."""
    for o in options(method.settings, method.name):
        dest = f"{method.name}__{o.name}"
        if o.kind is bool and o.value_of:  # a switch that may take a value: --selection [K]
            p.add_argument(o.flag, dest=dest, nargs="?", type=int, const=True, default=None, metavar="N", help=o.help)
        elif o.kind is bool:
            p.add_argument(o.flag, dest=dest, action="store_const", const=not o.default if o.inverted_flag else True,
                           default=None, help=o.help)
        elif o.kind is tuple and o.sep:
            p.add_argument(o.flag, dest=dest, type=lambda text, sep=o.sep: tuple(
                n.strip().upper() for n in text.split(sep) if n.strip()), default=None, metavar="A" + o.sep + "B",
                help=o.help)
        elif o.kind is tuple:
            p.add_argument(o.flag, dest=dest, nargs="+", choices=o.choices, default=None, metavar="X", help=o.help)
        else:
            p.add_argument(o.flag, dest=dest, type=o.kind, default=None, metavar="N" if o.kind is int else "X",
                           help=o.help)


def settings_from_args(args, method):
    """The method's settings as the command line gave them (a field not given keeps its default)."""
    given = {}
    for o in options(method.settings, method.name):
        value = getattr(args, f"{method.name}__{o.name}", None)
        if value is None:
            continue
        if o.value_of and not isinstance(value, bool):  # --selection 5: on, with 5 as its value
            given[o.value_of] = value
            value = True
        given[o.name] = tuple(value) if o.kind is tuple else value
    return method.settings(**given)


def add_perturbation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", dest="dataset_format", choices=list(FORMATS),
                   help="the dataset's format (default: detected from the file): " + "; ".join(
                       f"{f.name}: {f.text}" for f in FORMATS.values()))
    p.add_argument("--grounding-field", metavar="FIELD",
                   help="chat JSONL: the record field that holds the grounding text (default: the system message)")
    p.add_argument("--seed", type=int, default=0, help="run seed: same seed, same test cases (default 0)")
    add_settings_options(p, methods()[MORTAR_METHOD])
    p.add_argument("--kg-backend", choices=KG_BACKENDS, default=KG_BACKENDS[0],
                   help="knowledge-graph extraction for the context check: spacy (offline, default) or llm")
    p.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")


def settings_from(args) -> PerturbationSettings:
    settings = settings_from_args(args, methods()[MORTAR_METHOD])
    found = settings_problems(settings, MORTAR_METHOD)
    if found:
        raise UserError("; ".join(found))
    return settings


def extractor_for(backend: str):
    from mortar.chat import ChatConfigError

    try:
        return make_extractor(backend)
    except ChatConfigError as e:
        raise UserError(f"--kg-backend {backend}: {e}") from None


def cmd_generate(args) -> None:
    from mortar.pipeline import case_records, generate, write_jsonl

    dataset = load_dataset(args.dataset, args.dataset_format, args.grounding_field)
    extractor = extractor_for(args.kg_backend)
    with ProgressBar() as bar:
        generated = generate(dataset, args.seed, settings_from(args), db=args.db, extractor=extractor, progress=bar)
    try:
        write_jsonl(case_records(dataset, generated), args.out)
    except OSError as e:
        raise UserError(f"{args.out}: cannot write: {e.strerror}") from None
    rounds = [v for vs in generated.verdicts.values() for v in vs]
    print(f"context check: {generated.kg_model}")
    for seed_id, reason in generated.failed_seeds.items():
        print(f"seed {seed_id} left out: knowledge-graph extraction failed: {reason}", file=sys.stderr)
    print(f"run {generated.run_id}: {len(generated.cases)} test cases from "
          f"{len(dataset.seeds) - len(generated.failed_seeds)} seeds, "
          f"{sum(not v.equivalent for v in rounds)} of {len(rounds)} rounds without equivalent context → {args.out}")


# command-line option (its dest) → the run configuration's field it sets
FIELD_OF = {"dataset": "dataset", "method": "methods", "sut": "sut", "seed": "run_seed", "oracle": "oracle",
            "threshold": "threshold", "kg_backend": "kg_backend", "limit": "limit", "targets": "targets",
            "budget": "budget", "order": "order", "max_new_tokens": "max_new_tokens", "lanes": "lanes",
            "orig_repeats": "orig_repeats", "system_prompt": "system_prompt", "dataset_format": "dataset_format",
            "grounding_field": "grounding_field", "confirm": "confirm"}


def read_run_file(path: str) -> RunConfig:
    """A run configuration from a YAML or JSON file (the keys ``RunConfig.to_json`` writes)."""
    doc = read_document(path)
    if not isinstance(doc, dict):
        raise UserError(f"{path}: a run file is a mapping of settings (dataset, methods, sut, …)")
    if doc.get("dataset"):
        doc["dataset"] = dataset_beside(doc["dataset"], path)
    try:
        return RunConfig.from_json(doc)
    except (ValueError, TypeError) as e:
        raise UserError(f"{path}: not a run configuration: {e}") from None


def config_from(args) -> RunConfig:
    """The run configuration of the command line; with ``--config FILE`` the file's, where the options given on
    the command line override its values."""
    given = getattr(args, "given", None) or set()
    try:
        settings = {name: settings_from_args(args, m) for name, m in methods().items()}
        cli = RunConfig(dataset=args.dataset, methods=args.method, sut=args.sut[0] if args.sut else DEFAULT_SUT,
                        run_seed=args.seed, settings=settings, oracle=args.oracle, threshold=args.threshold,
                        kg_backend=args.kg_backend, limit=args.limit, targets=args.targets, budget=args.budget,
                        order=args.order, max_new_tokens=args.max_new_tokens, lanes=args.lanes,
                        orig_repeats=args.orig_repeats, confirm=args.confirm, system_prompt=args.system_prompt,
                        dataset_format=args.dataset_format, grounding_field=args.grounding_field)
    except ValueError as e:  # an unknown method name
        raise UserError(f"--method: {e}") from None
    if args.config:
        config = read_run_file(args.config)
        config = replace(config, **{FIELD_OF[d]: getattr(cli, FIELD_OF[d]) for d in given if d in FIELD_OF})
        for name, method in methods().items():
            changed = {o.name: getattr(cli.settings_of(name), o.name) for o in options(method.settings, name)
                       if f"{name}__{o.name}" in given}
            if changed:
                config = config.with_settings(name, **changed)
    elif not args.dataset:
        raise UserError("--dataset is required (or --config FILE)")
    else:
        config = cli
    config, notes = apply_profile(config, args.profile or None)
    for note in notes:
        print(note, file=sys.stderr)
    return config


def given_options(parser: argparse.ArgumentParser, argv: list[str] | None) -> set[str]:
    """The dests of the options typed on the command line (not left at their defaults): the same parser, every
    default suppressed, parses the same arguments. (argparse's ``_actions``: tests/test_run_files.py fails if it
    changes.)"""
    parsers = [parser]
    while parsers:
        p = parsers.pop()
        for action in p._actions:
            action.default = argparse.SUPPRESS
            if isinstance(action, argparse._SubParsersAction):
                parsers += list(action.choices.values())
                action.default = None
        p._defaults.clear()
    return set(vars(parser.parse_args(argv)))


def with_progress(args, work, result_id):
    """``work(progress)`` under a progress bar; for a background job (``--job``) its progress and its end (done,
    failed or cancelled, and the id of what it made) go into the store too."""
    reporter = None
    if args.job:
        from mortar.jobs import CANCELLED, JobReporter

        reporter = JobReporter(args.job, args.db)
    try:
        with ProgressBar(also=reporter) as bar:
            result = work(bar)
    except BaseException as e:
        if reporter:  # a cancel's SIGTERM arrives as KeyboardInterrupt (no message of its own)
            cancelled = isinstance(e, KeyboardInterrupt)
            reporter.write(status="cancelled" if cancelled else "failed",
                           message=CANCELLED if cancelled else str(e)[:500])
        raise
    if reporter:
        reporter.write(status="done", stage="done", run_id=result_id(result))
    return result


def cmd_run(args) -> None:
    from mortar.methods import methods
    from mortar.pipeline import run

    budgets, baseline = gate_options(args)  # a malformed budget is bad input before any work
    if args.sut and len(args.sut) > 1:
        raise UserError("a run tests one SUT; for several side by side: mortar study --sut A --sut B …")
    config = validate(config_from(args))
    result = with_progress(args, lambda bar: run(None, config, db=args.db, extractor=extractor_for(config.kg_backend),
                                                 progress=bar), lambda done: done.run_id)
    for seed_id, reason in result.failed_seeds.items():
        print(f"seed {seed_id} left out: knowledge-graph extraction failed: {reason}", file=sys.stderr)
    for note in result.notes:
        print(note, file=sys.stderr)
    rbt = result.metrics[RBT]
    print(f"run {result.run_id} done: SUT {run_sut_spec(config)}, oracle {config.oracle} (ε = {result.threshold})")
    print(f"  RBT: {rbt['NBugs']} bugs in {rbt['detections']} checks over {rbt['test_cases']} test cases")
    for method in methods().values():
        m = result.metrics.get(method.label)
        if m and m["test_cases"]:
            print(f"  {method.label} ({method.name}): {m['NBugs']} bugs in {m['detections']} checks over "
                  f"{m['test_cases']} test cases (" + ", ".join(f"{lv} {m[lv]}" for lv in LEVELS) + ")")
    if result.errored_rounds:
        print(f"  {result.errored_rounds} rounds errored (never counted as bugs)")
    print("  time: " + " · ".join(f"{stage} {seconds:.1f} s" for stage, seconds in result.stages.items()
                                  if seconds >= 0.05))
    print(f"  details: mortar report {result.run_id}")
    if budgets or baseline:
        check_budgets(args.db, result.run_id, budgets, baseline)


def study_from(args):
    """The study of the command line: a study file, or the run options with repeated --sut."""
    from mortar.study import from_suts, load_study_file

    if args.study_file:
        if args.dataset or args.sut:
            raise UserError("give either a study file or --dataset with --sut options, not both")
        study, notes = load_study_file(args.study_file)
        if args.name:
            study = replace(study, name=args.name)
    else:
        if not args.sut:
            raise UserError("name the systems: a study file, or --sut A --sut B …")
        notes = []
        study = from_suts(config_from(args), args.sut, args.name)
    for note in notes:
        print(note, file=sys.stderr)
    return study


def cmd_study(args) -> None:
    from mortar import store
    from mortar.config import ConfigError
    from mortar.study import run_study, study_problems

    study = study_from(args)
    found = study_problems(study)
    if found:
        raise ConfigError(found)
    result = with_progress(args, lambda bar: run_study(study, db=args.db, progress=bar,
                                                       extractor=extractor_for(study.suite.kg_backend)),
                           lambda done: done.study_id)
    for note in result.notes:
        print(note, file=sys.stderr)
    asked = [name for name, r in result.results.items() if r is not None]
    print(f"study {result.study_id} done: {len(result.runs)} systems, {len(asked)} run now"
          + (f" ({', '.join(asked)})" if asked else " (every system's run was already done)"))
    with store.connect(args.db, read_only=True) as con:
        print_study(con, result.study_id)
    print(f"  details: mortar report {result.study_id}")


def print_study(con, study_id: str) -> None:
    """A study's tables, one row per system, as ``mortar report STUDY`` prints them."""
    import pandas as pd

    from mortar.study_report import study_report, wide

    r = study_report(con, study_id)
    fmt = {"float_format": lambda x: f"{x:.3f}"}
    print("\nSystems")
    print(pd.DataFrame(r["systems"]).to_string(index=False))
    for line in settings_lines(r["config"]):
        print(line)
    if not r["headline"]:
        print("\nno system's run is done yet")
        return
    headline = pd.DataFrame(r["headline"])
    headline["NBugs"] = [f"{v:.0f} [{lo:.0f}, {hi:.0f}]" if lo == lo else f"{v:.0f}" for v, lo, hi in
                         zip(headline["NBugs"], headline["NBugs low"], headline["NBugs high"])]
    headline["Rate+"] = [_with_ci(v, lo, hi) for v, lo, hi in
                         zip(headline["Rate+"], headline["Rate+ low"], headline["Rate+ high"])]
    intervals = "with 95% bootstrap intervals over the seeds" if headline["NBugs low"].notna().any() else \
        "(one seed: no intervals)"
    print(f"\nNBugs and Rate+ per system and method {intervals}")
    print(headline[["system", "method", "test_cases", "checks", "NBugs", "Rate+", "critical_bugs"]]
          .to_string(index=False))
    robust = pd.DataFrame(r["robustness"])
    print("\nRobustness drop: on the same questions (those MR1 checked: context kept, same reference), accuracy in "
          "the seed dialogue minus accuracy in the perturbed ones; RBT accuracy over every seed question and the "
          "share of every metamorphic check passed beside it")
    print(pd.DataFrame({"system": robust["system"], **{name: [_with_ci(v, lo, hi) for v, lo, hi in zip(
        robust[name], robust[f"{name} low"], robust[f"{name} high"])] for name in (
        "seed accuracy", "perturbed accuracy", "robustness drop", "RBT accuracy", "MR checks passed")}})
          .to_string(index=False))
    if any(len(row) > 1 for row in r["table_iv"]):
        print("\nTable IV: bug levels per system and method (L1 also wrong in RBT, L2 in a seed with an RBT bug, "
              "L3 in a seed RBT found clean)")
        print(pd.DataFrame(r["table_iv"]).to_string(index=False, **fmt))
    if r["table_vi"]:
        print("\nTable VI: test cases, questions, unanswerable questions and MR checks per system and perturbation")
        print(pd.DataFrame(r["table_vi"]).to_string(index=False))
    if r["table_vii"]:
        print("\nTable VII: bugs per perturbation (share of the system's bugs)")
        print(wide(r["table_vii"], "perturbation").to_string(index=False))
    if r["table_viii"]:
        print("\nTable VIII: bugs per metamorphic relation (share of the system's MORTAR bugs)")
        print(wide(r["table_viii"], "relation").to_string(index=False))
    if r["precision"]:
        print("\nPrecision of the labelled detections (PPD) per system")
        print(pd.DataFrame(r["precision"]).to_string(index=False, na_rep="", **fmt))


def _with_ci(value: float, low: float, high: float) -> str:
    if value != value:
        return ""
    return f"{value:.3f} [{low:.3f}, {high:.3f}]" if low == low else f"{value:.3f}"


def cmd_completion(args) -> None:
    import shtab

    print(shtab.complete(build_parser(), args.shell))


def cmd_serve(args) -> None:
    from mortar.sut import make_sut, sut_choices
    from mortar.sut.local import PRESETS
    from mortar.sut.serve import serve

    if args.sut not in PRESETS and not Path(args.sut).is_dir():
        raise UserError(f"mortar serve serves a local model: {', '.join(PRESETS)} or a model folder, not {args.sut!r} "
                        f"(the SUTs: {', '.join(sut_choices())})")

    def ready(url: str) -> None:
        print(f"serving {args.sut} at {url} (OpenAI-compatible chat completions, greedy); Ctrl-C stops it", flush=True)

    try:
        serve(args.sut, make_sut, args.host, args.port, ready)
    except OSError as e:
        raise UserError(f"cannot listen on {args.host}:{args.port}: {e.strerror}") from None
    except KeyboardInterrupt:
        pass


def _tidy(frame):
    """A table to print: counts as integers even beside a missing value, missing values as a dash."""
    frame = frame.convert_dtypes()
    return frame.astype(object).where(frame.notna(), "—")


def cmd_report(args) -> None:
    import pandas as pd

    from mortar import store
    from mortar.reports import PRIORITISATION_CAPTION, prioritisation, prioritisation_rows, run_report

    with store.connect(args.db, read_only=True) as con:
        if store.is_study_id(args.run_id):
            study_id = store.resolve_study_id(con, args.run_id)
            print(f"study {study_id}")
            return print_study(con, study_id)
        run_id = store.resolve_run_id(con, args.run_id)
        config = store.run_config(con, run_id)
        r = run_report(con, run_id)
        priorities = prioritisation(con, run_id)
    if not any(m["detections"] for m in r["metrics"].values()):
        raise UserError(f"run {run_id} has no results yet (a `mortar generate` run, or one still in progress)")
    kg = config.get("kg", {})
    print(f"run {run_id}: SUT {config.get('sut', {}).get('model')}, oracle {config.get('oracle')} "
          f"(ε = {config.get('threshold')}), context check {kg.get('model')}")
    for line in settings_lines(config.get("run_config")):
        print(line)
    for method, made in config.get("made", {}).items():
        if made.get("operators") is not None:
            unavailable = f" ({', '.join(made['unavailable'])} unavailable)" if made.get("unavailable") else ""
            print(f"{method} operators that ran: {', '.join(made['operators']) or 'none'}{unavailable}")
    fmt = {"float_format": lambda x: f"{x:.3f}"}
    print("\n" + " vs ".join(r["metrics"]))
    print(_table(pd.DataFrame(r["metrics"]).T))
    for table in r["tables"]:
        print(f"\n{table.title}")
        print(_tidy(pd.DataFrame(table.rows)).to_string(index=False, **fmt))
    if "uniqueness" in r:
        print(f"\n{' vs '.join(row['method'] for row in r['uniqueness'])} (Table V): unique bugs = bugs on seed "
              "questions where no other method flagged one")
        print(pd.DataFrame(r["uniqueness"]).to_string(index=False, **fmt))
        print("\nSeed questions with bugs: " + ", ".join(f"{part} {n}" for part, n in r["overlap"].items()))
    if priorities:
        print("\nTest prioritisation: bugs found against the share of the suite executed, per stored order")
        print(_tidy(pd.DataFrame(prioritisation_rows(priorities))).to_string(index=False, **fmt))
        print(PRIORITISATION_CAPTION)
    if "precision" in r:
        precision = pd.DataFrame(r["precision"])
        print("\nPrecision of the labelled detections (PPD; disputed ones left out) and agreement of two annotators "
              "(Cohen's kappa), over the run and per method, relation and perturbation")
        print(precision.to_string(index=False, na_rep="", **fmt))


RATES = ("Rate+", "RETC", "BPTC", "CV")


def _table(frame) -> str:
    """A metrics table as text: counts as integers, rates with three decimals, missing values blank."""
    def column(name):
        shown = "{:.3f}" if name in RATES else "{:.0f}"
        return frame[name].map(lambda v: "" if v is None or v != v else shown.format(v))

    return frame.assign(**{name: column(name) for name in frame.columns}).to_string()


def cmd_export(args) -> None:
    from mortar import store
    from mortar.reports import metrics_frame

    if store.is_study_id(args.run_id):
        return export_study(args)
    if args.format == "junit":
        return export_junit(args)
    if args.format == "html":
        return export_html(args)
    if args.what is None:
        raise UserError("--what is required (rounds, detections, metrics, transformed or labelled-pairs), except "
                        "with --format junit or html")
    if args.what == "transformed":
        return export_transformed(args)
    if args.what == "labelled-pairs":
        return export_labelled_pairs(args)
    with store.connect(args.db, read_only=True) as con:
        run_id = store.resolve_run_id(con, args.run_id)
        store.run_config(con, run_id)  # an unknown run is bad input, not an empty file
        if args.what == "rounds":
            frame = store.rounds_export(con, run_id)
        elif args.what == "detections":
            frame = store.detections_export(con, run_id)
        else:
            frame = metrics_frame(con, run_id)
    write_frame(frame, args.out, args.format or "jsonl")
    print(f"{len(frame)} {args.what} rows of run {run_id} → {args.out}")


def export_study(args) -> None:
    from mortar import store
    from mortar.report_html import study_html
    from mortar.study_report import study_frame

    if args.format == "html":
        if args.what is not None:
            raise UserError("--format html writes the whole report of the study; leave out --what")
        with store.connect(args.db, read_only=True) as con:
            study_id = store.resolve_study_id(con, args.run_id)
            page = study_html(con, study_id)
        return write_page(page, args.out, f"study {study_id}")
    if args.what not in (None, "metrics") or args.format == "junit":
        raise UserError("a study exports its metrics (one row per system × relation × perturbation, --what metrics) "
                        "or its HTML report (--format html); export a system's run for the rest")
    with store.connect(args.db, read_only=True) as con:
        study_id = store.resolve_study_id(con, args.run_id)
        frame = study_frame(con, study_id)
    write_frame(frame, args.out, args.format or "jsonl")
    print(f"{len(frame)} metrics rows (system × relation × perturbation) of study {study_id} → {args.out}")


def export_transformed(args) -> None:
    from mortar import store
    from mortar.methods import methods
    from mortar.pipeline import augmented_dataset, write_json

    if args.format not in (None, "json"):
        raise UserError("--what transformed writes the run's dataset format (CoQA v1.0 JSON for a dialogue dataset); "
                        "leave out --format")
    with store.connect(args.db, read_only=True) as con:
        run_id = store.resolve_run_id(con, args.run_id)
        if fmt := nlu_format(con, run_id):
            return export_utterances(con, run_id, args.out, fmt)
        frame = store.transformed_rounds(con, run_id, methods()[DIALTEST_METHOD].perturbations)
    if frame.empty:
        raise UserError(f"run {run_id} has no DialTest test cases (run it with --method dialtest)")
    doc = augmented_dataset(frame, run_id)
    write_json(doc, args.out)
    print(f"{len(doc['data'])} transformed dialogues of run {run_id} → {args.out} (CoQA v1.0 JSON)")


def nlu_format(con, run_id: str) -> str | None:
    """The format of the run's dataset when it is an intent/slot one (nlu, snips, atis), else None."""
    from mortar.augment import stored_run_config
    from mortar.config import NLU_FORMATS
    from mortar.formats import format_of

    config = stored_run_config(con, run_id)
    try:
        fmt = format_of(config.dataset, config.dataset_format)
    except (ValueError, OSError):  # a dataset that is gone or unreadable: not an intent/slot one to write
        return None
    return fmt if fmt in NLU_FORMATS else None


def export_utterances(con, run_id: str, out: str, fmt: str) -> None:
    """DialTest's transformed utterances of a run on an intent/slot dataset, labelled, in its format ``fmt``."""
    from mortar.augment import augmented_utterances
    from mortar.formats.nlu import write

    records, left_out, _ = augmented_utterances(con, run_id)
    if not records:
        raise UserError(f"run {run_id} has no transformed utterance to export (run it with --method dialtest)")
    if fmt != "nlu":  # Snips and ATIS hold single utterances: the transformed one alone
        records = [r for r in records if r["transformed"]]
    try:
        write(records, out, fmt)
    except OSError as e:
        raise UserError(f"{out}: cannot write: {e.strerror}") from None
    n = sum(r["transformed"] for r in records)
    print(f"{n} transformed utterances of run {run_id} → {out} ({fmt}, the dataset's format; their seed's intent, "
          f"its slot tags on the words kept){f'; {left_out} left out (back translation: no slot tags)' if left_out else ''}")


def cmd_retrain(args) -> None:
    import pandas as pd

    from mortar import store
    from mortar.augment import retraining_check

    with store.connect(args.db, read_only=True) as con:
        run_id = store.resolve_run_id(con, args.run_id)
        rows = retraining_check(con, run_id)
    print(f"The bundled intent/slot model retrained with the transformed utterances of run {run_id}'s training "
          "dialogues (the paper's Table 7):")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}"))


def export_labelled_pairs(args) -> None:
    from mortar import store
    from mortar.calibrate import write_pairs
    from mortar.reports import run_calibration_set

    if args.format not in (None, "jsonl"):
        raise UserError("--what labelled-pairs writes the JSONL that `mortar score-answers` reads; leave out --format")
    with store.connect(args.db, read_only=True) as con:
        run_id = store.resolve_run_id(con, args.run_id)
        pairs = run_calibration_set(con, run_id)
    try:
        write_pairs(pairs, args.out)
    except OSError as e:
        raise UserError(f"{args.out}: cannot write: {e.strerror}") from None
    print(f"{len(pairs)} labelled detections of run {run_id} → {args.out} (calibrate the oracle with "
          f"`mortar score-answers {args.out} --oracle ORACLE --out SCORED.jsonl`)")


def export_html(args) -> None:
    from mortar import store
    from mortar.report_html import html_report

    if args.what is not None:
        raise UserError("--format html writes the whole report of the run; leave out --what")
    with store.connect(args.db, read_only=True) as con:
        run_id = store.resolve_run_id(con, args.run_id)
        page = html_report(con, run_id)
    write_page(page, args.out, f"run {run_id}")


def write_page(page: str, out: str, what: str) -> None:
    try:
        Path(out).write_text(page, encoding="utf-8")
    except OSError as e:
        raise UserError(f"{out}: cannot write: {e.strerror}") from None
    print(f"report of {what} → {out} (one HTML file that opens offline)")


def write_frame(frame, out: str, fmt: str) -> None:
    try:
        if fmt == "csv":
            frame.to_csv(out, index=False)
        elif fmt == "parquet":
            frame.to_parquet(out, index=False)
        else:
            frame.to_json(out, orient="records", lines=True, force_ascii=False)
    except OSError as e:
        raise UserError(f"{out}: cannot write: {e.strerror}") from None


def cmd_prioritise(args) -> None:
    from mortar.guide.prioritise import IDEAL, INITIAL
    from mortar.prioritise import prioritise_run

    with ProgressBar() as bar:
        result = prioritise_run(args.run_id, args.by, args.db, args.target, bar)
    order = result["order"]
    if args.out:
        try:
            Path(args.out).write_text("".join(t + "\n" for t in order), encoding="utf-8")
        except OSError as e:
            raise UserError(f"{args.out}: cannot write: {e.strerror}") from None
    print(f"run {result['run_id']}: {len(order)} test cases ordered by {args.by} (stored; "
          f"`mortar run … --budget N --order {args.by}` runs the first N)" + (f" → {args.out}" if args.out else ""))
    for tcid in order[:args.show]:
        print(f"  {tcid}")
    seconds = result["seconds"]
    if seconds:
        answer = result["answer_seconds"]
        per_seed = sum(seconds.values()) / len(seconds)
        answering = f"; the SUT answers a seed's {result['rounds_per_seed']:.0f} rounds in about " \
                    f"{answer * result['rounds_per_seed']:.1f} s" if answer else ""
        print(f"scores: {per_seed:.1f} s per seed (computed now or stored before){answering}")
    evaluation = result["evaluation"]
    if evaluation:
        print("APFD on the run's detections (1 = every bug found by the first test case):")
        for name, figures in evaluation.items():
            spread = f" ± {figures['sd']:.3f} (sd over 20 random orders)" if "sd" in figures else ""
            note = {INITIAL: " (the order the run made them in)", IDEAL: " (greedy, knowing the bugs: the bound)"}
            print(f"  {name:>8}: {figures['apfd']:.3f}{spread}{note.get(name, '')}")


def cmd_score_answers(args) -> None:
    from mortar.calibrate import PairsError, format_summary, score_answers

    try:
        summary = score_answers(args.pairs, args.oracle, args.threshold, args.out)
    except PairsError as e:
        raise UserError(str(e)) from None
    print(format_summary(summary))


def export_junit(args) -> None:
    from mortar import store
    from mortar.junit import write_junit

    if args.what not in (None, "detections"):
        raise UserError("--format junit writes every check of the run, failures with their answers; leave out --what")
    with store.connect(args.db, read_only=True) as con:
        run_id = store.resolve_run_id(con, args.run_id)
        tests, failures = write_junit(con, run_id, args.out)
    print(f"{tests} test cases (seed questions per relation), {failures} failed, of run {run_id} → {args.out} (JUnit)")


def gate_options(args) -> tuple[list, str | None]:
    """The --fail-on budgets and the --baseline run (resolved), checked before any work starts."""
    from mortar import store
    from mortar.budgets import needs_baseline, parse_budgets

    budgets = parse_budgets(args.fail_on)
    baseline = getattr(args, "baseline", None)
    if needs_baseline(budgets) and not baseline:
        raise UserError("--fail-on NEW needs --baseline RUN: the run whose detections are not new")
    if baseline:
        with store.connect(args.db, read_only=True) as con:
            baseline = store.resolve_run_id(con, baseline)
            store.run_config(con, baseline)  # an unknown run is bad input
    return budgets, baseline


def check_budgets(db, run_id: str, budgets: list, baseline: str | None) -> None:
    """Print the run's figures against its budgets (and its detections against the baseline run); raise
    BudgetExceeded (exit 3) when a budget is exceeded."""
    from mortar import store
    from mortar.compare import diff, read_pair
    from mortar.budgets import describe, enforce, gate_run

    with store.connect(db, read_only=True) as con:
        results = gate_run(con, run_id, budgets, baseline)
        pair = read_pair(con, baseline, run_id) if baseline else None
    if pair:
        gone, new, both = diff(*pair)
        print(f"  against {baseline}: {len(new)} new detections, {len(gone)} gone, {len(both)} in both "
              f"(mortar compare {baseline} {run_id})")
    for budget, value, exceeded in results:
        if not exceeded:
            print(f"  budget kept: {describe(budget, value)}")
    enforce(results)


def cmd_gate(args) -> None:
    from mortar import store

    budgets, baseline = gate_options(args)
    if not budgets:
        raise UserError("give the budgets to check: --fail-on BUDGET")
    with store.connect(args.db, read_only=True) as con:
        run_id = store.resolve_run_id(con, args.run_id)
    print(f"run {run_id}")
    check_budgets(args.db, run_id, budgets, baseline)


def cmd_compare(args) -> None:
    import pandas as pd

    from mortar import store
    from mortar.compare import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE, compare_runs, detection_rows,
                                interval_table)
    from mortar.budgets import describe, enforce, gate_run, parse_budgets

    budgets = parse_budgets(args.fail_on)
    with store.connect(args.db, read_only=True) as con:
        run_a, run_b = store.resolve_run_id(con, args.run_a), store.resolve_run_id(con, args.run_b)
        result = compare_runs(con, run_a, run_b)
        suts = store.sut_of_runs(con, (run_a, run_b))
        seeds = len(store.run_seeds(con, run_a))
        gated = gate_run(con, run_b, budgets, run_a) if budgets else []
    print(f"A = {run_a} (SUT {suts.get(run_a)}), B = {run_b} (SUT {suts.get(run_b)}): same test cases")
    print("\nDetections per relation and bug level (a detection is the same check violated in both runs)")
    print(pd.DataFrame(result.rows).to_string(index=False))
    print(f"\nRate+ and NBugs with {CONFIDENCE:.0%} bootstrap intervals over the {seeds} seed dialogues "
          f"({BOOTSTRAP_RESAMPLES} resamples of the seeds, RNG seed {BOOTSTRAP_SEED}; B - A paired)")
    print(pd.DataFrame(interval_table(result.intervals)).to_string(index=False))
    print(f"\nNew detections in B: {len(result.only_b)}")
    for row in detection_rows(result.only_b[:args.show], result.questions):
        level = f" {row['level']}" if row["level"] else ""
        print(f"  {row['detection_id']}{level}: {row['question']!r} answered {row['answer']!r}, "
              f"compared with {row['compared with']!r} (similarity {row['similarity']:.3f})")
    if len(result.only_b) > args.show:
        print(f"  … and {len(result.only_b) - args.show} more (--show N)")
    for budget, value, exceeded in gated:
        if not exceeded:
            print(f"budget kept: {describe(budget, value)}")
    enforce(gated)


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}" if minutes >= 60 else f"{minutes}:{seconds:02d}"


PROGRESS_LOG_EVERY_S = 30.0  # where stderr is no terminal: the longest silence between two progress lines


class ProgressBar:
    """A one-line progress bar on stderr for the engine's progress callbacks.

    Where stderr is no terminal (a background job's log file, CI), a plain line instead, on every new
    stage and at least every ``log_every_s`` while work goes on: stage, done/total, rate and ETA.
    """

    def __init__(self, also=None, log_every_s: float | None = None, stream=None):
        self.also = also  # another progress callback fed the same reports (a background job's)
        self.log_every_s = PROGRESS_LOG_EVERY_S if log_every_s is None else log_every_s
        self.stream = stream  # None: sys.stderr when entered

    def __enter__(self):
        self.shown = False
        self.out = self.stream or sys.stderr
        self.latest = None  # (done, total, info) of the last report
        self.logged = None  # the report the last line showed
        self.started: dict[str, tuple[float, int]] = {}  # stage → (when, done) at its first report
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.ticker = None
        if not self.out.isatty():
            self.ticker = threading.Thread(target=self._tick, name="progress-log", daemon=True)
            self.ticker.start()
        return self

    def __call__(self, done: int, total: int, info: dict | None = None) -> None:
        if self.also:
            self.also(done, total, info)
        info = info or {}
        if self.ticker is not None:
            with self.lock:
                self.started.setdefault(info.get("stage", ""), (time.monotonic(), done))
                previous = self.latest
                new_stage = previous is None or previous[2].get("stage") != info.get("stage")
            if new_stage and previous is not None and previous is not self.logged:
                self._log()  # where the stage that ends got to
            with self.lock:
                self.latest = (done, total, info)
            if new_stage:
                self._log()
            return
        if not self.out.isatty():
            return
        width = 30
        filled = int(width * done / max(1, total))
        rate = info.get("answers_per_second") or 0.0
        speed = f"  {rate:.2f} answers/s, ETA {_duration((total - done) / rate)}" if rate > 0 else ""
        self.out.write(f"\r{info.get('stage', ''):>16} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{speed}\033[K")
        self.out.flush()
        self.shown = True

    def _tick(self) -> None:
        while not self.stop.wait(self.log_every_s):
            self._log()

    def _log(self) -> None:
        """One line for the latest report: stage, done/total, rate, ETA (the rate of answers where the
        executor measures it, else of this stage's reports since its first)."""
        with self.lock:
            if self.latest is None:
                return
            done, total, info = self.logged = self.latest
            stage = info.get("stage") or "working"
            rate = info.get("answers_per_second")
            if rate is None:
                since, done_then = self.started.get(info.get("stage", ""), (time.monotonic(), done))
                elapsed = time.monotonic() - since
                rate = (done - done_then) / elapsed if elapsed > 0 else 0.0
            unit = "answers" if "answers_per_second" in info else "steps"
            eta = _duration((total - done) / rate) if rate > 0 and total >= done else "unknown"
            line = (f"{time.strftime('%H:%M:%S')} {stage}: {done}/{total} {unit} done "
                    f"({100 * done / max(1, total):.0f}%), {rate:.2f} {unit}/s, ETA {eta}")
            self.out.write(line + "\n")
            self.out.flush()

    def __exit__(self, *exc):
        if self.ticker is not None:
            self.stop.set()
            self.ticker.join()
            if self.latest is not self.logged:
                self._log()  # the last count, so the log ends where the work did
        if self.shown:
            self.out.write("\n")
        return False


EXIT_CODES = (f"exit codes: 0 done; 1 a bug or a service that stayed down; {EXIT_USER_ERROR} bad input (one line); "
              f"{EXIT_BUDGET_EXCEEDED} a --fail-on budget exceeded (one line naming it; the run is stored)")


def add_gate_options(p: argparse.ArgumentParser, baseline: str | None) -> None:
    """--fail-on BUDGET (repeatable, or a comma list) and, where the command has no run A, --baseline RUN."""
    p.add_argument("--fail-on", action="append", metavar="BUDGET",
                   help=f"exit {EXIT_BUDGET_EXCEEDED} when a figure exceeds this budget: KEY[:SCOPE]>LIMIT or >=, "
                        "KEY one of RATE (Rate+), NBUGS, L1, L2, L3 (bugs of a level), NEW (detections the baseline "
                        "run did not have); SCOPE a relation or method (RATE:MR1, NBUGS:MT); e.g. 'RATE>0.30,L1>10'. "
                        "Repeatable")
    if baseline:
        p.add_argument("--baseline", metavar="RUN",
                       help=f"a run of the same test cases to compare with ({baseline}>N counts detections it did "
                            "not have); a run id or 'latest'")


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options of a run configuration beside the dataset and the SUT (shared by `run` and `study`)."""
    p.add_argument("--profile", choices=PROFILES,
                   help="a named set of settings: paper = the paper's cosine oracle at ε 0.6, order-blind context "
                        "check, no story-support exemption, the LLM knowledge-graph pipeline when an endpoint is "
                        "configured; options given beside it keep their values")
    p.add_argument("--oracle", default=DEFAULT_ORACLE, choices=list(ORACLES),
                     help="answer oracle: 'answer' (default: reads the answer's polarity, number or entity before "
                          "comparing), or the paper's 'cosine' (MiniLM embeddings) and 'mss'")
    p.add_argument("--threshold", type=float, default=None,
                     help="pass threshold ε (default: 0.5 for answer, the paper's 0.6 for cosine and mss)")
    p.add_argument("--limit", type=_positive, help="only the first N seeds")
    p.add_argument("--lanes", type=int, metavar="N",
                     help=f"conversations answered at once: a local model's batch size (default {LOCAL_LANES}), an HTTP SUT's "
                          "requests in flight (default 4; 64 and more for a serving engine such as vLLM). Never "
                          "changes an answer, so not the run id either")
    p.add_argument("--system-prompt", metavar="TEXT",
                   help="the SUT's system prompt, with {story} where the story goes (default: the paper's: answer "
                        "concisely from the story, \"Unknown\" when it does not say); part of the SUT's fingerprint")
    p.add_argument("--max-new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS, metavar="N",
                     help=f"longest answer in tokens (default {DEFAULT_MAX_NEW_TOKENS}); part of the SUT's "
                          "fingerprint, so another value is another run")
    p.add_argument("--orig-repeats", type=_positive, default=1, metavar="R",
                     help="the noise floor: answer each seed dialogue (ORIG) R times (default 1). A detection on a "
                          "question whose ORIG answers already disagree is marked unstable and reported apart; "
                          "for SUTs that do not answer the same way every time (sampling, some APIs at temperature 0)")
    p.add_argument("--confirm", type=_count, default=0, metavar="K",
                     help="confirmed detections: ask every detection's conversations K more times (default 0: not "
                          "at all), past the answer cache and the server's prompt cache where it allows (llama.cpp's "
                          "cache_prompt); a detection its relation does not find again every time is marked flaky "
                          "and reported apart, in no headline figure nor CI budget")
    p.add_argument("--method", default=MORTAR_METHOD,
                     help=f"test method: one name, a comma list or '{ALL_METHODS}' (default {MORTAR_METHOD}); methods "
                          "run on the same seeds and SUT and are compared in one report")
    for name, method in methods().items():  # every method's settings, from their declarations
        if name != MORTAR_METHOD:  # MORTAR's are shared with `generate` (add_perturbation_options)
            add_settings_options(p.add_argument_group(f"{method.label} ({name}) settings"), method)
    p.add_argument("--targets", choices=(RANDOM, *SENSITIVITIES), default="random",
                     help="which words METAL's and DialTest's operators change: random (default), or the words the "
                          "SUT's answer is most sensitive to, by gradient (gri) or by attention to its least "
                          "confident answer tokens (wali); local SUTs only")
    p.add_argument("--budget", type=_positive, metavar="N",
                     help="execute only the first N test cases (ORIG always runs), in --order")
    p.add_argument("--order", choices=(INITIAL, *ORDERS), default=INITIAL,
                     help="with --budget: initial (default), gri / wali (the rounds and words the answers lean on, "
                          "from the seed conversations), gini (the SUT's uncertainty), random; gri, wali and gini "
                          "need a local model")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mortar", description="Multi-turn metamorphic testing of dialogue systems.",
                                     epilog=EXIT_CODES)
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="perturb a dataset's seeds into test cases (stored and exported as JSONL)")
    gen.add_argument("dataset", help="CoQA v1.0 JSON or JSONL dialogues")
    gen.add_argument("--out", required=True, help="JSONL file to write the test cases to")
    add_perturbation_options(gen)
    gen.set_defaults(func=cmd_generate)

    run = sub.add_parser("run", help="test a dialogue system: generate → context check → execute → judge → store",
                         epilog=EXIT_CODES)
    run.add_argument("--dataset", help="CoQA v1.0 JSON or JSONL dialogues (required unless --config is given)")
    run.add_argument("-c", "--config", metavar="FILE",
                     help="a run file: the run configuration as YAML or JSON (the keys of a stored run's "
                          "run_config; the dashboard writes one for a background run); options given beside it "
                          "override its values")
    run.add_argument("--sut", action="append",
                     help="system under test: smollm2 (default, local), gemma3-270m, a model folder, "
                          "openai[:MODEL] or groq[:MODEL] (keys from the environment), module:function (a "
                          "Python function of the chat's messages that returns the answer), or on an intent/slot "
                          "dataset recurrent[:FILE], openai-tools[:MODEL][@FILE] or "
                          "hf-nlu:INTENT_FOLDER[+SLOT_FOLDER]")
    add_run_options(run)
    run.add_argument("--job", help=argparse.SUPPRESS)  # set by the dashboard for a background run
    add_gate_options(run, "--fail-on NEW")
    add_perturbation_options(run)
    run.set_defaults(func=cmd_run)

    stu = sub.add_parser("study", help="test several dialogue systems on one test suite and read them side by side "
                                       "(the paper's DS1–DS6): a study file, or the run options with --sut repeated",
                         epilog=EXIT_CODES)
    stu.add_argument("study_file", nargs="?", help="a study file (YAML or JSON): the run settings and a list of "
                                                  "systems, each with a name, a sut and optionally system_prompt, "
                                                  "max_new_tokens, base_url, api_key_env (the NAME of its key's "
                                                  "variable), lanes")
    stu.add_argument("--dataset", help="CoQA v1.0 JSON or JSONL dialogues (without a study file)")
    stu.add_argument("--sut", action="append", help="a system under test, once per system (without a study file)")
    stu.add_argument("--name", help="the study's name in reports and the dashboard")
    add_run_options(stu)
    stu.add_argument("--job", help=argparse.SUPPRESS)  # set by the dashboard for a background study
    add_perturbation_options(stu)
    stu.set_defaults(func=cmd_study, config=None)

    comp = sub.add_parser("completion", help="print a shell completion script: eval \"$(mortar completion bash)\"")
    comp.add_argument("shell", choices=("bash", "zsh", "tcsh"))
    comp.set_defaults(func=cmd_completion)

    srv = sub.add_parser("serve", help="serve a bundled local model as an OpenAI-compatible endpoint (a study of "
                                       "endpoints without a GPU server, or the models for another tool)")
    srv.add_argument("--sut", default=DEFAULT_SUT, help="smollm2 (default), gemma3-270m or a model folder")
    srv.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback only)")
    srv.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free one)")
    srv.set_defaults(func=cmd_serve)

    score = sub.add_parser("score-answers", help="score question/gold/candidate pairs with an oracle; calibrate it "
                                                  "when the pairs carry a boolean 'acceptable'")
    score.add_argument("pairs", help="JSONL: question, gold, candidate (other fields are kept)")
    score.add_argument("--oracle", default=DEFAULT_ORACLE, choices=list(ORACLES))
    score.add_argument("--threshold", type=float, default=None, help="pass threshold (default: the oracle's)")
    score.add_argument("--out", required=True, help="JSONL with score, pass and reason added")
    score.set_defaults(func=cmd_score_answers)

    rep = sub.add_parser("report", help="print a run's metrics and the paper's Tables VI–IX, or a study's tables "
                                        "with one row per system")
    rep.add_argument("run_id", help="a run id or 'latest', or a study id (stu-…)")
    rep.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")
    rep.set_defaults(func=cmd_report)

    ret = sub.add_parser("retrain", help="the paper's Table 7 for a DialTest run on an intent/slot dataset: the "
                         "bundled model trained with and without the transformed utterances of the training dialogues, "
                         "measured on the test dialogues as they are and as transformed")
    ret.add_argument("run_id", help="a run id or 'latest' (a DialTest run on an intent/slot dataset split into train "
                                    "and test dialogues)")
    ret.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")
    ret.set_defaults(func=cmd_retrain)

    pri = sub.add_parser("prioritise", help="order a run's test cases so bugs are found early (white-box guidance on "
                                            "local SUTs), store the order and measure it with APFD")
    pri.add_argument("run_id", help="a run id, or 'latest'")
    pri.add_argument("--by", choices=ORDERS, required=True,
                     help="gri / wali: the SUT's sensitivity to the rounds and words the test case disturbs; gini: "
                          "the SUT's uncertainty on the seed question; random (gri, wali, gini need a local model)")
    pri.add_argument("--target", choices=TARGETS, default=GOLD,
                     help="gri / wali explain the gold answer (default) or the SUT's own greedy answer")
    pri.add_argument("--out", help="also write the order, one test case id per line")
    pri.add_argument("--show", type=int, default=10, help="print the first N test cases (default 10)")
    pri.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")
    pri.set_defaults(func=cmd_prioritise)

    exp = sub.add_parser("export", help="write a run's rounds, detections or metrics to a file")
    exp.add_argument("run_id", help="a run id or 'latest', or a study id (stu-…: its metrics or its HTML report)")
    exp.add_argument("--what", choices=("rounds", "detections", "metrics", "transformed", "labelled-pairs"),
                     default=None,
                     help="transformed: DialTest's kept transformed questions with their gold answers, as a CoQA "
                          "v1.0 JSON dataset (the paper retrains on it) — on an intent/slot dataset, its transformed "
                          "utterances with their intent and slot tags in the dataset's own format (nlu JSON, Snips "
                          "JSON, or an ATIS folder at --out); labelled-pairs: the labelled detections "
                          "flagged for a low similarity, as the JSONL `mortar score-answers` calibrates an oracle on "
                          "(acceptable = the final label says false positive)")
    exp.add_argument("--format", choices=("jsonl", "csv", "parquet", "junit", "html"), default=None,
                     help="rows' file format (default jsonl; transformed is always CoQA JSON); junit: a JUnit XML "
                          "report for CI, one test case per seed question and relation (no --what); html: the "
                          "run's report with figures and worked examples as one self-contained file to share "
                          "(no --what)")
    exp.add_argument("--out", required=True)
    exp.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")
    exp.set_defaults(func=cmd_export)

    cmp = sub.add_parser("compare", help="compare two runs of the same test cases (two SUTs, or two versions of one): "
                                         "detections only in A, only in B, in both; Rate+ and NBugs with bootstrap "
                                         "intervals; B's new detections", epilog=EXIT_CODES)
    cmp.add_argument("run_a", help="run A (the baseline): a run id, or 'latest'")
    cmp.add_argument("run_b", help="run B (the candidate): a run id, or 'latest'")
    cmp.add_argument("--show", type=_count, default=20, metavar="N", help="print at most N new detections (default 20)")
    add_gate_options(cmp, None)  # budgets on run B; NEW counts B's detections that A did not have
    cmp.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")
    cmp.set_defaults(func=cmd_compare)

    gate = sub.add_parser("gate", help="check a stored run against --fail-on budgets without running it again",
                          epilog=EXIT_CODES)
    gate.add_argument("run_id", help="a run id, or 'latest'")
    add_gate_options(gate, "--fail-on NEW")
    gate.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")
    gate.set_defaults(func=cmd_gate)
    return parser


def _terminate(signum, frame):
    raise KeyboardInterrupt  # a cancelled background run: stop cleanly, keeping what is stored


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.given = given_options(build_parser(), argv)
    signal.signal(signal.SIGTERM, _terminate)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        args.func(args)
    except BudgetExceeded as e:  # `--fail-on`: the run is stored; the build should fail
        print(f"mortar: budget exceeded: {e}", file=sys.stderr)
        return EXIT_BUDGET_EXCEEDED
    except InputError as e:  # the project's own input errors; anything else is a bug and keeps its traceback
        print(f"mortar: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except ServiceError as e:  # an LLM service that stayed down after its retries; nothing half-written
        print(f"mortar: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
