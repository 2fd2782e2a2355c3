"""No import circles among the product's modules, type-only imports included (issue 41):
two modules that import each other, however indirectly, can only be read, changed and
tested together. import-linter's contracts keep the rooms apart; this keeps the modules
within a room apart too. Read from the source (an import inside a function counts)."""

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("domain", "application", "adapters", "bootstrap", "migrations")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The names an import statement reaches: `from x import y` is x.y when y is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: from the module's package, `level - 1` packages up
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def import_graph() -> dict[str, set[str]]:
    """Each product module and the product modules it imports (not its own packages, which
    Python runs before it anyway)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(module, path, node):
                while target and target not in modules:  # a name inside a module: the module
                    target = target.rpartition(".")[0]
                if target and target != module and not module.startswith(f"{target}."):
                    graph[module].add(target)
    return graph


def first_circle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as circle:
        return list(circle.args[1])
    return None


def test_a_circle_is_found_however_long() -> None:
    assert first_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert first_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_type_only_imports() -> None:
    graph = import_graph()
    # Imported under `if TYPE_CHECKING:` only (the start path must not load it).
    assert "adapters.protocol.question_wire" in graph["adapters.protocol.connection"]
    assert len(graph) > 300  # every module, not an empty walk


def test_no_product_module_imports_itself_through_others() -> None:
    assert first_circle(import_graph()) is None
