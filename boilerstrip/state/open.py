"""Open the state backend a run's settings name (``BOILERSTRIP_STATE_*``)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import State
from .layout import resolve_state_dir

__all__ = ["StateParams", "load_backend", "open_state"]


@dataclass(frozen=True)
class StateParams:
    # The state folder: "auto" = next to the output (OUT's folder/.boilerstrip-state), "" = keep nothing
    # (an in-memory backend), a path, or a URL a backend connects to (redis://HOST:PORT/DB, RedisState).
    # What outlives the run lives there: template counts, URL history.
    dir: str = "auto"
    # The backend class, by dotted path; constructed with the state folder (a Path). The in-memory one is
    # used whatever this says when ``dir`` is "".
    backend: str = "boilerstrip.state.SqliteState"

    def __post_init__(self) -> None:
        if "." not in self.backend:
            raise ValueError("backend must be a dotted path, e.g. boilerstrip.state.SqliteState")


def load_backend(path: str) -> type:
    module_name, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load state backend {path!r}: {exc}") from None


def open_state(params: StateParams, output: str | Path | None = None) -> State:
    """The backend for a run writing ``output``: the in-memory one when the state folder is ""."""
    if "://" in params.dir:  # a URL (redis://HOST:PORT/DB): the backend connects to it, no folder
        backend_cls: Any = load_backend(params.backend)
        return backend_cls(params.dir)
    folder = resolve_state_dir(params.dir, output)
    if folder is None:
        from .memory import MemoryState

        return MemoryState()
    backend: Any = load_backend(params.backend)
    return backend(folder)
