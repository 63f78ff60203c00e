"""`tensorweave trace`: a saved RunMetadata becomes a Chrome trace file."""
import json
import subprocess
import sys

import pytest

from tensorweave.tools import trace_command
from tests.tools.tracing_programs import traced_step


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    _, meta, _ = traced_step()
    path = tmp_path_factory.mktemp("trace") / "step.pb"
    path.write_bytes(meta.SerializeToString())
    return path


def test_writes_a_trace_next_to_the_input(saved, capsys):
    assert trace_command.main([str(saved)]) == 0
    out = saved.with_suffix(".json")
    trace = json.loads(out.read_text())
    names = [e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"]
    assert names[0] == "Allocators" and len(names) == 5
    starts = {e["id"]: e["pid"] for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = [e for e in trace["traceEvents"] if e["ph"] == "t"]
    assert sum(starts[e["id"]] != e["pid"] for e in ends) == 2  # one arrow per transfer
    assert not any(e["ph"] == "C" for e in trace["traceEvents"])
    assert "2 device(s)" in capsys.readouterr().out


def test_options(saved, tmp_path):
    out = tmp_path / "t.json"
    assert trace_command.main([str(saved), "--output", str(out), "--show-memory", "--no-dataflow"]) == 0
    events = json.loads(out.read_text())["traceEvents"]
    assert any(e["ph"] == "C" for e in events)
    assert not any(e["ph"] in "st" for e in events)


def test_errors(tmp_path, capsys):
    assert trace_command.main([str(tmp_path / "missing.pb")]) == 1
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff\xff")
    assert trace_command.main([str(bad)]) == 1
    assert "not a serialized RunMetadata" in capsys.readouterr().err
    empty = tmp_path / "empty.pb"
    empty.write_bytes(b"")
    assert trace_command.main([str(empty)]) == 1
    assert "FULL_TRACE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        trace_command.main([])


def test_module_entry_point(saved, tmp_path):
    out = tmp_path / "m.json"
    done = subprocess.run([sys.executable, "-m", "tensorweave.tools.trace_command", str(saved), "--output",
                           str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["traceEvents"]


def test_the_tensorweave_command_runs_trace(saved, tmp_path):
    from tensorweave.tools import cli
    out = tmp_path / "via_cli.json"
    assert cli.main(["trace", str(saved), "--output", str(out)]) == 0
    assert json.loads(out.read_text())["traceEvents"]
