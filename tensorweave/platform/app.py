"""tf.app.run: absl's program entry point, as TF1 calls it: flags TF does not know are left in the
argv handed to `main` instead of ending the program (absl alone would exit on them)."""
from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from absl.app import run as _absl_run

from tensorweave.platform import flags


def _parse_flags_tolerate_undef(argv: list[str]) -> list[str]:
    return flags.FLAGS(sys.argv if argv is None else argv, known_only=True)


def run(main: Optional[Callable[[list[str]], Any]] = None, argv: Optional[list[str]] = None) -> None:
    """Parses the flags in `argv` (sys.argv when None), calls `main(remaining argv)` (the __main__
    module's `main` when None) and exits with its return value."""
    main = main or sys.modules["__main__"].main
    _absl_run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)
