"""The rendezvous where Send and Receive meet (white paper 3.2.2).

One rendezvous per step, shared by the step's partitions: partitions start independently and
synchronise only here. A key names the source device (and its incarnation), the destination
device, the tensor, and the frame and iteration the pair runs in. Whichever side comes first
waits: a value sent before anyone asks is kept; a receiver that asks first leaves its
continuation, which the matching Send calls. Dead values cross as dead. Aborting (the step was
cancelled or failed) wakes every waiting receiver with the step's error and fails later calls.

`LocalRendezvous` serves devices of one process; the distributed runtime puts a remote
rendezvous behind the same interface (`create_key`, `send`, `recv_async`, `start_abort`).
"""
from __future__ import annotations

import collections
import dataclasses
import threading
import weakref
from typing import Any, Callable, Optional

# done(error, value, is_dead): error is None on success.
RecvCallback = Callable[[Optional[BaseException], Any, bool], None]


@dataclasses.dataclass(frozen=True, eq=False)
class RendezvousKey:
    src_device: str
    src_incarnation: int
    dst_device: str
    tensor_name: str
    frame_id: str
    iteration: int
    _hash: int = dataclasses.field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:  # keys are hashed on every send and receive: hash once
        object.__setattr__(self, "_hash", hash((self.src_device, self.src_incarnation, self.dst_device,
                                                self.tensor_name, self.frame_id, self.iteration)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:  # the dataclass one builds two tuples per call
        if self is other:
            return True
        if type(other) is not RendezvousKey or self._hash != other._hash:
            return False
        return (self.tensor_name == other.tensor_name and self.frame_id == other.frame_id
                and self.iteration == other.iteration and self.src_device == other.src_device
                and self.dst_device == other.dst_device and self.src_incarnation == other.src_incarnation)

    def __str__(self) -> str:  # TF's key text: src;incarnation;dst;tensor;frame:iteration
        return (f"{self.src_device};{self.src_incarnation:016x};{self.dst_device};"
                f"{self.tensor_name};{self.frame_id}:{self.iteration}")


# Root-frame keys that kernels hold (each kernel keeps its own; a dropped plan's go away).
_root_keys: "weakref.WeakValueDictionary[RendezvousKey, RendezvousKey]" = weakref.WeakValueDictionary()


class LocalRendezvous:
    """A table of sent values and waiting receivers per key, for one step."""

    __slots__ = ("_lock", "_sent", "_waiting", "_error")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: dict[RendezvousKey, collections.deque] = {}
        self._waiting: dict[RendezvousKey, collections.deque] = {}
        self._error: Optional[BaseException] = None

    @staticmethod
    def create_key(src_device: str, src_incarnation: int, dst_device: str, tensor_name: str,
                   frame_id: str, iteration: int) -> RendezvousKey:
        key = RendezvousKey(src_device, src_incarnation, dst_device, tensor_name, frame_id, iteration)
        if frame_id == "" and iteration == 0:
            # Kernels keep their root-frame keys: one object per Send/Recv pair, so the table
            # lookups of every step match by identity.
            key = _root_keys.setdefault(key, key)
        return key

    def send(self, key: RendezvousKey, value: Any, is_dead: bool) -> None:
        with self._lock:
            if self._error is not None:
                raise self._error
            waiters = self._waiting.get(key)
            if not waiters:
                sent = self._sent.get(key)
                if sent is None:
                    sent = self._sent[key] = collections.deque()
                sent.append((value, is_dead))
                return
            done = waiters.popleft()
            if not waiters:
                del self._waiting[key]
        done(None, value, is_dead)  # outside the lock: the receiver's continuation runs here

    def recv_async(self, key: RendezvousKey, done: RecvCallback) -> None:
        with self._lock:
            error = self._error
            if error is None:
                values = self._sent.get(key)
                if not values:
                    waiters = self._waiting.get(key)
                    if waiters is None:
                        waiters = self._waiting[key] = collections.deque()
                    waiters.append(done)
                    return
                value, is_dead = values.popleft()
                if not values:
                    del self._sent[key]
        if error is not None:
            done(error, None, False)
        else:
            done(None, value, is_dead)

    def start_abort(self, error: BaseException) -> None:
        """Fails the step's transfers: waiting receivers now, later calls at once."""
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            waiting = [done for queue in self._waiting.values() for done in queue]
            self._waiting.clear()
            self._sent.clear()
        for done in waiting:
            done(error, None, False)

    @property
    def num_pending(self) -> int:
        """Sent-but-unreceived values plus waiting receivers (0 after a clean step)."""
        with self._lock:
            return sum(map(len, self._sent.values())) + sum(map(len, self._waiting.values()))
