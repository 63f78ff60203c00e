"""`tf.profiler.profile`, `tf.profiler.Profiler` and `tf.profiler.advise` (white paper 9.2): a
model's parameters, FLOPs, and per-op time and memory from traced steps, shown by name scope,
data flow, or op type, and printed in tfprof's text format."""
from __future__ import annotations

import sys
from typing import Any, Optional

from tensorweave.framework import errors
from tensorweave.framework.graph import get_default_graph
from tensorweave.profiler import flops_registry  # noqa: F401  (registers the FLOP statistics)
from tensorweave.profiler.option_builder import ProfileOptionBuilder
from tensorweave.profiler.profile_nodes import GraphNodeProto, ProfNode, add_run_meta, collect_nodes
from tensorweave.profiler.views import OpView, TreeView, doc, format_time

_DEFAULT_PROFILE_OPTIONS = 0
_DEFAULT_ADVISE_OPTIONS = 0

ALL_ADVICE = {"ExpensiveOperationChecker": {}, "AcceleratorUtilizationChecker": {},
              "OperationChecker": {}}

_OPTION_LINES = ("max_depth", "min_bytes", "min_peak_bytes", "min_residual_bytes", "min_output_bytes",
                 "min_micros", "min_accelerator_micros", "min_cpu_micros", "min_params", "min_float_ops",
                 "min_occurrence", "step", "order_by", "account_type_regexes", "start_name_regexes",
                 "trim_name_regexes", "show_name_regexes", "hide_name_regexes",
                 "account_displayed_op_only", "select", "output")


def _complete(options: dict[str, Any]) -> dict[str, Any]:
    """TF's defaults for keys an options dict leaves out."""
    full = ProfileOptionBuilder().build()
    for key in ("min_peak_bytes", "min_residual_bytes", "min_output_bytes", "min_accelerator_micros",
                "min_cpu_micros"):
        full[key] = 0
    full.update(options)
    for key in ("account_type_regexes", "start_name_regexes", "trim_name_regexes", "show_name_regexes",
                "hide_name_regexes", "select"):
        full[key] = list(full[key])
    return full


def _output(options: dict[str, Any]) -> tuple[str, Optional[str]]:
    """('stdout' | 'none' | 'file', path) from the `output` option."""
    output = options["output"]
    if output in ("stdout", "none"):
        return output, None
    if output.startswith("file:outfile="):
        return "file", output[len("file:outfile="):]
    raise errors.InvalidArgumentError(None, None, f"Unsupported profiler output: {output!r} "
                                      "(expected stdout, none or file:outfile=PATH)")


def _options_text(options: dict[str, Any]) -> str:
    lines = ["=========================Options============================="]
    for key in _OPTION_LINES:
        value = options.get(key, 0)
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, list):
            value = ",".join(value)
        elif key == "output":
            value = value if ":" in value else value + ":"
        lines.append("%-28s%s" % ("-" + key, value))
    return "\n".join(lines) + "\n"


def _emit(cmd: str, options: dict[str, Any], report: str) -> None:
    kind, path = _output(options)
    if kind == "none":
        return
    text = ("\n" + _options_text(options) + "\n==================Model Analysis Report======================\n"
            "\nDoc:\n" + doc(cmd, options) + "\nProfile:\n" + report
            + "\n======================End of Report==========================\n")
    if kind == "stdout":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        assert path is not None
        with open(path, "w") as f:
            f.write(report)


class _Model:
    """The nodes of one graph and the traced steps added to them."""

    def __init__(self, graph: Any, op_log: Optional[Any]) -> None:
        self.graph = graph
        self.nodes: dict[str, ProfNode] = collect_nodes(graph, op_log)
        self.steps: list[int] = []

    def add_step(self, step: int, run_meta: Any) -> None:
        add_run_meta(self.nodes, step, run_meta)
        if step not in self.steps:
            self.steps.append(step)

    def show(self, cmd: str, options: Any) -> GraphNodeProto:
        if options == _DEFAULT_PROFILE_OPTIONS:
            options = ProfileOptionBuilder.trainable_variables_parameter()
        options = _complete(options)
        _output(options)  # an unsupported output fails before any work
        step = options["step"]
        if cmd == "scope" or cmd == "graph":
            proto, report = TreeView(self.nodes, cmd).show(options, step)
        elif cmd == "op":
            proto, report = OpView(self.nodes).show(options, step)
        elif cmd == "code":
            raise errors.InvalidArgumentError(None, None, "The 'code' view needs the Python call "
                                              "stacks of op creation, which this graph does not "
                                              "record; use 'scope', 'graph' or 'op'.")
        else:
            raise errors.InvalidArgumentError(None, None, f"unknown cmd: {cmd}\n")
        _emit(cmd, options, report)
        return proto


def profile(graph: Optional[Any] = None, run_meta: Optional[Any] = None, op_log: Optional[Any] = None,
            cmd: str = "scope", options: Any = _DEFAULT_PROFILE_OPTIONS) -> GraphNodeProto:
    """Profiles `graph` (default: the default graph), with one traced step's `run_meta` when
    given. Returns the result tree (GraphNodeProto; MultiGraphNodeProto for cmd='op')."""
    model = _Model(graph if graph is not None else get_default_graph(), op_log)
    if run_meta is not None:
        model.add_step(0, run_meta)
    return model.show(cmd, options)


class AdviceProto:
    """tfprof's AdviceProto: `checkers[name].reports`, a list of text reports per checker."""

    class Checker:
        def __init__(self) -> None:
            self.reports: list[str] = []

    def __init__(self) -> None:
        self.checkers: dict[str, AdviceProto.Checker] = {}


def _expensive_operations(model: _Model) -> list[str]:
    """The op types that took the most time over the traced steps."""
    per_type: dict[str, int] = {}
    for node in model.nodes.values():
        micros = node.stats(-1).get("exec_micros", 0)
        if micros:
            per_type[node.op] = per_type.get(node.op, 0) + micros
    total = sum(per_type.values())
    if not total:
        return ["No traced step: add a step run with RunOptions(trace_level=FULL_TRACE) to see "
                "where time goes."]
    ranked = sorted(per_type.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    return [f"top {i + 1} operation type: {op}, cpu: {format_time(micros)}, accelerator: 0us, "
            f"total: {format_time(micros)} ({100.0 * micros / total:.2f}%)"
            for i, (op, micros) in enumerate(ranked)]


def _accelerator_utilization(model: _Model) -> list[str]:
    devices = {d for node in model.nodes.values() for d in node.devices}
    accelerators = sorted(d for d in devices if "GPU" in d.upper() or "TPU" in d.upper())
    if not accelerators:
        return ["No accelerator ran an op in the traced steps: every op ran on CPU devices."]
    return [f"{device}: ops were placed here; no accelerator kernel timing is recorded."
            for device in accelerators]


def _operation_issues(model: _Model) -> list[str]:
    """Ops whose settings are known to be slow on this runtime's CPU kernels."""
    reports = []
    nchw = sorted(node.name for node in model.nodes.values()
                  if model.graph.get_operation_by_name(node.name).node_def.attr["data_format"].s
                  in (b"NCHW", b"NCDHW"))
    if nchw:
        reports.append(f"Found {len(nchw)} operations using NCHW data_format on CPU, where NHWC is "
                       f"the native layout: {', '.join(nchw[:5])}")
    return reports


_CHECKERS = {"ExpensiveOperationChecker": _expensive_operations,
             "AcceleratorUtilizationChecker": _accelerator_utilization,
             "OperationChecker": _operation_issues}


def _advise(model: _Model, options: Any) -> AdviceProto:
    if options == _DEFAULT_ADVISE_OPTIONS:
        options = ALL_ADVICE
    advice = AdviceProto()
    for name in options:
        if name not in _CHECKERS:
            if name == "JobChecker":  # TF's JobChecker has no open-source reports either
                continue
            raise errors.InvalidArgumentError(None, None, f"Unknown checker: {name}")
        checker = advice.checkers[name] = AdviceProto.Checker()
        checker.reports = _CHECKERS[name](model)
        sys.stdout.write(f"\n{name}:\n" + "".join(r + "\n" for r in checker.reports))
    sys.stdout.flush()
    return advice


def advise(graph: Optional[Any] = None, run_meta: Optional[Any] = None,
           options: Any = _DEFAULT_ADVISE_OPTIONS) -> AdviceProto:
    """Runs the checkers (ALL_ADVICE by default) over `graph` and a traced step."""
    model = _Model(graph if graph is not None else get_default_graph(), None)
    if run_meta is not None:
        model.add_step(0, run_meta)
    return _advise(model, options)


class Profiler:
    """Profiles a graph over several traced steps: `add_step(step, run_meta)` after each traced
    `Session.run`, then views by name scope, data flow or op type (option `step`: one step, or -1
    for the average of all)."""

    def __init__(self, graph: Optional[Any] = None, op_log: Optional[Any] = None) -> None:
        self._model = _Model(graph if graph is not None else get_default_graph(), op_log)

    def add_step(self, step: int, run_meta: Any) -> None:
        self._model.add_step(step, run_meta)

    def profile_name_scope(self, options: Any) -> GraphNodeProto:
        return self._model.show("scope", options)

    def profile_graph(self, options: Any) -> GraphNodeProto:
        return self._model.show("graph", options)

    def profile_operations(self, options: Any) -> GraphNodeProto:
        return self._model.show("op", options)

    def advise(self, options: Any = ALL_ADVICE) -> AdviceProto:
        return _advise(self._model, options)
