"""The start path's import shortcuts change nothing but their cost."""

import importlib
import sys

import pytest
from pydantic import BaseModel, ConfigDict

from bootstrap.heavy_imports import (
    _import_injector_without,
    attribute_docstrings_skipped,
    loading_in_the_background,
)


def _documented() -> type[BaseModel]:
    class Documented(BaseModel):
        model_config = ConfigDict(use_attribute_docstrings=True)

        field: int
        """What the field means."""

    return Documented


def test_models_defined_while_skipping_have_no_docstring_descriptions() -> None:
    with attribute_docstrings_skipped():
        skipped = _documented()
    assert skipped.model_fields["field"].description is None
    assert skipped.model_validate({"field": 1}).field == 1  # validation is unchanged


def test_docstrings_are_read_again_afterwards() -> None:
    with attribute_docstrings_skipped():
        pass
    assert _documented().model_fields["field"].description == "What the field means."


def test_the_skip_ends_when_the_import_fails() -> None:
    try:
        with attribute_docstrings_skipped():
            raise ImportError("a failed import")
    except ImportError:
        pass
    assert _documented().model_fields["field"].description == "What the field means."


def test_the_switch_interval_is_short_while_loading_and_restored_after() -> None:
    before = sys.getswitchinterval()
    with loading_in_the_background(0.0005):
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    assert sys.getswitchinterval() == before
    with pytest.raises(ImportError), loading_in_the_background(0.0005):
        raise ImportError("a failed import")
    assert sys.getswitchinterval() == before


def test_modules_hidden_from_dependency_injector_can_be_imported_after() -> None:
    name = "tabnanny"  # a standard module nothing here imports
    sys.modules.pop(name, None)
    _import_injector_without((name,))
    assert name not in sys.modules  # no None left behind to fail later imports
    assert importlib.import_module(name).__name__ == name


EARLY_MODULES = """
import json, sys
from bootstrap.heavy_imports import import_early_modules
import_early_modules(sys.argv[1], early_new=sys.argv[2] == "new")
wanted = ["adapters.acp_v1.listing", "adapters.persistence.early_reads",
          "adapters.acp_v1.early_new", "adapters.persistence.early_writes"]
print(json.dumps([name for name in wanted if name in sys.modules]))
"""


@pytest.mark.parametrize(
    ("early_new", "imported"),
    [
        ("new", ["listing", "early_reads", "early_new", "early_writes"]),
        ("list", ["listing", "early_reads"]),
    ],
)
def test_the_early_answers_modules_are_imported_ahead_of_them(
    early_new: str, imported: list[str]
) -> None:
    """What bootstrap/early.py answers with is imported on the loader's thread, so that the
    first session/list (and, over stdio, session/new) does not import it on the event
    loop's (a fresh interpreter: nothing imported before)."""
    import json
    import subprocess

    found = subprocess.run(
        [sys.executable, "-c", EARLY_MODULES, "sqlite+aiosqlite:///x.db", early_new],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert [name.rsplit(".", 1)[1] for name in json.loads(found.stdout)] == imported
