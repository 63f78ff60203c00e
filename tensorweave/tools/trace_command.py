"""`tensorweave trace INPUT [--output FILE] [--show-memory] [--no-dataflow]`: turns a saved
RunMetadata (a binary proto file, as `run_metadata.SerializeToString()` writes it) into a Chrome
trace file for chrome://tracing or Perfetto (tools/timeline.py)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

from google.protobuf.message import DecodeError

from tensorweave.runtime.config import RunMetadata
from tensorweave.tools.timeline import Timeline


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensorweave trace",
        description="Convert a saved RunMetadata (binary proto) into a Chrome trace JSON file.")
    parser.add_argument("input", metavar="INPUT", help="file holding a serialized RunMetadata")
    parser.add_argument("--output", metavar="FILE", default=None,
                        help="trace file to write (default: INPUT with a .json suffix)")
    parser.add_argument("--show-memory", action="store_true",
                        help="add tensor lifetimes and per-allocator memory counters")
    parser.add_argument("--no-dataflow", action="store_true",
                        help="leave out the flow arrows between producers and consumers")
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with open(args.input, "rb") as f:
            data = f.read()
    except OSError as err:
        print(f"tensorweave trace: cannot read {args.input}: {err.strerror}", file=sys.stderr)
        return 1
    run_metadata = RunMetadata()
    try:
        run_metadata.ParseFromString(data)
    except DecodeError as err:
        print(f"tensorweave trace: {args.input} is not a serialized RunMetadata: {err}", file=sys.stderr)
        return 1
    if not run_metadata.step_stats.dev_stats:
        print(f"tensorweave trace: {args.input} has no step stats; run the step with "
              "RunOptions(trace_level=RunOptions.FULL_TRACE)", file=sys.stderr)
        return 1
    output = args.output or os.path.splitext(args.input)[0] + ".json"
    trace = Timeline(run_metadata.step_stats).generate_chrome_trace_format(
        show_dataflow=not args.no_dataflow, show_memory=args.show_memory)
    with open(output, "w") as f:
        f.write(trace)
    devices = len(run_metadata.step_stats.dev_stats)
    nodes = sum(len(d.node_stats) for d in run_metadata.step_stats.dev_stats)
    print(f"Wrote {output}: {nodes} ops on {devices} device(s). Open it in chrome://tracing or "
          "https://ui.perfetto.dev")
    return 0


if __name__ == "__main__":
    sys.exit(main())
