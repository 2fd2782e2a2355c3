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
