"""Turn-taking on the model: a FIFO lock whose holder passes its turn at each token to whoever waits.

Generation is serialised (requests never mix), but a plain lock makes a short
request wait for the whole of a long one: a "hi" behind a 2,000-token answer
waits for all 2,000 tokens. With :class:`TurnLock`, a generation calls
:func:`pass_turn` after each token (from its stopping criterion): if another
request is waiting, the lock goes to it and the passer queues behind it, so
concurrent generations advance one token each, round-robin, and a short
request finishes in about (its tokens x the number running) steps.

Each generation keeps its own inputs and KV cache; only the weights are
shared, and they are read-only. Sampling draws from torch's global generator,
so :func:`pass_turn` saves its state before handing over and restores it after:
a seeded request samples exactly what it samples alone.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

__all__ = ["TurnLock", "pass_turn"]


class TurnLock:
    """A lock handed to waiters in arrival order, with :meth:`pass_turn` (``with``, ``acquire``, ``release``)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiters: deque[threading.Event] = deque()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        with self._mutex:
            if not self._held and not self._waiters:
                self._held = True
                return True
            if not blocking:
                return False
            me = threading.Event()
            self._waiters.append(me)
        if me.wait(None if timeout < 0 else timeout):
            return True  # handed over by release() or pass_turn(): the lock stays held, now ours
        with self._mutex:
            if me.is_set():  # handed over just as the wait timed out
                return True
            self._waiters.remove(me)
            return False

    def release(self) -> None:
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().set()  # hand over directly: no newcomer can jump the queue
            else:
                self._held = False

    def waiting(self) -> bool:
        """Whether anyone waits for the lock (a cheap check before passing a turn)."""
        return bool(self._waiters)

    def pass_turn(self) -> None:
        """Hand the (held) lock to the first waiter and wait for it to come back; no-op when none waits."""
        with self._mutex:
            if not self._waiters:
                return
            me = threading.Event()
            self._waiters.append(me)
            self._waiters.popleft().set()
        me.wait()

    def __enter__(self) -> TurnLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def pass_turn(lock: Any) -> None:
    """Let a waiting generation run one step on *lock* (a :class:`TurnLock`), keeping torch's RNG state ours."""
    if not isinstance(lock, TurnLock) or not lock.waiting():
        return
    import torch

    state = torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    lock.pass_turn()
    torch.set_rng_state(state)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
