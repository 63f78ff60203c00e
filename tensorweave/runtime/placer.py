"""Node placement (white paper 3.2.1, 4.3).

1. Feasible devices per node: a kernel exists for the device type and the node's dtype, and the
   device satisfies the node's (possibly partial) device request. `allow_soft_placement` relaxes
   a request no device satisfies; otherwise InvalidArgumentError names the node and constraint.
2. Colocation groups (union-find, colocation.py) are placed as units on the intersection of
   their members' feasible sets. Groups holding state (variables, queues, random generators)
   keep the device they got first, in every later plan: their state lives there.
3. A simulated execution in topological order picks, for each group still free, the device
   where its node would finish soonest: max(inputs' arrival, including the transfer cost when
   they cross devices; the device's free time) + its compute time from the cost model, within
   the device's memory limit. Cheap nodes do not wait for a busy device (they run inline in the
   real executor) and cheap sources (constants, variables, placeholders) wait to be placed with
   their first consumer, so small ops follow their data instead of scattering.
"""
from __future__ import annotations

import logging
import sys
import threading
from typing import Any, Optional, Sequence

from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.framework import errors
from tensorweave.framework.device_spec import DeviceSpec, parse_device
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.runtime.colocation import ColocationGroups
from tensorweave.runtime.cost_model import TRANSFER_LATENCY_S, CostModel, tensor_bytes

_log = logging.getLogger("tensorflow")

_LOOP_BACK_EDGE = ControlFlowKind.NEXT_ITERATION


def kernel_dtype(op: Operation) -> Any:
    """The dtype a kernel registration is selected by (the `T` or `dtype` attr)."""
    attrs = op.node_attrs
    dtype = attrs.get("T")
    if dtype is None:
        dtype = attrs.get("dtype")
    return dtype if hasattr(dtype, "base_dtype") else None


def has_kernel(op: Operation, device_type: str) -> bool:
    if op.op_def.control_flow is not None:
        return True  # the executor itself runs Switch/Merge/Enter/... on every device
    return op.op_def.find_kernel(device_type, kernel_dtype(op)) is not None


class Placer:
    """Placement state of one session: its devices, options, the cost model, and the devices
    stateful groups were given (state cannot move between plans)."""

    def __init__(self, devices: Sequence[Any], allow_soft_placement: bool = False,
                 log_device_placement: bool = False, cost_model: Optional[CostModel] = None,
                 default_task: Optional[DeviceSpec] = None) -> None:
        self.devices = list(devices)
        # A distributed master's own task: groups whose members name no job or task are kept
        # there (TF's default local device), so a program's unplaced ops never drift onto
        # parameter-server tasks.
        self.default_task = default_task
        self.allow_soft_placement = allow_soft_placement
        self.log_device_placement = log_device_placement
        self.cost_model = cost_model or CostModel()
        self.pinned: dict[str, Any] = {}
        self._lock = threading.Lock()

    def place(self, ops: Sequence[Operation], feeds: Sequence[Tensor] = ()) -> dict[int, Any]:
        """Returns {id(op): device} for the plan's nodes and records it on each op."""
        with self._lock:
            if len(self.devices) == 1:
                assignment = self._place_single(ops)
            else:
                groups = ColocationGroups(ops)
                feasible = {root: self._group_devices(groups.members(root), groups.overridden)
                            for root in groups.roots()}
                fixed = self._fixed_devices(groups, feasible)
                assignment = _Simulation(ops, set(feeds), groups, feasible, fixed, self.devices,
                                         self.cost_model).run()
            for op in ops:
                device = assignment[id(op)]
                op._assigned_device = device.name
                if op.op_def.is_stateful:
                    self.pinned[op.name] = device
        if self.log_device_placement:
            for op in ops:
                print(f"{op.name}: ({op.type}): {op._assigned_device}", file=sys.stderr)
        return assignment

    def _place_single(self, ops: Sequence[Operation]) -> dict[int, Any]:
        """One device: only the constraints can be checked (and softened)."""
        device = self.devices[0]
        for op in ops:
            self._node_devices(op)
        return {id(op): device for op in ops}

    # -- feasibility ------------------------------------------------------------------------------
    def _node_devices(self, op: Operation) -> list[Any]:
        """Devices with a kernel for `op` that satisfy its request (softened if allowed)."""
        with_kernel = [d for d in self.devices if has_kernel(op, d.device_type)]
        if not op.device:
            if not with_kernel:
                raise errors.InvalidArgumentError(
                    None, op, f"Cannot assign a device for operation {op.name}: no kernel for "
                    f"{op.type} is registered for any device type of this process "
                    f"({', '.join(sorted({d.device_type for d in self.devices}))}).")
            return with_kernel
        spec = parse_device(op.device)
        matching = [d for d in with_kernel if spec.is_compatible_with(d.spec)]
        if matching:
            return matching
        if self.allow_soft_placement:
            # Keep the job/replica/task part of the request when possible, then drop it.
            host = DeviceSpec(spec.job, spec.replica, spec.task)
            relaxed = [d for d in with_kernel if host.is_compatible_with(d.spec)]
            if relaxed or with_kernel:
                return relaxed or with_kernel
        raise errors.InvalidArgumentError(None, op, self._unsatisfiable(op, spec))

    def _unsatisfiable(self, op: Operation, spec: DeviceSpec) -> str:
        named = [d for d in self.devices if spec.is_compatible_with(d.spec)]
        if named:
            reason = (f"because no supported kernel for {named[0].device_type} devices is available "
                      f"(node {op.name} is a {op.type}")
            dtype = kernel_dtype(op)
            reason += f" with T={dtype.name})" if dtype is not None else ")"
        else:
            reason = "because no devices matching that specification are registered in this process"
        known = ", ".join(d.name for d in self.devices)
        return (f"Cannot assign a device for operation {op.name}: Could not satisfy explicit device "
                f"specification '{op.device}' {reason}; available devices: {known}. "
                "Set allow_soft_placement=True in ConfigProto to place it elsewhere.")

    def _group_devices(self, members: list[Operation], overridden: Optional[dict[int, Operation]] = None) -> list[Any]:
        """Intersection of the members' feasible devices (a member whose request the state it
        uses overrides counts as unconstrained)."""
        candidates = list(self.devices)
        first: Optional[Operation] = None
        for op in members:
            state = overridden.get(id(op)) if overridden else None
            if state is not None:
                _log.info("Ignoring device specification %s for node '%s' because the input edge from '%s' is a "
                          "reference connection and already has a device field set to %s",
                          op.device, op.name, state.name, state.device)
                own = [d for d in self.devices if has_kernel(op, d.device_type)]
            else:
                own = self._node_devices(op)
            narrowed = [d for d in candidates if d in own]
            if not narrowed:
                if self.allow_soft_placement and first is not None:
                    # soft placement keeps the group together where kernels allow it
                    narrowed = [d for d in candidates if has_kernel(op, d.device_type)]
                if not narrowed:
                    raise errors.InvalidArgumentError(None, op, _colocation_conflict(first, op, candidates, own))
            candidates = narrowed
            first = first or op
        if self.default_task is not None and len(candidates) > 1 and not any(
                _names_task(m) for m in members if not (overridden and id(m) in overridden)):
            local = [d for d in candidates if self.default_task.is_compatible_with(d.spec)]
            candidates = local or candidates
        return candidates

    def _fixed_devices(self, groups: ColocationGroups, feasible: dict[str, list[Any]]) -> dict[str, Any]:
        fixed: dict[str, Any] = {}
        for root in groups.roots():
            for op in groups.members(root):
                device = self.pinned.get(op.name)
                if device is None:
                    continue
                if device not in feasible[root] and not self.allow_soft_placement:
                    raise errors.InvalidArgumentError(
                        None, op, f"Cannot assign a device for operation {op.name}: its state is on "
                        f"{device.name} (placed by an earlier step), which the colocation group's "
                        f"constraints now exclude ({', '.join(d.name for d in feasible[root])}).")
                fixed[root] = device
                break
        return fixed


def _names_task(op: Operation) -> bool:
    if not op.device:
        return False
    spec = parse_device(op.device)
    return spec.job is not None or spec.task is not None


def _colocation_conflict(first: Optional[Operation], op: Operation, before: list[Any], own: list[Any]) -> str:
    if first is None:
        return f"Cannot assign a device for operation {op.name}: no device satisfies its constraints."
    return (f"Cannot colocate nodes {{{{colocation_node {first.name}}}}} and {{{{colocation_node "
            f"{op.name}}}}}: Cannot merge devices with incompatible constraints: '{first.device}' "
            f"(allowing {', '.join(d.name for d in before)}) and '{op.device}' (allowing "
            f"{', '.join(d.name for d in own)}).")


class _Simulation:
    """The greedy simulated execution of white paper 3.2.1 over one plan's nodes."""

    def __init__(self, ops: Sequence[Operation], feeds: set[Tensor], groups: ColocationGroups,
                 feasible: dict[str, list[Any]], fixed: dict[str, Any], devices: list[Any],
                 cost_model: CostModel) -> None:
        self.ops = ops
        self.feeds = feeds
        self.groups = groups
        self.feasible = feasible
        self.group_device: dict[str, Any] = dict(fixed)
        self.devices = devices
        self.cost = cost_model
        self.in_plan = {id(op) for op in ops}
        self.device_of: dict[int, Any] = {}
        self.ready: dict[int, float] = {}
        self.free = {id(d): 0.0 for d in devices}
        self.memory = {id(d): 0 for d in devices}
        self.deferred: set[int] = set()
        self.producers: dict[int, list[tuple[Operation, int]]] = {}

    def run(self) -> dict[int, Any]:
        for root, device in self.group_device.items():
            self.memory[id(device)] += self._group_bytes(root)[0]
        for op in _topological_order(self.ops, self.in_plan):
            self.producers[id(op)] = self._inputs_of(op)
            self._visit(op)
        for op in self.ops:  # sources nothing consumed in this plan
            if id(op) not in self.device_of:
                root = self.groups.root(op)
                self._settle(op, self.group_device.get(root) or self.feasible[root][0])
        return self.device_of

    def _inputs_of(self, op: Operation) -> list[tuple[Operation, int]]:
        found = []
        for t in op.inputs:
            if t not in self.feeds and id(t.op) in self.in_plan:
                size = tensor_bytes(t)
                found.append((t.op, 4096 if size is None else size))
        found.extend((c, 0) for c in op.control_inputs if id(c) in self.in_plan)
        return found

    def _visit(self, op: Operation) -> None:
        root = self.groups.root(op)
        device = self.group_device.get(root)
        inputs = self.producers[id(op)]
        # deferred sources and loops' back edges (not simulated yet) do not constrain the choice
        placed = [(p, n) for p, n in inputs if id(p) in self.device_of]
        if device is None:
            candidates = self.feasible[root]
            if len(candidates) > 1 and not placed and self._is_cheap(op, candidates[0]):
                self.deferred.add(id(op))  # placed later, with its first consumer
                return
            device = self._choose(op, root, candidates, placed)
        self._run_on(op, device, placed)
        for producer, _ in inputs:
            if id(producer) in self.deferred:
                self._settle(producer, device)

    def _is_cheap(self, op: Operation, device: Any) -> bool:
        return self.cost.compute_time(op, device) < TRANSFER_LATENCY_S

    def _finish_time(self, op: Operation, device: Any, placed: list[tuple[Operation, int]]) -> float:
        compute = self.cost.compute_time(op, device)
        start = 0.0 if compute < TRANSFER_LATENCY_S else self.free[id(device)]
        for producer, nbytes in placed:
            src = self.device_of[id(producer)]
            start = max(start, self.ready[id(producer)] + self.cost.transfer_time(nbytes, src, device))
        return start + compute

    def _choose(self, op: Operation, root: str, candidates: list[Any],
                placed: list[tuple[Operation, int]]) -> Any:
        need = self._group_bytes(root)
        best, best_key = None, None
        for index, device in enumerate(candidates):
            if not self._fits(device, need):
                continue
            local = sum(n for p, n in placed if self.device_of[id(p)] is device)
            key = (self._finish_time(op, device, placed), -local, index)
            if best_key is None or key < best_key:
                best, best_key = device, key
        if best is None:
            raise errors.ResourceExhaustedError(
                None, op, f"Cannot place {op.name}: its colocation group needs {sum(need)} bytes and no "
                "feasible device has that much memory left (" + ", ".join(
                    f"{d.name}: {d.memory_limit - self.memory[id(d)]} of {d.memory_limit} bytes free"
                    for d in candidates if d.memory_limit is not None) + ").")
        self.group_device[root] = best
        self.memory[id(best)] += need[0]
        return best

    def _run_on(self, op: Operation, device: Any, placed: list[tuple[Operation, int]]) -> None:
        finish = self._finish_time(op, device, placed)
        if self.cost.compute_time(op, device) >= TRANSFER_LATENCY_S:
            self.free[id(device)] = finish
        self.device_of[id(op)] = device
        self.ready[id(op)] = finish

    def _settle(self, op: Operation, device: Any) -> None:
        """Places a deferred source (and the deferred sources feeding it) on `device`, or where
        its group already is."""
        stack = [op]
        while stack:
            node = stack.pop()
            self.deferred.discard(id(node))
            root = self.groups.root(node)
            target = self.group_device.get(root)
            if target is None:
                need = self._group_bytes(root)
                candidates = [d for d in self.feasible[root] if self._fits(d, need)] or self.feasible[root]
                target = device if device in candidates else candidates[0]
                self.group_device[root] = target
                self.memory[id(target)] += need[0]
            self.device_of[id(node)] = target
            self.ready[id(node)] = 0.0
            stack.extend(p for p, _ in self.producers.get(id(node), ()) if id(p) in self.deferred)

    def _group_bytes(self, root: str) -> tuple[int, int]:
        """(persistent, transient) memory of a group: state and constants stay on the device
        for good; of the other outputs only the largest must fit at once. Outputs aliasing
        another buffer (a variable reference handed on by Assign, a forwarded input) are free."""
        persistent = transient = 0
        for op in self.groups.members(root):
            if op.op_def.forwards_input:
                continue
            size = sum(tensor_bytes(t) or 0 for t in op.outputs if not (t.dtype.is_ref_dtype and op.inputs))
            if op.op_def.persistent_output and not op.inputs:
                persistent += size
            else:
                transient = max(transient, size)
        return persistent, transient

    def _fits(self, device: Any, need: tuple[int, int]) -> bool:
        limit = device.memory_limit
        return limit is None or self.memory[id(device)] + need[0] + need[1] <= limit


def _topological_order(ops: Sequence[Operation], in_plan: set[int]) -> list[Operation]:
    """Kahn's algorithm over data and control edges, ignoring loops' NextIteration back edges;
    ties keep graph creation order."""
    pending: dict[int, int] = {}
    consumers: dict[int, list[Operation]] = {}
    for op in ops:
        count = 0
        for src in [t.op for t in op.inputs] + list(op.control_inputs):
            if id(src) in in_plan and src.op_def.control_flow != _LOOP_BACK_EDGE:
                count += 1
                consumers.setdefault(id(src), []).append(op)
        pending[id(op)] = count
    order: list[Operation] = []
    ready = [op for op in ops if pending[id(op)] == 0]
    ready.reverse()
    while ready:
        op = ready.pop()
        order.append(op)
        newly = []
        for c in consumers.get(id(op), ()):
            pending[id(c)] -= 1
            if pending[id(c)] == 0:
                newly.append(c)
        ready.extend(reversed(newly))
    if len(order) != len(ops):  # a cycle outside loops: keep the rest in creation order
        seen = {id(op) for op in order}
        order.extend(op for op in ops if id(op) not in seen)
    return order
