"""The import layers hold: read every module's imports (ast) and fail on what the design rules out.

- no import circle between boilerstrip's modules (imports inside functions count too: an import moved into
  a function to dodge a circle is still a circle);
- a Scrapy component package (downloadermiddlewares, spidermiddlewares, pipelines, extensions, spiders,
  downloadhandlers) imports pure packages and the shared glue (``outcomes``, ``feeds``, ``meta``...), never
  another component package: what two components share is pure code or a constant in a pure module;
- the distributed layer and the library below the CLI (``boilerstrip.run``) never import the CLI
  (``boilerstrip.cli``, ``boilerstrip.commands``);
- a private module (``_name.py``) is imported only from its own package;
- no module keeps per-page state at module level: a module-level name bound to an empty mutable container
  (``{}``, ``[]``, ``dict()``, ``set()``, ``WeakKeyDictionary()``...) can only be a cache or registry filled
  while the crawl runs. The few that hold something else are listed below with the reason;
- no state keyed by object identity, anywhere: no ``id()`` call, no ``WeakKeyDictionary``,
  ``WeakValueDictionary``, ``WeakSet`` or ``weakref.finalize``/``weakref.ref``. An object's identity is not
  a value: a memo keyed by it ties one component to the timing and object sharing of another (a page's
  reading keyed by ``id(html)`` was right only while the item held the response's very string). What a
  page's components share travels as plain data on ``response.meta`` and on the item. The few modules
  that still key something by identity are listed below with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "boilerstrip"
COMPONENTS = ("downloadermiddlewares", "spidermiddlewares", "pipelines", "extensions", "spiders", "downloadhandlers")
CLI = ("boilerstrip.cli", "boilerstrip.commands")
#: the layers that must not reach up to the CLI
BELOW_CLI = ("boilerstrip.distributed", "boilerstrip.run")
MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "WeakKeyDictionary",
                 "WeakValueDictionary", "WeakSet"}
#: module-level containers that carry no per-page data: (module, name) -> why
ALLOWED_STATE = {
    ("boilerstrip.extraction.blocks", "_NO_ATTRIBUTES"): "a shared empty mapping, never written",
    ("boilerstrip.finishing.steps", "_LOADED_MODELS"): "the template model file a worker process loaded for "
                                                       "the pass in progress, one at a time: not a page",
    ("boilerstrip.chunks.cut", "_closings"): "compiled patterns keyed by a code fence's characters: rules, not "
                                             "a page's data",
    ("boilerstrip.chunks.parse", "_closing_fences"): "compiled patterns keyed by a code fence's first character "
                                                     "and length: rules, not a page's data",
    ("boilerstrip.lifetime", "_PRCTL"): "libc's prctl, looked up once a process",
    ("boilerstrip.run", "_EARLY_SIGNALS"): "the signals this process received before its crawl's handler was "
                                           "in place",
    ("boilerstrip.settings", "DOWNLOADER_MIDDLEWARES"): "Scrapy settings, filled once at import",
    ("boilerstrip.settings", "SPIDER_MIDDLEWARES"): "Scrapy settings, filled once at import",
    ("boilerstrip.settings", "ITEM_PIPELINES"): "Scrapy settings, filled once at import",
    ("boilerstrip.settings", "EXTENSIONS"): "Scrapy settings, filled once at import",
    ("boilerstrip.settings", "DOWNLOAD_HANDLERS"): "Scrapy settings, filled once at import",
}


#: modules that key something by object identity: module -> why (none may hold a page's data)
ALLOWED_IDENTITY = {
    "boilerstrip.downloadhandlers.browser": "the browsers it watches for crashes, held by the dict itself (so an "
                                            "id() stays theirs): a browser, not a page",
}
IDENTITY_CALLS = {"id", "WeakKeyDictionary", "WeakValueDictionary", "WeakSet"}
IDENTITY_WEAKREF = {"finalize", "ref", "WeakKeyDictionary", "WeakValueDictionary", "WeakSet", "WeakMethod"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in MODULES.items()}


def _nearest_module(name: str) -> str | None:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def imports_of(module: str) -> Iterator[tuple[str, int]]:
    """(imported boilerstrip module, line) for every import statement of ``module``, at any depth."""
    is_package = MODULES[module].name == "__init__.py"
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # "from package import module" imports the module; "from module import name" the module
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] != "boilerstrip":
                continue
            found = _nearest_module(target)
            if found is not None and found != module:
                yield found, node.lineno


GRAPH = {module: sorted(set(imports_of(module))) for module in MODULES}


def _component(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in COMPONENTS else None


def _package(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]


def _edges() -> dict[str, set[str]]:
    """Module -> the modules its imports run: the imported module and the ``__init__`` of each package above
    it (importing ``a.b.c`` runs ``a/b/__init__.py`` first). A module's own packages are left out: their
    ``__init__`` is being run already when it imports a sibling, and that is the package being built, not
    a circle."""
    edges: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        runs: set[str] = set()
        for target, _ in targets:
            parts = target.split(".")
            for depth in range(2, len(parts) + 1):
                runs.add(".".join(parts[:depth]))
        edges[module] = {t for t in runs if t in MODULES and not (module + ".").startswith(t + ".")}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_checker_sees_imports() -> None:
    """The parser finds what a module imports (the tests below would pass vacuously otherwise)."""
    assert any(t == "boilerstrip.meta" for t, _ in GRAPH["boilerstrip.ledger.rules"])
    assert any(t == "boilerstrip.run" for t, _ in GRAPH["boilerstrip.commands.crawl"])
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle() -> None:
    assert _cycles(_edges()) == []


def test_no_component_package_imports_another() -> None:
    crossing = [f"{module}:{line} imports {target}" for module, targets in GRAPH.items() for target, line in targets
                if _component(module) and _component(target) and _component(module) != _component(target)]
    assert crossing == []


def test_the_layers_below_the_cli_do_not_import_it() -> None:
    upward = [f"{module}:{line} imports {target}" for module, targets in GRAPH.items() for target, line in targets
              if module.startswith(BELOW_CLI) and target.startswith(CLI)]
    assert upward == []


def test_private_modules_are_used_in_their_package_only() -> None:
    leaks = [f"{module}:{line} imports {target}" for module, targets in GRAPH.items() for target, line in targets
             if target.rsplit(".", 1)[-1].startswith("_") and not target.endswith("__init__")
             and MODULES[target].name != "__init__.py"
             and not (module + ".").startswith(target.rsplit(".", 1)[0] + ".")]
    assert leaks == []


def _empty_container(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, (ast.List, ast.Set)):
        return not value.elts
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in MUTABLE_CALLS and not value.args and not value.keywords or name in {
            "WeakKeyDictionary", "WeakValueDictionary", "WeakSet", "defaultdict", "deque"}
    return False


def module_level_state() -> list[str]:
    found = []
    for module, tree in TREES.items():
        for node in tree.body:
            if isinstance(node, ast.Assign):
                names, value = [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names, value = [node.target.id], node.value
            else:
                continue
            if _empty_container(value):
                found += [f"{module}.{name} (line {node.lineno})" for name in names if (module, name) not in ALLOWED_STATE]
    return found


def test_no_module_level_per_page_state() -> None:
    assert module_level_state() == []


def test_every_allowed_module_level_container_still_exists() -> None:
    """The list of allowed containers does not outlive what it excuses."""
    present = {(module, target.id) for module, tree in TREES.items() for node in tree.body
               if isinstance(node, (ast.Assign, ast.AnnAssign))
               for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
               if isinstance(target, ast.Name)}
    assert sorted(set(ALLOWED_STATE) - present) == []


def identity_keys(tree: ast.AST) -> list[str]:
    """Where ``tree`` keys something by object identity: ``id()`` calls and weak references (line numbers)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in IDENTITY_CALLS:
            found.append((node.lineno, f"{func.id}() line {node.lineno}"))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "weakref" \
                and func.attr in IDENTITY_WEAKREF:
            found.append((node.lineno, f"weakref.{func.attr}() line {node.lineno}"))
    return [what for _, what in sorted(found)]


def test_nothing_is_keyed_by_object_identity() -> None:
    found = {module: keys for module, tree in TREES.items() if (keys := identity_keys(tree))}
    assert sorted(set(found) - set(ALLOWED_IDENTITY)) == [], {m: found[m] for m in set(found) - set(ALLOWED_IDENTITY)}


def test_every_allowed_identity_key_still_exists() -> None:
    """The list of modules allowed to key by identity does not outlive what it excuses."""
    assert sorted(m for m in ALLOWED_IDENTITY if not identity_keys(TREES[m])) == []


def test_the_identity_check_finds_a_memo() -> None:
    tree = ast.parse("import weakref\n_jobs = {}\n"
                     "def read(item, html):\n    _jobs[id(html)] = html\n    weakref.finalize(item, print)\n"
                     "class Reader:\n    def __init__(self):\n        self.seen = WeakKeyDictionary()\n"
                     "def fine(request):\n    request.meta['key'] = 1\n    return hash(request.url)\n")
    assert identity_keys(tree) == ["id() line 4", "weakref.finalize() line 5", "WeakKeyDictionary() line 8"]


def test_the_state_check_finds_a_cache(tmp_path: Path) -> None:
    tree = ast.parse("from weakref import WeakKeyDictionary\n_READ: WeakKeyDictionary = WeakKeyDictionary()\n"
                     "_SEEN = {}\nTABLE = {'a': 1}\n")
    assert [_empty_container(n.value) for n in tree.body[1:]] == [True, True, False]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("boilerstrip.ledger")))
def test_the_ledger_package_is_pure_by_its_imports(module: str) -> None:
    """boilerstrip.ledger imports no component package, no CLI and no Scrapy (test_architecture.py checks
    what actually gets loaded)."""
    for node in ast.walk(TREES[module]):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert not any(n.split(".")[0] in ("scrapy", "twisted") for n in names), module
    assert not [t for t, _ in GRAPH[module] if _component(t) or t.startswith(CLI)]
