"""The slow imports of the start path, made cheaper. Called on a worker thread before the
container is built, while the transport already answers (see bootstrap/stdio.py)."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

# How long the agent's imports give way to the connection opened ahead on PostgreSQL
# (bootstrap/early.py): a few tens of ms when idle; past this they go on regardless.
GIVE_WAY_SECONDS = 0.15


class Settling(Protocol):
    """Set once the connection opened ahead is open or has failed (a threading.Event)."""

    def wait(self, timeout: float | None = None) -> bool: ...


def import_start_modules(
    database_url: str,
    *,
    web_hooks: bool,
    opened_ahead: Settling | None,
    early_new: bool = False,
    patience: float = GIVE_WAY_SECONDS,
) -> None:
    """The modules the agent starts with. First they wait (at most `patience`) until the
    connection opened ahead for the first `session/list` is open or has failed: importing
    beside it, this thread would hold the GIL the opening needs for each step of its
    handshake, and a list sent on connecting would wait for both. None: nothing opened.
    `early_new`: session/new is answered early too (stdio)."""
    if opened_ahead is not None:
        opened_ahead.wait(patience)
    import_early_modules(database_url, early_new=early_new)
    import_heavy_modules(web_hooks=web_hooks)


def import_heavy_modules(*, web_hooks: bool) -> None:
    """pydantic set to build validators on first use, dependency-injector (without its
    FastAPI hooks unless `web_hooks`), then `acp.schema` without its field docstrings."""
    import pydantic

    # Build each pydantic model's validator on first use instead of at import: the SDKs
    # define hundreds of models and we use a few dozen. Saves ~100 ms before session/new.
    pydantic.BaseModel.model_config["defer_build"] = True
    _import_injector_without(_YAML if web_hooks else (*_YAML, *_WEB_HOOKS))
    with attribute_docstrings_skipped():
        import acp.schema  # noqa: F401


# dependency-injector imports these, if installed, for features the container never uses:
# FastAPI's and Starlette's Depends markers for wiring (~120 ms, unless FastAPI is loaded
# anyway, as over HTTP), and PyYAML for Configuration.from_yaml and
# DeclarativeContainer.from_yaml_schema (~10 ms; `providers` and `containers` each import it).
_WEB_HOOKS = ("fastapi.params", "starlette.requests")
_YAML = ("yaml",)


def _import_injector_without(names: tuple[str, ...]) -> None:
    """Import dependency-injector's modules while `names` cannot be imported; they can
    again after."""
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` fail
    try:
        import dependency_injector.containers
        import dependency_injector.wiring  # noqa: F401
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]


@contextmanager
def loading_in_the_background(interval: float = 0.0005) -> Iterator[None]:
    """While a worker thread imports, the event loop's thread answers requests, but gets
    the GIL back only when the importer is made to yield it: every 5 ms by default, and
    each read, write or SQLite call gives it up again. A shorter interval lets the
    answering thread in sooner."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def import_early_modules(database_url: str, *, early_new: bool = False) -> None:
    """What bootstrap/early.py answers with, imported first so it need not wait (with
    `early_new`, the early session/new's on SQLite: nothing else would import them before
    it arrives; HTTP never answers it early). asyncpg
    only for PostgreSQL (~30 ms), which the agent then loads anyway. (On PostgreSQL
    bootstrap/early.py imports these first, on a thread of their own.)"""
    import adapters.acp_v1.listing
    import adapters.persistence.early_reads
    import application.sessions.listing  # noqa: F401

    if database_url.startswith("postgresql"):
        import adapters.persistence.early_postgres
    elif early_new:  # SQLite only: the session/new an editor sends first
        import adapters.acp_v1.early_new
        import adapters.clock
        import adapters.ids
        import adapters.persistence.early_writes  # noqa: F401


@contextmanager
def attribute_docstrings_skipped() -> Iterator[None]:
    """`acp.schema` asks pydantic for `use_attribute_docstrings`: for each of its ~270
    models pydantic finds and tokenizes the class's source to copy every field's docstring
    into its JSON-schema description, ~60% of the module's import time. We never generate
    its JSON schema, so models defined meanwhile skip that step (private pydantic API:
    if it moved, nothing is skipped)."""
    from pydantic._internal import _fields

    original = getattr(_fields, "_update_fields_from_docstrings", None)
    if original is None:
        yield
        return
    _fields._update_fields_from_docstrings = _skip_docstrings
    try:
        yield
    finally:
        _fields._update_fields_from_docstrings = original


def _skip_docstrings(*args: object, **kwargs: object) -> None:
    return None
