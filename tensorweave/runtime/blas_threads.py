"""BLAS threads per kernel from ConfigProto.intra_op_parallelism_threads.

DESIGN.md: on this machine one BLAS thread per kernel plus inter-op parallelism beats
OpenBLAS's own threading, so 0 ("let the system pick") means 1 here. threadpoolctl finds the
BLAS library NumPy actually loaded, whichever it is."""
from __future__ import annotations

import threading

_lock = threading.Lock()
_current: list[int] = []
_limiter: list[object] = []


def configure(intra_op_threads: int) -> None:
    wanted = intra_op_threads if intra_op_threads and intra_op_threads > 0 else 1
    with _lock:
        if _current and _current[0] == wanted:
            return
        from threadpoolctl import threadpool_limits  # imported late: it probes libraries
        _limiter[:] = [threadpool_limits(limits=wanted, user_api="blas")]
        _current[:] = [wanted]
