"""No import circles among the product's modules, type-only imports included (issue 41):
two modules that import each other, however indirectly, can only be read, changed and
tested together. import-linter's contracts keep the rooms apart; this keeps the modules
within a room apart too. Read from the source by grimp, import-linter's own graph (an
import inside a function or under `if TYPE_CHECKING:` counts)."""

from graphlib import CycleError, TopologicalSorter

import grimp

PACKAGES = ("domain", "application", "adapters", "bootstrap", "migrations")


def import_graph() -> dict[str, set[str]]:
    """Each product module and the product modules it imports (not its own packages, which
    Python runs before it anyway), as import-linter's graph library reads them."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    return {
        module: {
            target
            for target in graph.find_modules_directly_imported_by(module)
            if not module.startswith(f"{target}.")
        }
        for module in graph.modules
    }


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
