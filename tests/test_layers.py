"""The engine's layers (docs/ARCHITECTURE.md): each module imports only its own layer and those below, imports
inside functions included, and the import graph has no cycle but the method registry loading its built-ins."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mortar"

# module (or package prefix) → layer; the most specific name wins
LAYERS = {
    0: ["mortar.vocab", "mortar.errors"],
    1: ["mortar.dataset", "mortar.formats", "mortar.kg.model", "mortar.kg", "mortar.verdict", "mortar.relations", "mortar.sut.base",
        "mortar.caches", "mortar.settings", "mortar.stages", "mortar.parallel"],
    2: ["mortar.perturb", "mortar.context", "mortar.nlp", "mortar.wordnet", "mortar.oracle", "mortar.oracle.agreement", "mortar.answers",
        "mortar.story_support", "mortar.mutation_gate", "mortar.alignment", "mortar.calibrate", "mortar.metrics", "mortar.guide",
        "mortar.sut", "mortar.sut.nlu_hf", "mortar.kg.llm", "mortar.kg.prompts", "mortar.kg.spacy_backend", "mortar.chat",
        "mortar.execute", "mortar.selection"],
    3: ["mortar.methods"],
    4: ["mortar.store"],
    5: ["mortar.config", "mortar.pipeline", "mortar.confirm", "mortar.judge", "mortar.reports", "mortar.compare", "mortar.budgets",
        "mortar.junit", "mortar.report_html", "mortar.figures", "mortar.labels", "mortar.glossary", "mortar.jobs",
        "mortar.prioritise", "mortar.profiles", "mortar.study", "mortar.study_report", "mortar.api", "mortar.testing",
        "mortar.augment"],
    6: ["mortar.cli", "mortar.__main__", "mortar.ui"],
}
HEAVY = {"torch", "transformers", "spacy", "coreferee", "sentence_transformers", "streamlit", "plotly", "kaleido",
         "groq", "duckdb", "pyarrow", "gguf", "accelerate", "numpy", "pandas", "playwright"}
REGISTRY = "mortar.methods"  # loads its own built-in methods lazily: the one cycle allowed


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return name.removesuffix(".__init__")


def layer_of(module: str) -> int:
    if module == "mortar":  # the package itself: it hands out the Python API (mortar.api) on first use
        return 6
    best, found = -1, None
    for layer, names in LAYERS.items():
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), layer
    if found is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/ARCHITECTURE.md")
    return found


def imports(path: Path, modules: set[str]):
    """(imported mortar module, inside a function?, line) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
            targets = [n for n in names if n in modules] or ([node.module] if node.module in modules else [])
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name in modules]
        else:
            continue
        for target in targets:
            yield target, node.col_offset > 0, node.lineno


def graph():
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return paths, {m: list(imports(p, modules)) for m, p in paths.items()}


def test_no_module_imports_from_a_higher_layer():
    paths, edges = graph()
    wrong = [f"{m}:{line} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
             for m, found in edges.items() for t, _, line in found
             if layer_of(t) > layer_of(m) and not (m == REGISTRY and t.startswith(REGISTRY + "."))]
    assert not wrong, "\n".join(wrong)


def test_the_import_graph_has_no_cycle():
    _, edges = graph()
    succ = {m: {t for t, _, _ in found if not (m == REGISTRY and t.startswith(REGISTRY + "."))}
            for m, found in edges.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m):
        state[m] = 1
        path.append(m)
        for t in succ.get(m, ()):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(succ):
        if m not in state:
            visit(m)


def test_imports_inside_functions_delay_a_heavy_load_and_say_so():
    """Outside the interfaces (the CLI loads late on purpose), an import inside a function is of a heavy library,
    or of a module that loads one at import, and its line or the line before says why."""
    lazy = []
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path)
        if layer_of(module) == 6:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node.col_offset > 0:
                top = (node.module if isinstance(node, ast.ImportFrom) else node.names[0].name) or ""
                if top.split(".")[0] in HEAVY:
                    continue
                said = lines[node.lineno - 1] + " " + lines[node.lineno - 2]
                if "#" not in said and "TYPE_CHECKING" not in said:
                    lazy.append(f"{module}:{node.lineno} {top}")
    assert not lazy, "imports inside functions without a reason:\n" + "\n".join(lazy)


@pytest.mark.parametrize("module", ["mortar.store", "mortar.metrics", "mortar.execute"])
def test_lower_layers_stand_alone(module):
    """The store, the counting functions and the executor load without the methods or the application."""
    import subprocess
    import sys

    code = (f"import sys, {module}; bad = [m for m in sys.modules if m.startswith(('mortar.methods', 'mortar.pipeline', "
            f"'mortar.config', 'mortar.reports'))]; print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
