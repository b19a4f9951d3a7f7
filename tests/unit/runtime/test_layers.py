"""The runtime's layers: imports go one way, bottom to top, and never in a cycle.

Every runtime module is parsed with `ast`; every import counts, absolute or
relative, at module level, inside functions and under `TYPE_CHECKING` (a
type-only import still ties the modules together for readers and checkers).
Layers, bottom to top, are the sub-packages in `LAYERS`; `errors.py` is shared:
it imports nothing from the runtime and every layer raises its errors. The
root `__init__` is the facade above everything.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import mcp_specgen_runtime

LAYERS = (
    "codec",
    "stores",
    "jsonrpc",
    "protocol",
    "transports",
    "auth",
    ("app", "client"),
)
"""The runtime's sub-packages, bottom to top; a tuple holds siblings of one
level, which must not import each other."""
SHARED = frozenset({"errors", "_version"})
"""Root modules below every layer (`_version` holds the release's version)."""


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int


def modules_of(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package) for every module under root."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def imports_of(
    name: str, path: Path, is_package: bool, known: set[str], package: str
) -> list[Import]:
    """The imports of one module that land inside the package."""
    found: list[Import] = []

    def add(target: str, line: int) -> None:
        # `from a.b import c` imports module a.b.c when there is one; `import
        # a.b.C` or `from a.b import C` import the longest module prefix.
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.append(Import(name, target, line))

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == package or alias.name.startswith(package + "."):
                    add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module != package and not module.startswith(package + "."):
                continue
            for alias in node.names:
                add(f"{module}.{alias.name}", node.lineno)
    return found


def layer_names() -> list[str]:
    """Every layer package, siblings included."""
    return [
        n for level in LAYERS for n in ((level,) if isinstance(level, str) else level)
    ]


def layer_of(module: str, package: str) -> int | None:
    """Position of a module's layer (-1: shared; len(LAYERS): the facade)."""
    if module == package:
        return len(LAYERS)
    first = module[len(package) + 1 :].split(".")[0]
    if first in SHARED:
        return -1
    for position, level in enumerate(LAYERS):
        if first == level or (not isinstance(level, str) and first in level):
            return position
    return None


def sub_package(module: str, package: str) -> str:
    return module[len(package) + 1 :].split(".")[0]


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle once, as a path that starts and ends at the same module."""
    cycles: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :]
                turn = cycle.index(min(cycle))
                key = tuple(cycle[turn:] + cycle[:turn])
                if key not in seen:
                    seen.add(key)
                    cycles.append([*key, key[0]])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return cycles


def problems(root: Path, package: str) -> list[str]:
    """Everything wrong with the layering of the package at `root`."""
    modules = modules_of(root, package)
    known = set(modules)
    found: list[str] = []
    edges: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        source_layer = layer_of(name, package)
        if source_layer is None:
            found.append(f"{name} is in no layer: move it into one of {LAYERS}")
            continue
        for edge in imports_of(name, path, is_package, known, package):
            edges.setdefault(edge.source, set()).add(edge.target)
            target_layer = layer_of(edge.target, package)
            if target_layer is not None and target_layer > source_layer:
                found.append(
                    f"upward import: {edge.source} (line {edge.line}) imports "
                    f"{edge.target}, a higher layer"
                )
            elif (
                target_layer == source_layer
                and source_layer not in (-1, len(LAYERS))
                and sub_package(edge.source, package)
                != sub_package(edge.target, package)
            ):
                found.append(
                    f"sideways import: {edge.source} (line {edge.line}) imports "
                    f"{edge.target}, a sibling layer"
                )
    # the facade imports everything (lazily); nothing imports it
    edges.pop(package, None)
    found += ["cycle: " + " -> ".join(cycle) for cycle in find_cycles(edges)]
    return found


RUNTIME = Path(mcp_specgen_runtime.__file__).parent


def test_runtime_imports_go_one_way_without_cycles() -> None:
    found = problems(RUNTIME, "mcp_specgen_runtime")
    assert not found, "\n".join(found)


def test_the_root_holds_only_the_facade_and_the_shared_errors() -> None:
    """The folder listing reads as the layers."""
    root_modules = {p.stem for p in RUNTIME.glob("*.py")} - {"__init__"}
    assert root_modules == SHARED
    packages = {p.parent.name for p in RUNTIME.glob("*/__init__.py")}
    assert packages == set(layer_names())
    for layer in layer_names():
        doc = ast.get_docstring(
            ast.parse((RUNTIME / layer / "__init__.py").read_text())
        )
        assert doc, f"{layer}/__init__.py says what the layer does"


# -- the checker itself, on a small tree -------------------------------------


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for directory in [root / "pkg", *(root / "pkg").rglob("*")]:
        if directory.is_dir() and not (directory / "__init__.py").exists():
            (directory / "__init__.py").write_text("")
    return root / "pkg"


GOOD = {
    "errors.py": "class Oops(Exception): ...\n",
    "codec/wire.py": "from ..errors import Oops\n",
    "codec/spec.py": "",
    "jsonrpc/connection.py": "from pkg.codec.wire import Oops\n",
    "protocol/session.py": (
        "from typing import TYPE_CHECKING\n"
        "from ..jsonrpc import connection\n"
        "if TYPE_CHECKING:\n    from ..codec.wire import Oops\n"
    ),
    "app/application.py": "def run():\n    from ..protocol.session import connection\n",
}


def test_checker_accepts_a_good_tree(tmp_path: Path) -> None:
    assert problems(write(tmp_path, GOOD), "pkg") == []


def test_checker_finds_an_upward_import(tmp_path: Path) -> None:
    files = {**GOOD, "codec/spec.py": "def f():\n    import pkg.protocol.session\n"}
    assert problems(write(tmp_path, files), "pkg") == [
        "upward import: pkg.codec.spec (line 2) imports pkg.protocol.session, "
        "a higher layer"
    ]


def test_checker_finds_a_type_checking_upward_import(tmp_path: Path) -> None:
    files = {
        **GOOD,
        "jsonrpc/connection.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from ..transports.base import Transport\n"
        ),
    }
    (found,) = problems(write(tmp_path, files), "pkg")
    assert found.startswith("upward import: pkg.jsonrpc.connection (line 3)")


def test_checker_finds_a_cycle_and_names_its_path(tmp_path: Path) -> None:
    files = {
        **GOOD,
        "app/application.py": "from .handlers import handlers_for\n",
        "app/handlers.py": "def f():\n    from .application import App\n",
    }
    assert problems(write(tmp_path, files), "pkg") == [
        "cycle: pkg.app.application -> pkg.app.handlers -> pkg.app.application"
    ]


def test_checker_finds_an_import_between_siblings(tmp_path: Path) -> None:
    files = {**GOOD, "client/client.py": "from pkg.app.application import run\n"}
    assert problems(write(tmp_path, files), "pkg") == [
        "sideways import: pkg.client.client (line 1) imports "
        "pkg.app.application, a sibling layer"
    ]


def test_checker_finds_a_module_outside_the_layers(tmp_path: Path) -> None:
    files = {**GOOD, "loose.py": "from .codec import wire\n"}
    assert problems(write(tmp_path, files), "pkg") == [
        f"pkg.loose is in no layer: move it into one of {LAYERS}"
    ]
