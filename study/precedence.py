"""Which of a server process's requests go first: the ones a participant is watching.

A worker process runs its requests on threads that take turns at one GIL (and at the database's
write turn). A model call's request (Tab suggestions, ghost text, a chat reply) is watched: the
writer waits for it, with the suggestion on hold. An event batch's is not: its browser waits
only for an acknowledgement it never shows. At a 1,000-writer launch a worker starts a few
hundred batches a second, and each new one took the GIL from a suggestion's request in the
middle of its work: its reads, the limits it counts, the outputs' post-processing, the outcome
it stores.

So while a watched request works, a new event batch gives way: it waits, off the GIL, until no
watched request of its process is working, or for at most `GIVE_WAY_AT_MOST`, so batches are
only ever held that long. A watched request waiting for the model holds no claim (it uses no
CPU then), and a batch already under way is not stopped. The claims are per process, as the
GIL is. Outside a watched request (the simulations, the command line) `waiting_for_model` does
nothing. README, "Scale"; tests/test_precedence.py.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# The longest an event batch waits for watched requests to finish their work: a suggestion's
# own work takes a few ms, and a batch's acknowledgement has about 100 ms to spare.
GIVE_WAY_AT_MOST = 0.005

_changed = threading.Condition()
_working = 0  # watched requests of this process doing their own work now
_claimed = threading.local()  # .on: this thread is in a watched request


def _add(step: int) -> None:
    global _working
    with _changed:
        _working += step
        if not _working:
            _changed.notify_all()


def watched(view: Callable) -> Callable:
    """Decorate a view whose answer a participant waits for."""

    @functools.wraps(view)
    def claimed(*args, **kwargs):
        _claimed.on = True
        _add(1)
        try:
            return view(*args, **kwargs)
        finally:
            _claimed.on = False
            _add(-1)

    claimed.watched = True
    return claimed


def is_watched(view: Callable) -> bool:
    return getattr(view, "watched", False)


@contextmanager
def waiting_for_model() -> Iterator[None]:
    """Around the call to the model: a watched request holds no claim while it waits."""
    if not getattr(_claimed, "on", False):
        yield
        return
    _add(-1)
    try:
        yield
    finally:
        _add(1)


def give_way(at_most: float = GIVE_WAY_AT_MOST) -> None:
    """Before an event batch starts: wait while watched requests work, up to `at_most` seconds."""
    if not _working:  # read without the lock: a claim that begins just now waits for the next batch
        return
    with _changed:
        _changed.wait_for(lambda: not _working, at_most)
