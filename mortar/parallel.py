"""Work that is independent per seed spread over processes, one a core: judging and the knowledge graphs.

Workers are spawned (a fresh interpreter each, never a fork of a process whose torch threads are running) and
load their own models, a few seconds each, so only runs of PARALLEL_FROM_SEEDS seeds or more are spread, and
only under the ``mortar`` command, whose main module is safe to import again in a worker. A script of one's own
may ask for workers with ``MORTAR_WORKERS`` when it keeps its work under ``if __name__ == "__main__":``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

PARALLEL_FROM_SEEDS = 100
MAX_WORKERS = 4


def workers_for(n_seeds: int) -> int:
    """Processes for ``n_seeds`` seeds of independent work: one a core (at most MAX_WORKERS) for a large run under
    the ``mortar`` command, else 1; ``MORTAR_WORKERS`` overrides."""
    if os.environ.get("MORTAR_WORKERS"):
        return max(1, int(os.environ["MORTAR_WORKERS"]))
    if n_seeds < PARALLEL_FROM_SEEDS or not under_mortar_command():
        return 1
    return min(MAX_WORKERS, os.cpu_count() or 1)


def under_mortar_command() -> bool:
    """Whether this process is the ``mortar`` command (or ``python -m mortar``)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return (spec is not None and spec.name.startswith("mortar")) or Path(getattr(main, "__file__", "") or "").name == "mortar"


def shares(items: Sequence, workers: int) -> list[Sequence]:
    """``items`` cut into ``workers`` contiguous shares (fewer when there are fewer items)."""
    size = -(-len(items) // max(1, workers))
    return [items[i:i + size] for i in range(0, len(items), size)] if items else []


class Workers:
    """Worker processes kept for one run, the k-th always given the k-th share of the seeds: the process that
    extracted a share's knowledge graphs judges the same share, reading the story parses it handed on
    (``mortar.nlp.hand_on``) instead of parsing the stories again, and loads spaCy once for both stages."""

    def __init__(self, n: int):
        spawn = get_context("spawn")
        self._pools = [ProcessPoolExecutor(1, mp_context=spawn, initializer=_one_thread) for _ in range(n)]
        self._pending: list = []

    def __len__(self) -> int:
        return len(self._pools)

    def run(self, task: Callable, jobs: list[tuple]) -> list:
        """``task(*job)`` for every job (at most one a worker), the k-th job in the k-th worker; the results in
        the jobs' order."""
        if len(jobs) > len(self._pools):
            raise ValueError(f"{len(jobs)} jobs for {len(self._pools)} workers")
        for started in self._pending:
            started.result()  # a failure of what was started ahead shows here
        self._pending = []
        futures = [pool.submit(task, *job) for pool, job in zip(self._pools, jobs)]
        return [f.result() for f in futures]

    def start_ahead(self, task: Callable, *args) -> None:
        """``task(*args)`` in every worker now, not waited for: what a later stage needs is loaded while this
        process does other work (the system answering)."""
        self._pending += [pool.submit(task, *args) for pool in self._pools]

    def close(self) -> None:
        for pool in self._pools:
            pool.shutdown()

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)  # one process a core


def spread(task: Callable, jobs: list[tuple], workers: Workers | None = None) -> list:
    """``task(*job)`` for every job, one worker process a job: in ``workers`` when given, else in processes
    started for these jobs; the results in the jobs' order."""
    if workers is not None:
        return workers.run(task, jobs)
    with Workers(len(jobs)) as started:
        return started.run(task, jobs)
