"""The toolkit's own garbage: what the collector would free after a call, ours only.

The collector finds every thread's garbage, and a stand-in server an earlier test left polling in a
thread of the same worker makes some; a check that counts it all fails in a full suite and passes
alone. So only objects of the toolkit's classes and functions defined in its modules are counted.
"""

from __future__ import annotations

import gc
import types
from collections.abc import Callable


def _ours(found: object) -> str | None:
    if isinstance(found, (types.FunctionType, types.MethodType)):
        module = getattr(found, "__module__", "") or ""
        return found.__qualname__ if module.startswith("study.") else None
    kind = type(found)
    return kind.__qualname__ if kind.__module__.startswith("study.") else None


def toolkit_garbage(call: Callable[[], object]) -> list[str]:
    """Names of the toolkit's objects that `call` left in reference cycles (empty when none)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds is kept in gc.garbage to be looked at
    try:
        call()
        gc.collect()
        return [name for name in map(_ours, gc.garbage) if name]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
