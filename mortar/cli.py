"""The ``mortar`` command: a thin shell over the engine."""

from __future__ import annotations

import argparse
import logging
import sys

from mortar.chat import ChatError as ServiceError
from mortar.dataset import DatasetError, load_dataset
from mortar.perturb import PERTURBATIONS, PerturbationSettings

EXIT_USER_ERROR = 2


class UserError(Exception):
    """Bad input from the user: reported in one line, exit code 2, no traceback."""


def _ratio(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def add_perturbation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="run seed: same seed, same test cases (default 0)")
    p.add_argument("--perturbations", nargs="+", choices=PERTURBATIONS, default=list(PERTURBATIONS),
                   metavar="P", help=f"perturbations to apply (default: all of {' '.join(PERTURBATIONS)})")
    p.add_argument("--replicates", type=_positive, default=1, help="test cases per seed and perturbation (default 1)")
    p.add_argument("--reduce-ratio", type=_ratio, default=0.3, help="share of rounds DRR/DSR drop (default 0.3)")
    p.add_argument("--duplicate-ratio", type=_ratio, default=0.2, help="share of rounds DRD/DSD repeat (default 0.2)")
    p.add_argument("--kg-backend", choices=("spacy", "llm"), default="spacy",
                   help="knowledge-graph extraction for the context check: spacy (offline, default) or llm")
    p.add_argument("--db", help="DuckDB file (default: $MORTAR_DB or data/mortar.duckdb)")


def settings_from(args) -> PerturbationSettings:
    return PerturbationSettings(reduce_ratio=args.reduce_ratio, duplicate_ratio=args.duplicate_ratio,
                                replicates=args.replicates, perturbations=tuple(args.perturbations))


def cmd_generate(args) -> None:
    from mortar.run import case_records, generate, write_jsonl

    dataset = load_dataset(args.dataset)
    extractor = make_extractor(args.kg_backend)
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


def make_extractor(backend: str):
    if backend == "spacy":
        from mortar.kg.spacy_backend import SpacyExtractor

        return SpacyExtractor()
    if backend == "llm":
        from mortar.chat import ChatConfigError
        from mortar.kg.llm import LlmExtractor

        try:
            return LlmExtractor.from_env()
        except ChatConfigError as e:
            raise UserError(f"--kg-backend llm: {e}") from None
    raise UserError(f"unknown knowledge-graph backend {backend!r}")


class ProgressBar:
    """A one-line progress bar on stderr for the engine's progress callbacks."""

    def __enter__(self):
        self.shown = False
        return self

    def __call__(self, done: int, total: int, info: dict | None = None) -> None:
        if not sys.stderr.isatty():
            return
        width = 30
        filled = int(width * done / max(1, total))
        stage = (info or {}).get("stage", "")
        sys.stderr.write(f"\r{stage:>16} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stderr.flush()
        self.shown = True

    def __exit__(self, *exc):
        if self.shown:
            sys.stderr.write("\n")
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mortar", description="Multi-turn metamorphic testing of dialogue systems.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="perturb a dataset's seeds into test cases (stored and exported as JSONL)")
    gen.add_argument("dataset", help="CoQA v1.0 JSON or JSONL dialogues")
    gen.add_argument("--out", required=True, help="JSONL file to write the test cases to")
    add_perturbation_options(gen)
    gen.set_defaults(func=cmd_generate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        args.func(args)
    except (DatasetError, UserError, LookupError) as e:
        print(f"mortar: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except ServiceError as e:  # an LLM service that stayed down after its retries; nothing half-written
        print(f"mortar: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
