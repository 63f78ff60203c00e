"""tf.train.SessionManager (TF 1.x): creates a session that is ready to train — restored from
the latest checkpoint when there is one, else initialized — or waits until another task (the
chief) has made the model ready."""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.runtime.session import Session
from tensorweave.training.checkpoint_management import get_checkpoint_state

_log = logging.getLogger("tensorflow")


def _ready(op: Any, sess: Session, what: str) -> tuple[bool, Optional[str]]:
    """Whether `op` (a list of uninitialized variable names) reports nothing."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as err:
        if "uninitialized" not in str(err):
            _log.warning("%s raised: %s", what, err)
            raise
        return False, str(err)
    if value is None or np.asarray(value).dtype == np.int32 or np.asarray(value).size == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in np.asarray(value).ravel())
    return False, "Variables not initialized: " + names


def _maybe_name(obj: Any) -> str:
    if obj is None:
        return "None"
    return getattr(obj, "name", None) or f"<no name for {obj!r}>"


class SessionManager:
    def __init__(self, local_init_op: Any = None, ready_op: Any = None, ready_for_local_init_op: Any = None,
                 graph: Optional[_graph.Graph] = None, recovery_wait_secs: float = 30,
                 local_init_run_options: Any = None, local_init_feed_dict: Optional[dict] = None) -> None:
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else _graph.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target: Any = None
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a local_init_op , "
                             f"ready_for_local_init_op [{ready_for_local_init_op}]")

    def _restore_checkpoint(self, master: str, saver: Any = None, checkpoint_dir: Optional[str] = None,
                            checkpoint_filename_with_path: Optional[str] = None, wait_for_checkpoint: bool = False,
                            max_wait_secs: float = 7200, config: Any = None) -> tuple[Session, bool]:
        self._target = master
        sess = Session(master, graph=self._graph, config=config)
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        waited = 0.0
        ckpt = get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if wait_for_checkpoint and waited < max_wait_secs:
                _log.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                ckpt = get_checkpoint_state(checkpoint_dir)
            else:
                return sess, False
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master: str, init_op: Any = None, saver: Any = None,
                        checkpoint_dir: Optional[str] = None, checkpoint_filename_with_path: Optional[str] = None,
                        wait_for_checkpoint: bool = False, max_wait_secs: float = 7200, config: Any = None,
                        init_feed_dict: Optional[dict] = None, init_fn: Optional[Callable[[Session], None]] = None
                        ) -> Session:
        """A session restored from the checkpoint, or initialized by init_op/init_fn; then the
        local init op; RuntimeError if the model is still not ready."""
        sess, restored = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                  wait_for_checkpoint, max_wait_secs, config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for local_init.  Init op: "
                               f"{_maybe_name(init_op)}, init fn: {init_fn}, error: {msg}")
        ready, msg = self._model_ready(sess)
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready.  Init op: {_maybe_name(init_op)}, "
                               f"init fn: {init_fn}, local_init_op: {_maybe_name(self._local_init_op)}, "
                               f"error: {msg}")
        return sess

    def recover_session(self, master: str, saver: Any = None, checkpoint_dir: Optional[str] = None,
                        checkpoint_filename_with_path: Optional[str] = None, wait_for_checkpoint: bool = False,
                        max_wait_secs: float = 7200, config: Any = None) -> tuple[Session, bool]:
        """(session, whether it was restored and is ready)."""
        sess, restored = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                  wait_for_checkpoint, max_wait_secs, config)
        ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s", source, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        _log.info("Restored model from %s", source)
        return sess, ready

    def wait_for_session(self, master: str, config: Any = None, max_wait_secs: Optional[float] = float("inf")
                         ) -> Session:
        """A session once the model is ready (another task initializes it); DeadlineExceededError
        after `max_wait_secs`."""
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            ok, local_msg = self._try_run_local_init_op(sess)
            msg = None
            if ok:
                ready, msg = self._model_ready(sess)
                if ready:
                    return sess
            sess.close()
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs:g} secs.")
            _log.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s", local_msg, msg)
            time.sleep(self._recovery_wait_secs)

    def _model_ready(self, sess: Session) -> tuple[bool, Optional[str]]:
        return _ready(self._ready_op, sess, "Model not ready")

    def _try_run_local_init_op(self, sess: Session) -> tuple[bool, Optional[str]]:
        if self._local_init_op is None:
            return True, None
        ready, msg = _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")
        if not ready:
            return False, msg
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict, options=self._local_init_run_options)
        return True, None
