"""The profiler's views and their text, as TensorFlow's tfprof prints them.

- scope: nodes form a tree by name ("a/b/c" under "a/b"; missing scopes are added), each line
  `name (self/total ...)` indented two spaces per level;
- graph: nodes form a tree by data flow (a node's inputs are its children, each node once);
- op: one row per op type, `%-25s` then each selected column as `%30s`
  "value (cumulative%, self%)".
Accounting follows tfprof: a node is accounted when one of its types matches
account_type_regexes; a node is shown when it passes the min_* thresholds (own values for
parameters and FLOPs, totals for time and bytes), max_depth and the name regexes; with
account_displayed_op_only, totals count only what is shown. Hidden nodes' shown descendants move
up to the nearest shown ancestor.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from tensorweave.profiler.profile_nodes import STATS, GraphNodeProto, MultiGraphNodeProto, ProfNode

ROOT = "_TFProfRoot"

# Columns, in the order tfprof prints them: (select name, legend).
_COLUMNS = (("params", "# parameters"), ("float_ops", "# float_ops"), ("bytes", "requested bytes"),
            ("peak_bytes", "peak bytes"), ("residual_bytes", "residual bytes"),
            ("output_bytes", "output bytes"), ("micros", "total execution time"),
            ("accelerator_micros", "accelerator execution time"), ("cpu_micros", "cpu execution time"),
            ("device", "assigned devices"), ("op_types", "op types"),
            ("occurrence", "op count (run|defined)"), ("input_shapes", "input shapes"))

_ORDER_KEYS = {"bytes": "total_requested_bytes", "peak_bytes": "total_peak_bytes",
               "residual_bytes": "total_residual_bytes", "output_bytes": "total_output_bytes",
               "micros": "total_exec_micros", "accelerator_micros": "total_accelerator_exec_micros",
               "cpu_micros": "total_cpu_exec_micros", "params": "total_parameters",
               "float_ops": "total_float_ops", "occurrence": "total_run_count"}

_DOCS = {
    "scope": "scope: The nodes in the model graph are organized by their names, which is "
             "hierarchical like filesystem.",
    "graph": "graph: The nodes in the model graph are organized by their operation input and "
             "output.",
    "op": "op: The nodes are operation kernel type, such as MatMul, Conv2D. Graph nodes belonging "
          "to the same type are aggregated together.",
    "params": "param: Number of parameters (in the Variable).",
    "float_ops": "flops: Number of float operations. Note: Please read the implementation for the "
                 "math behind it.",
    "bytes": "requested bytes: The memory requested by the operation, accumulatively.",
    "micros": "total execution time: Sum of accelerator execution time and cpu execution time.",
    "occurrence": "occurrence: The number of times it occurs.",
}


def format_number(n: float) -> str:
    if n < 1000:
        return "%d" % n
    if n < 1000000:
        return "%.2fk" % (n / 1e3)
    if n < 1000000000:
        return "%.2fm" % (n / 1e6)
    return "%.2fb" % (n / 1e9)


def format_time(micros: float) -> str:
    if micros < 1000:
        return "%dus" % micros
    if micros < 1000000:
        return "%.2fms" % (micros / 1e3)
    return "%.2fsec" % (micros / 1e6)


def format_memory(num_bytes: float) -> str:
    if num_bytes < 1000:
        return "%dB" % num_bytes
    if num_bytes < 1000000:
        return "%.2fKB" % (num_bytes / 1e3)
    return "%.2fMB" % (num_bytes / 1e6)


class _Show:
    """A node being shown: its graph node (None for a scope or the root), proto and children."""

    def __init__(self, name: str, node: Optional[ProfNode], multi: bool = False) -> None:
        self.name = name
        self.node = node
        self.proto = MultiGraphNodeProto(name) if multi else GraphNodeProto(name)
        self.account = False
        self.children: list["_Show"] = []
        self.shown: list["_Show"] = []

    @property
    def op_types(self) -> set[str]:
        return self.node.op_types if self.node is not None else set()

    def reset(self, step: int) -> None:
        proto = self.proto
        for stat in STATS:
            setattr(proto, stat, 0)
            setattr(proto, "total_" + stat, 0)
        proto.definition_count = 1
        if self.node is not None:
            self.node.fill(proto, step)

    def add_self_to_total(self) -> None:
        for stat in STATS:
            setattr(self.proto, "total_" + stat, getattr(self.proto, stat))

    def aggregate(self, other: "_Show") -> None:
        for stat in STATS:
            key = "total_" + stat
            setattr(self.proto, key, getattr(self.proto, key) + getattr(other.proto, key))


def _full_match(regex: str, text: str) -> bool:
    return re.fullmatch(regex, text) is not None


def _accounted(show: _Show, opts: dict[str, Any]) -> bool:
    regexes = opts["account_type_regexes"]
    if regexes == [".*"]:
        return True
    return any(_full_match(r, t) for r in regexes for t in show.op_types)


def _should_show(show: _Show, opts: dict[str, Any], depth: int) -> bool:
    if show.name == ROOT:
        return True
    p = show.proto
    if (p.total_requested_bytes < opts.get("min_bytes", 0)
            or p.total_peak_bytes < opts.get("min_peak_bytes", 0)
            or p.total_residual_bytes < opts.get("min_residual_bytes", 0)
            or p.total_output_bytes < opts.get("min_output_bytes", 0)
            or p.total_exec_micros < opts.get("min_micros", 0)
            or p.total_accelerator_exec_micros < opts.get("min_accelerator_micros", 0)
            or p.total_cpu_exec_micros < opts.get("min_cpu_micros", 0)
            or p.parameters < opts.get("min_params", 0)
            or p.float_ops < opts.get("min_float_ops", 0)
            or p.run_count < opts.get("min_occurrence", 0)
            or depth > opts["max_depth"]):
        return False
    shows = opts["show_name_regexes"]
    if shows != [".*"] and not any(_full_match(r, show.name) for r in shows):
        return False
    return not any(_full_match(r, show.name) for r in opts["hide_name_regexes"])


def _trimmed(show: _Show, opts: dict[str, Any]) -> bool:
    return any(_full_match(r, show.name) for r in opts["trim_name_regexes"])


def sort_nodes(nodes: list[_Show], order_by: str) -> list[_Show]:
    """Stable sort: by name ascending, or by the chosen total descending."""
    if order_by == "name":
        return sorted(nodes, key=lambda n: n.name)
    key = _ORDER_KEYS.get(order_by)
    if key is None:
        raise ValueError(f"Unsupported order_by: {order_by!r}; expected one of "
                         f"{['name'] + sorted(_ORDER_KEYS)}")
    return sorted(nodes, key=lambda n: -getattr(n.proto, key))


def legend(opts: dict[str, Any]) -> str:
    select = set(opts["select"])
    names = [text for key, text in _COLUMNS if key in select
             and not (key in ("accelerator_micros", "cpu_micros") and "micros" in select)]
    if "micros" in select:
        names[names.index("total execution time") + 1:names.index("total execution time") + 1] = [
            "accelerator execution time", "cpu execution time"]
    return "node name | %s\n" % " | ".join(names)


def _pair(show: _Show, own: Any, total: Any, fmt: Any) -> str:
    return (fmt(own) if show.account else "--") + "/" + fmt(total)


def format_tree_node(show: _Show, opts: dict[str, Any]) -> str:
    """A scope/graph view line's text: `name (column, column, ...)`."""
    select = set(opts["select"])
    p = show.proto
    info = []
    if "params" in select:
        if show.node is not None and show.node.shape:
            info.append("x".join(str(d) for d in show.node.shape))
        info.append(_pair(show, p.parameters, p.total_parameters, format_number) + " params")
    if "float_ops" in select:
        info.append(_pair(show, p.float_ops, p.total_float_ops, format_number) + " flops")
    for key, own, total in (("bytes", p.requested_bytes, p.total_requested_bytes),
                            ("peak_bytes", p.peak_bytes, p.total_peak_bytes),
                            ("residual_bytes", p.residual_bytes, p.total_residual_bytes),
                            ("output_bytes", p.output_bytes, p.total_output_bytes)):
        if key in select:
            info.append(_pair(show, own, total, format_memory))
    times = (("micros", p.exec_micros, p.total_exec_micros),
             ("accelerator_micros", p.accelerator_exec_micros, p.total_accelerator_exec_micros),
             ("cpu_micros", p.cpu_exec_micros, p.total_cpu_exec_micros))
    for key, own, total in times:
        if key in select or ("micros" in select and key != "micros"):
            info.append(_pair(show, own, total, format_time))
    if "device" in select and p.devices:
        info.append("|".join(p.devices))
    if "op_types" in select:
        info.append("|".join(sorted(show.op_types)))
    if "occurrence" in select:
        run = _pair(show, p.run_count, p.total_run_count, format_number)
        defined = ("1" if show.account else "--") + "/" + format_number(p.total_definition_count)
        info.append(run + "|" + defined)
    if "input_shapes" in select:
        info.append("|".join(f"{i}:{'x'.join(map(str, s)) if s else 'unknown'}"
                             for i, s in sorted(p.input_shapes.items())))
    return "%s (%s)" % (show.name, ", ".join(info))


class TreeView:
    """The scope and graph views: build the tree once, show it for any options."""

    def __init__(self, nodes: dict[str, ProfNode], kind: str) -> None:
        self.kind = kind
        self._shows = {name: _Show(name, node) for name, node in nodes.items()}
        self.root = _Show(ROOT, None)
        if kind == "scope":
            self._build_scope()
        else:
            self._build_graph(nodes)

    def _build_scope(self) -> None:
        for name in list(self._shows):
            while "/" in name:
                name = name.rsplit("/", 1)[0]
                if name not in self._shows:
                    self._shows[name] = _Show(name, None)
        for name in sorted(self._shows):
            parent = self._shows[name.rsplit("/", 1)[0]] if "/" in name else self.root
            parent.children.append(self._shows[name])

    def _build_graph(self, nodes: dict[str, ProfNode]) -> None:
        """A node's inputs are its children; each node hangs under its first consumer in name
        order, and nodes nothing consumes hang under the root."""
        placed: set[str] = set()
        consumed = {i for node in nodes.values() for i in node.inputs}
        pending = [n for n in sorted(nodes) if n not in consumed]
        for name in pending:
            placed.add(name)
            self.root.children.append(self._shows[name])
        while pending:
            name = pending.pop(0)
            for input_name in nodes[name].inputs:
                if input_name not in placed and input_name in self._shows:
                    placed.add(input_name)
                    self._shows[name].children.append(self._shows[input_name])
                    pending.append(input_name)
        for name in sorted(set(nodes) - placed):  # cycles (loops) that nothing else reaches
            self.root.children.append(self._shows[name])

    def _account(self, shows: list[_Show], opts: dict[str, Any], step: int) -> list[_Show]:
        kept = []
        for show in shows:
            children = self._account(show.children, opts, step)
            show.account = _accounted(show, opts)
            if show.account or children:
                show.reset(step)
                show.add_self_to_total()
                show.shown = list(children)
                for child in children:
                    show.aggregate(child)
                kept.append(show)
        return kept

    def _search_root(self, shows: list[_Show], regexes: list[str]) -> list[_Show]:
        found = []
        for show in shows:
            if any(_full_match(r, show.name) for r in regexes):
                found.append(show)
            else:
                found.extend(self._search_root(show.shown, regexes))
        return found

    def _print(self, shows: list[_Show], opts: dict[str, Any], depth: int, indent: int) -> list[_Show]:
        result = []
        for show in shows:
            visible = _should_show(show, opts, depth)
            children: list[_Show] = []
            if not _trimmed(show, opts) and depth <= opts["max_depth"]:
                children = self._print(show.shown, opts, depth + 1, indent + (2 if visible else 0))
            if visible:
                if opts["account_displayed_op_only"]:
                    show.add_self_to_total()
                children = sort_nodes(children, opts["order_by"])
                show.shown = children
                for child in children:
                    if opts["account_displayed_op_only"]:
                        show.aggregate(child)
                show.line = "%s%s\n" % (" " * indent, format_tree_node(show, opts))
                result.append(show)
            else:
                result.extend(children)
        return result

    def show(self, opts: dict[str, Any], step: int) -> tuple[GraphNodeProto, str]:
        root = self.root
        root.reset(step)
        root.account = False
        roots = self._account(root.children, opts, step)
        for child in roots:
            root.aggregate(child)
        if opts["start_name_regexes"] != [".*"]:
            roots = self._search_root(roots, opts["start_name_regexes"])
        root.shown = roots
        self._print([root], opts, 1, 0)
        text = legend(opts) + root.line
        proto = root.proto
        proto.children = []
        text += self._collect(root.shown, proto)
        return proto, text

    def _collect(self, shows: list[_Show], parent: GraphNodeProto) -> str:
        text = ""
        for show in shows:
            text += show.line
            parent.children.append(show.proto)
            show.proto.children = []
            text += self._collect(show.shown, show.proto)
        return text


class OpView:
    """The op view: graph nodes aggregated per op type, listed in order."""

    def __init__(self, nodes: dict[str, ProfNode]) -> None:
        by_type: dict[str, list[ProfNode]] = {}
        for node in nodes.values():
            by_type.setdefault(node.op, []).append(node)
        self._types = {op: sorted(members, key=lambda n: n.name) for op, members in sorted(by_type.items())}

    def _multi(self, op: str, members: list[ProfNode], step: int, opts: dict[str, Any]) -> _Show:
        """An op type's row: the sum over its graph nodes that account_type_regexes select."""
        regexes = opts["account_type_regexes"]
        if regexes != [".*"]:
            members = [n for n in members if any(_full_match(r, t) for r in regexes for t in n.op_types)]
        show = _Show(op, None, multi=True)
        proto = show.proto
        for node in members:
            graph_node = GraphNodeProto(node.name)
            node.fill(graph_node, step)
            graph_node.definition_count = 1
            for stat in STATS:
                setattr(graph_node, "total_" + stat, getattr(graph_node, stat))
                setattr(proto, stat, getattr(proto, stat) + getattr(graph_node, stat))
            proto.graph_nodes.append(graph_node)
        proto.devices = sorted({d for n in members for d in n.devices})
        show.node = ProfNode(op, op)
        show.node.op_types = {t for n in members for t in n.op_types}
        return show

    def show(self, opts: dict[str, Any], step: int) -> tuple[GraphNodeProto, str]:
        root = _Show(ROOT, None, multi=True)
        shows = [self._multi(op, members, step, opts) for op, members in self._types.items()]
        for show in shows:
            show.account = bool(show.proto.graph_nodes)
            show.add_self_to_total()
        shows = sort_nodes(shows, opts["order_by"])
        accounted = [s for s in shows if s.account]
        self._chain(accounted, root)
        start = 0
        if opts["start_name_regexes"] not in ([], [".*"]):
            start = next((i for i, s in enumerate(accounted)
                          if any(_full_match(r, s.name) for r in opts["start_name_regexes"])),
                         len(accounted))
        visible = []
        for depth, show in enumerate(accounted[start:]):
            if _trimmed(show, opts) or depth > opts["max_depth"]:
                break
            if _should_show(show, opts, depth):
                visible.append(show)
        if opts["account_displayed_op_only"]:
            for show in visible:
                show.add_self_to_total()
            self._chain(visible, root)
        text = legend(opts) + "".join(self._line(show, root, opts) for show in visible)
        parent = root.proto
        for show in visible:
            parent.children = [show.proto]
            parent = show.proto
        parent.children = []
        return root.proto, text

    @staticmethod
    def _chain(shows: list[_Show], root: _Show) -> None:
        """Each node's totals include every node after it (cumulative, as tfprof's op view)."""
        for stat in STATS:
            setattr(root.proto, "total_" + stat, 0)
        after: Optional[_Show] = None
        for show in reversed(shows):
            if after is not None:
                show.aggregate(after)
            after = show
        if after is not None:
            root.aggregate(after)

    @staticmethod
    def _line(show: _Show, root: _Show, opts: dict[str, Any]) -> str:
        select = set(opts["select"])
        p, r = show.proto, root.proto
        columns = []

        def column(own: int, total: int, root_total: int, text: str) -> None:
            accumulated = 100.0 * total / root_total if total > 0 else 0.0
            self_pct = 100.0 * own / root_total if total > 0 else 0.0
            columns.append("%30s" % ("%s (%.2f%%, %.2f%%)" % (text, accumulated, self_pct)))

        for key, stat, fmt in (("bytes", "requested_bytes", format_memory),
                               ("peak_bytes", "peak_bytes", format_memory),
                               ("residual_bytes", "residual_bytes", format_memory),
                               ("output_bytes", "output_bytes", format_memory),
                               ("micros", "exec_micros", format_time),
                               ("accelerator_micros", "accelerator_exec_micros", format_time),
                               ("cpu_micros", "cpu_exec_micros", format_time)):
            wanted = key in select or ("micros" in select and stat in ("accelerator_exec_micros",
                                                                      "cpu_exec_micros"))
            if wanted:
                own, total = getattr(p, stat), getattr(p, "total_" + stat)
                column(own, total, getattr(r, "total_" + stat), fmt(own))
        if "params" in select:
            column(p.parameters, p.total_parameters, r.total_parameters,
                   format_number(p.parameters) + " params")
        if "float_ops" in select:
            column(p.float_ops, p.total_float_ops, r.total_float_ops,
                   format_number(p.float_ops) + " float_ops")
        if "device" in select:
            columns.append("|".join(p.devices))
        if "op_types" in select:
            columns.append("|".join(sorted(show.op_types)))
        if "occurrence" in select:
            runs = sum(g.run_count for g in p.graph_nodes)
            columns.append("%10s" % ("%d|%d" % (runs, len(p.graph_nodes))))
        return "%-25s%s\n" % (show.name, ", ".join(columns))


def doc(cmd: str, opts: dict[str, Any]) -> str:
    lines = [_DOCS[cmd]] + [_DOCS[k] for k in ("params", "float_ops", "bytes", "micros", "occurrence")
                            if k in opts["select"]]
    return "\n".join(lines) + "\n"
