"""The executor against what a user would pick instead, on the same conversations, in one run.

Every row answers the test cases of the first ``--seeds`` sample seeds (the same rounds, greedy, the same SmolLM2
weights) in a child process of its own, so each peak RSS is its own:

- ``executor``: ``mortar.execute.execute`` with the ``smollm2`` SUT (prefix tree, KV reuse, batched lanes);
- ``generate_batch``: transformers' continuous batching (paged attention, prefix sharing), stock model, fed wave by
  wave: round k of every test case once round k-1 of all of them is answered, the best a user can do with it;
- ``llama-server``: llama.cpp's server, a separate process on loopback with ``--slots`` slots, continuous batching
  and prompt caching, on the GGUF the ``smollm2`` preset itself is converted from, asked by our HTTP SUT at
  ``--slots`` lanes in the conversation-prefix tree's order; its peak RSS is the server's;
- ``llama-server, one at a time``: the same server asked by a plain client, one request after another;
- ``naive``: a loop of ``model.generate`` calls on the same model, no cache: the floor, and the greedy
  ``generate`` answers every other row is compared with.

For each it prints answers/s, wall time (answering only: loading and server start are not counted), peak RSS, the
share of answers identical to greedy ``generate``, then the executor's ratio to the best peer. The server is built from the llama-cpp-python sdist by ``benchmarks/build_llama_server.sh`` (run first,
about 4-8 minutes; without it the llama rows say why in one line and the others are measured).

    .venv/bin/python benchmarks/peer_throughput.py                 # first seed, every peer
    .venv/bin/python benchmarks/peer_throughput.py --seeds 2 --peers executor,llama-server
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(ROOT))

LLAMA_SERVER = ROOT / "data" / "cache" / "llama.cpp" / "build" / "bin" / "llama-server"
PEERS = ("executor", "generate_batch", "llama-server", "llama-plain", "naive")
TITLES = {"executor": "executor (ours)", "generate_batch": "transformers generate_batch, wave by wave",
          "llama-server": "llama-server, our HTTP SUT", "llama-plain": "llama-server, one at a time",
          "naive": "naive generate loop"}
MODEL_NAME = "smollm2"


def workload(seeds: int):
    from mortar.dataset import Dataset
    from mortar.formats import load_dataset
    from mortar.perturb import PerturbationSettings, test_cases_for

    full = load_dataset(ROOT / "data" / "sample_coqa.json")
    dataset = Dataset(full.path, full.sha256, full.seeds[:seeds])
    cases = [c for s in dataset.seeds for c in test_cases_for(s, 0, PerturbationSettings())]
    return dataset.seeds, cases


def one_at_a_time(answer, seeds, cases) -> dict:
    """Every round of every test case in order, each conversation carrying this system's own earlier answers."""
    from mortar.sut import Conversation, Turn

    by_id = {s.id: s for s in seeds}
    answers = {}
    for case in cases:
        seed, history = by_id[case.seed_id], []
        for position, turn_id in enumerate(case.source_rounds, start=1):
            conversation = Conversation(seed.story, tuple(history), seed.round(turn_id).question)
            text = answer(conversation)
            answers[f"{case.test_case_id}|{position}"] = text
            history.append(Turn(conversation.question, text))
    return answers


def local_sut(args):
    from mortar.sut import SutSettings, make_sut

    return make_sut(MODEL_NAME, SutSettings(max_new_tokens=args.max_new_tokens))


def greedy_answer(sut, model, tokenizer):
    """``conversation -> text`` by one ``model.generate`` call on the whole rendered conversation."""
    import torch

    from mortar.sut.local import stop_token_ids

    stop = sorted(stop_token_ids(model, tokenizer, sut.local.stop_at_newline))

    def answer(conversation) -> str:
        ids = torch.tensor([sut.prompt_ids(conversation)])
        with torch.inference_mode():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                 max_new_tokens=sut.settings.max_new_tokens, eos_token_id=stop,
                                 pad_token_id=tokenizer.pad_token_id or stop[0])
        return finish(sut, tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True))

    return answer


def finish(sut, text: str) -> str:
    return (text.split("\n", 1)[0] if sut.local.stop_at_newline else text).strip()


def run_executor(args) -> dict:
    from mortar.execute import execute
    from mortar.store import StoreCache

    seeds, cases = workload(args.seeds)
    sut = local_sut(args)
    sut.loaded  # noqa: B018 - load before the clock starts
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        answers = execute(seeds, cases, sut, StoreCache(Path(tmp) / "bench.duckdb"))
        wall = time.perf_counter() - start
    return {"wall_s": wall, "answers": {f"{tc}|{pos}": a.text for (tc, pos), a in answers.items()}}


def run_naive(args) -> dict:
    seeds, cases = workload(args.seeds)
    sut = local_sut(args)
    model, tokenizer = sut.loaded
    start = time.perf_counter()
    answers = one_at_a_time(greedy_answer(sut, model, tokenizer), seeds, cases)
    return {"wall_s": time.perf_counter() - start, "answers": answers}


def run_generate_batch(args) -> dict:
    from transformers import GenerationConfig

    from mortar.sut import Conversation, Turn
    from mortar.sut.local import load_model, stop_token_ids

    seeds, cases = workload(args.seeds)
    sut = local_sut(args)
    model, tokenizer = load_model(sut.local, packed=False)  # the stock model, as a user of transformers has it
    stop = sorted(stop_token_ids(model, tokenizer, sut.local.stop_at_newline))
    config = GenerationConfig(do_sample=False, max_new_tokens=args.max_new_tokens, eos_token_id=stop,
                              pad_token_id=tokenizer.pad_token_id or stop[0])
    by_id = {s.id: s for s in seeds}
    histories = {c.test_case_id: [] for c in cases}
    answers = {}
    start = time.perf_counter()
    for position in range(1, max(len(c.source_rounds) for c in cases) + 1):
        wave = [c for c in cases if len(c.source_rounds) >= position]
        conversations = [Conversation(by_id[c.seed_id].story, tuple(histories[c.test_case_id]),
                                      by_id[c.seed_id].round(c.source_rounds[position - 1]).question) for c in wave]
        outputs = model.generate_batch([sut.prompt_ids(x) for x in conversations], generation_config=config)
        for case, conversation, output in zip(wave, conversations, outputs.values()):
            text = finish(sut, tokenizer.decode(output.generated_tokens, skip_special_tokens=True))
            answers[f"{case.test_case_id}|{position}"] = text
            histories[case.test_case_id].append(Turn(conversation.question, text))
        print(f"  generate_batch: wave {position}, {len(answers)} answers, {time.perf_counter() - start:.0f} s",
              file=sys.stderr, flush=True)
    return {"wall_s": time.perf_counter() - start, "answers": answers}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_llama_server(slots: int, threads: int) -> tuple[subprocess.Popen, str]:
    """llama-server on the smollm2 preset's GGUF, on loopback; (process, base URL) once it answers /health."""
    import httpx

    from mortar.sut.local import smollm2

    folder, gguf = smollm2().source()
    port = free_port()
    server = subprocess.Popen(
        [str(LLAMA_SERVER), "-m", str(folder / gguf), "--host", "127.0.0.1", "--port", str(port),
         "--parallel", str(slots), "--ctx-size", str(4096 * slots), "--threads", str(threads),
         "--cont-batching", "--jinja", "--no-webui"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"llama-server exited with {server.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.kill()
    raise RuntimeError("llama-server did not answer /health within 120 s")


def peak_rss_of(pid: int) -> float:
    """A live process's peak resident memory (VmHWM) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_llama(args, lanes: int) -> dict:
    """Our HTTP SUT at ``lanes`` lanes in prefix-tree order (more than one), or a plain client one request at a
    time."""
    from mortar.execute import execute
    from mortar.store import StoreCache
    from mortar.sut import SutSettings, make_sut

    seeds, cases = workload(args.seeds)
    server, url = start_llama_server(args.slots, args.threads)
    try:
        env = {"MORTAR_OPENAI_BASE_URL": f"{url}/v1", "MORTAR_OPENAI_API_KEY": ""}
        sut = make_sut(f"openai:{MODEL_NAME}", SutSettings(max_new_tokens=args.max_new_tokens), lanes=lanes,
                       env=env, timeout_s=600)
        start = time.perf_counter()
        if lanes > 1:
            with tempfile.TemporaryDirectory() as tmp:
                done = execute(seeds, cases, sut, StoreCache(Path(tmp) / "bench.duckdb"))
            answers = {f"{tc}|{pos}": a.text for (tc, pos), a in done.items()}
        else:
            answers = one_at_a_time(sut.answer, seeds, cases)
        wall = time.perf_counter() - start
        return {"wall_s": wall, "answers": answers, "peak_rss_mib": peak_rss_of(server.pid)}
    finally:
        server.terminate()
        server.wait(30)


def child(peer: str, args) -> dict:
    import resource

    import torch

    torch.set_num_threads(args.threads)
    run = {"executor": run_executor, "naive": run_naive, "generate_batch": run_generate_batch,
           "llama-server": lambda a: run_llama(a, a.slots), "llama-plain": lambda a: run_llama(a, 1)}
    result = run[peer](args)
    result.setdefault("peak_rss_mib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return result


def measure(peer: str, args) -> dict:
    """Run one peer in a child process of its own; its result, or {"error": why} in one line."""
    if peer.startswith("llama") and not LLAMA_SERVER.exists():
        return {"error": f"no llama-server at {LLAMA_SERVER.relative_to(ROOT)}: run benchmarks/build_llama_server.sh"}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [sys.executable, __file__, "--child", peer, "--child-out", out.name, "--seeds", str(args.seeds),
               "--slots", str(args.slots), "--threads", str(args.threads),
               "--max-new-tokens", str(args.max_new_tokens)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, text=True)
        if proc.returncode:
            return {"error": f"exited with {proc.returncode} (its errors are above)"}
        return json.loads(Path(out.name).read_text())


def share_same(result: dict, reference: dict | None) -> str:
    """How many of ``result``'s answers equal ``reference``'s for the same test round ("—" without a reference)."""
    if not reference or "answers" not in reference:
        return "—"
    hits = sum(reference["answers"].get(k) == text for k, text in result["answers"].items())
    return f"{hits}/{len(result['answers'])} = {hits / len(result['answers']):.1%}"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=1, help="first N seeds of the sample dataset (default 1)")
    p.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, of {', '.join(PEERS)}")
    p.add_argument("--slots", type=int, default=6, help="llama-server's slots and our HTTP SUT's lanes (default 6)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="threads of every peer")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--child", choices=PEERS, help=argparse.SUPPRESS)
    p.add_argument("--child-out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        Path(args.child_out).write_text(json.dumps(child(args.child, args)))
        return

    peers = [x.strip() for x in args.peers.split(",") if x.strip()]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        p.error(f"unknown peers {unknown}: choose from {', '.join(PEERS)}")
    seeds, cases = workload(args.seeds)
    rounds = sum(len(c.source_rounds) for c in cases)
    print(f"workload: {len(seeds)} seed(s), {len(cases)} test cases, {rounds} answers; {args.threads} threads, "
          f"max {args.max_new_tokens} new tokens, llama-server {args.slots} slots")
    results = {}
    for peer in peers:
        print(f"measuring {TITLES[peer]} …", file=sys.stderr, flush=True)
        results[peer] = measure(peer, args)
    print(f"\n{'system':<44} {'answers/s':>9} {'wall s':>8} {'peak RSS MiB':>12} {'identical to generate':>22}")
    for peer, r in results.items():
        if "error" in r:
            print(f"{TITLES[peer]:<44} not measured: {r['error']}")
            continue
        print(f"{TITLES[peer]:<44} {len(r['answers']) / r['wall_s']:>9.2f} {r['wall_s']:>8.1f} "
              f"{r['peak_rss_mib']:>12.0f} {share_same(r, results.get('naive')):>22}")
    others = {peer: r for peer, r in results.items()
              if not peer.startswith(("executor", "naive")) and "error" not in r}
    if others:
        best = min(others, key=lambda peer: others[peer]["wall_s"])
        if "wall_s" in results.get("executor", {}):
            print(f"executor vs the best peer ({TITLES[best]}): "
                  f"{others[best]['wall_s'] / results['executor']['wall_s']:.2f}x the answers per second")


if __name__ == "__main__":
    main()
