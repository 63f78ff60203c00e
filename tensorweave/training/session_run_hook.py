"""SessionRunHook (TF 1.x): code that runs around every `MonitoredSession.run` call.

A hook's `before_run` may add fetches, feeds and options to the call (`SessionRunArgs`); its
`after_run` gets their values (`SessionRunValues`) and may ask the session to stop through the
`SessionRunContext`."""
from __future__ import annotations

import collections
from typing import Any


class SessionRunHook:
    """Hook to extend calls to MonitoredSession.run(); every method is optional."""

    def begin(self) -> None:
        """Called once before the session is created; the graph may still be changed here."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called when the session has been created (and restored or initialized)."""

    def before_run(self, run_context: "SessionRunContext") -> Any:
        """Called before each run call: returns None or SessionRunArgs to add to it."""
        return None

    def after_run(self, run_context: "SessionRunContext", run_values: "SessionRunValues") -> None:
        """Called after each successful run call, with the values the hook asked for."""

    def end(self, session: Any) -> None:
        """Called at the end of the session (not when it ends with an exception)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run call: fetches, feeds and RunOptions."""

    def __new__(cls, fetches: Any, feed_dict: Any = None, options: Any = None) -> "SessionRunArgs":
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The run call a hook sees: the caller's arguments, the session, and a way to stop."""

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Any:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Asks the monitored session to stop after this call (`should_stop()` becomes True)."""
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """The values of a hook's fetches, and the RunOptions and RunMetadata of the call."""
