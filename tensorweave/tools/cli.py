"""The `tensorweave` command. With a subcommand it runs that tool; with none (or only options,
e.g. `tensorweave --steps 5`) it runs the main job, the MNIST example, as it always has."""
from __future__ import annotations

import sys
from typing import Callable, Optional, Sequence

from tensorweave.examples import mnist
from tensorweave.tools import saved_model_cli, trace_command
from tensorweave.tools import server as server_command

# Subcommand -> main(argv) returning an exit status. Each tool module owns its argument parsing.
SUBCOMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "show": saved_model_cli.show_main,
    "run": saved_model_cli.run_main,
    "trace": trace_command.main,
    "server": server_command.main,
}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Dispatches `tensorweave SUBCOMMAND ...`; anything else is the main job's command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in SUBCOMMANDS:
        return SUBCOMMANDS[args[0]](args[1:])
    if args and args[0] in ("help", "commands"):
        print("usage: tensorweave [SUBCOMMAND] ...\n\nsubcommands: " + ", ".join(sorted(SUBCOMMANDS))
              + "\nwith no subcommand: the main job (`tensorweave --help` lists its options)")
        return 0
    mnist.main(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
