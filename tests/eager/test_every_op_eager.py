"""Every op family run eagerly against its graph-mode result (issue 18): one parametrized test
over the registry's op types, each run by the cases of tests/op_cases (the gradient-check table,
the element-wise tables and the family cases written for the rest) in a Session and in an eager
context, comparing dtypes, shapes and values exactly (random ops: seeded, so TF draws the same
numbers both ways; variables' random initial values: dtypes and shapes). A second test fails
when a registered op type is run eagerly by no case and is not on the commented list of ops
that have no eager meaning."""
import functools

import pytest

from tensorweave.framework import op_def
from tests.op_cases import all_op_cases
from tests.op_cases import run

CASES = all_op_cases()

# Op types no case runs eagerly, and why: they only exist inside a graph (TF's eager mode has
# no such op either, or runs its work another way).
EXCLUDED = {
    # graph inputs: a placeholder is fed by Session.run; eager code passes values
    "Placeholder",
    # TF1 reference variables: eager variables are objects holding their value
    "VariableV2",
    # the executor's own nodes: function arguments and cross-device transfers
    "_Arg", "_Send", "_Recv",
    # dataflow control-flow primitives: eagerly tf.cond / tf.while_loop run as Python
    "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "NextIteration", "LoopCond",
    "ControlTrigger", "_WhileGrad",
    # a JIT cluster's node: only the JIT pass makes it, on a plan's graph (tests/jit run it;
    # tf.function(jit_compile=True) reaches it through its body's plan)
    "_XlaRun",
    # TF1 readers: TF raises "Readers are not supported when eager execution is enabled" (use
    # tf.data), and so does tensorweave (tests/eager/test_eager_semantics.py)
    "TextLineReaderV2", "TFRecordReaderV2", "FixedLengthRecordReaderV2", "WholeFileReaderV2", "IdentityReaderV2",
    "ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2",
    "ReaderSerializeStateV2", "ReaderRestoreStateV2", "ReaderResetV2",
}


@functools.lru_cache(maxsize=None)
def _outcomes():
    """Runs every case once: name -> (op types it ran eagerly, why it failed or None)."""
    outcomes = {}
    for case in CASES:
        values = run.case_inputs(case)
        ran = set()
        try:
            graph = run.run_graph(case, values)
            problem = run.check_expected(case, values, graph[1])
            if problem is None:
                dtypes, got, ran = run.run_eager(case, values)
                problem = run.compare(graph, (dtypes, got))
        except Exception as err:  # noqa: BLE001  (reported under the op types the case is for)
            problem = f"{type(err).__name__}: {err}"
        outcomes[case.name] = (frozenset(ran), problem)
    return outcomes


def _registered():
    """The registry's op types, less those test modules define for themselves."""
    return {name for name, definition in op_def.registered_ops().items()
            if "/tests/" not in definition.defined_at.replace("\\", "/")}


def _tested_ops():
    return sorted(_registered() - EXCLUDED)


@pytest.mark.parametrize("op_type", _tested_ops())
def test_op_runs_eagerly_as_in_graph_mode(op_type):
    outcomes = _outcomes()
    failures = [f"{case.name}: {outcomes[case.name][1]}" for case in CASES
                if op_type in case.ops and outcomes[case.name][1] is not None]
    assert not failures, "\n".join(failures)
    covering = [name for name, (ran, problem) in outcomes.items() if problem is None and op_type in ran]
    assert covering, f"no op case runs {op_type} eagerly (add one to tests/op_cases)"


def test_every_registered_op_is_covered_or_excluded():
    outcomes = _outcomes()
    covered = set().union(*(ran for ran, problem in outcomes.values() if problem is None))
    registered = _registered()
    assert not registered - covered - EXCLUDED, f"ops without an eager case: {sorted(registered - covered - EXCLUDED)}"
    assert not EXCLUDED & covered, f"excluded ops that cases do run eagerly: {sorted(EXCLUDED & covered)}"
    assert not EXCLUDED - registered, f"excluded ops that are not registered: {sorted(EXCLUDED - registered)}"


def test_failing_cases():
    """Every case passes (a case that fails for an op type it is not written for shows here)."""
    failures = [f"{name}: {problem}" for name, (_, problem) in _outcomes().items() if problem is not None]
    assert not failures, "\n".join(failures)
