"""Straight-line code for a sequential partition (issue 17, "cheaper small ops"): the program of
the sequential interpreter (sequential.py) written out as one Python function, compiled once per
plan and kept with it, so a step of many small kernels pays for its kernels and little else.

Measured first (bench/small_ops.py, bench/README.md): the interpreter's loop costs 0.3-0.4 us a
node (the list of inputs built by a comprehension, the loop over the values to drop, the output
branches, the attribute reads), as much as a small NumPy kernel itself. Written out, a node is one
line: the kernel called with its inputs as local variables, its outputs stored in local
variables. What the tables say once per plan is settled while writing:

- values live in local variables ("registers"), reused once their value is dead, and a value is
  dropped at its last use (`del`, or its register taking a new value), as the interpreter does;
- a Const's value is a global of the function: no call at all;
- a kernel implemented in C (a NumPy ufunc, a builtin, an array-function dispatcher) is called
  directly with its inputs. Such a kernel never looks at reference counts. A kernel written in
  Python may (ops/kernels/buffer_forwarding.py: it writes into an input that only its call
  holds), so it is called exactly as the interpreter calls it: its inputs in a list, the values
  used for the last time dropped before the call, then `compute(*inputs)`. The rule then counts
  the same references on both paths;
- checkpoints (cancellation, deadlines) where the interpreter has them.

Only partitions without dead values and without asynchronous kernels are written out
(executor_choice decides: ExecutorChoice.straight_line); traced steps (RunMetadata step stats)
run the interpreter's traced loop. A plan's first INTERPRETED_STEPS steps run the interpreter
(plans that run a few times, initializers and saves, never pay for the writing); the code is
written at the next.
An error in a kernel is raised as the interpreter raises it, naming the node: the failing line
of the generated function, found in the traceback, says which node it was.
"""
from __future__ import annotations

import threading
import types
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.runtime import kernel_errors
from tensorweave.runtime.step_context import StepContext

if TYPE_CHECKING:
    from tensorweave.runtime.sequential import Instruction

# Steps a plan runs in the interpreter before its code is written (a test sets 0). Writing and
# compiling costs about 40 us a node (measured on this machine, loaded), the code saves 0.2-0.4 us
# a node per step: a plan run a few times (initializers, saves, a short evaluation) is better off
# interpreted, and one run for training pays the writing back within about a hundred steps.
INTERPRETED_STEPS = 10

# Kernels implemented in C, called directly (they never look at reference counts).
_C_CALLABLES = (np.ufunc, types.BuiltinFunctionType, type(np.dot))

_CONST_TYPES = frozenset(("Const", "HostConst"))


def calls_directly(compute: Any) -> bool:
    """Whether the generated code may call `compute` with its inputs as they are (see the module
    docstring): it is implemented in C."""
    return isinstance(compute, _C_CALLABLES)


class _Writer:
    """Writes one program's function: its source lines, the globals they name, and which node
    each line runs."""

    def __init__(self, program: Sequence[Instruction], fetch_slots: Sequence[int]) -> None:
        self.lines: list[str] = []
        self.line_node: dict[int, int] = {}  # source line number -> program position
        self.globals: dict[str, Any] = {}
        self.register_of: dict[int, str] = {}  # slot -> the local variable holding its value
        self.free: list[str] = []
        self.num_registers = 0
        self.keep = set(fetch_slots)
        # slots some later node reads (a value nobody reads goes to `_`)
        self.read: set[int] = set(fetch_slots)
        for ins in program:
            self.read.update(ins.in_slots)

    def allocate(self) -> str:
        if self.free:
            return self.free.pop()
        self.num_registers += 1
        return f"r{self.num_registers - 1}"

    def write(self, pos: int, ins: Instruction) -> None:
        constant = _constant_value(ins)
        if constant is not None:
            name = f"c{pos}"
            self.globals[name] = constant[0]
            self.register_of[ins.out_slot] = name
            return
        if ins.check:
            self.lines.append("    if _interrupted() is not None: raise _cancellation.cancelled")
        kernel = f"k{pos}"
        compute = ins.compute
        inputs = [self.register_of[s] for s in ins.in_slots]
        unwrapped = getattr(compute, "unwrapped", None)
        if unwrapped is not None:
            # references feeding value arguments (graph_compiler._deref_wrapper), read inline
            compute = unwrapped
            self.globals[f"o{pos}"] = ins.item.op
            for p in ins.item.deref_inputs:
                inputs[p] = f"{inputs[p]}.read(o{pos})"
        self.globals[kernel] = compute
        # free_slots also lists the previous node's outputs nothing reads, which never got a register
        dying = [name for name in (self.register_of.get(s) for s in ins.free_slots)
                 if name is not None and name[0] == "r"]
        leading = ("_step, " if inputs else "_step") if ins.needs_step else ""
        statements: list[str] = []
        if _is_identity(ins):
            call = inputs[0]  # Identity gives its input itself: no call
        elif not inputs or calls_directly(compute):
            call = f"{kernel}({leading}{', '.join(inputs)})"
        else:
            statements.append(f"_inputs = [{', '.join(inputs)}{',' if len(inputs) == 1 else ''}]")
            if dying:
                statements.append(f"del {', '.join(dying)}")
            call = f"{kernel}({leading}*_inputs)"
        for name in dying:
            self.free.append(name)
        for s in ins.free_slots:
            self.register_of.pop(s, None)
        targets = []
        for port in range(ins.num_outputs):
            slot = ins.out_slot + port
            if slot in self.read:
                name = self.allocate()
                self.register_of[slot] = name
                targets.append(name)
            else:
                targets.append("_")
        if not targets:
            statements.append(call)
        else:
            statements.append(f"{', '.join(targets)} = {call}")
        if statements[0].startswith("_inputs"):
            statements.append("del _inputs")  # the inputs are not held past the call
        else:
            # a direct call: values used for the last time go now (unless an output took their name)
            gone = [name for name in dying if name not in targets]
            if gone:
                statements.append(f"del {', '.join(gone)}")
        self.lines.append("    " + "; ".join(statements))
        self.line_node[len(self.lines) + 1] = pos  # +1: the `def` line comes first

    def source(self, fetch_slots: Sequence[int]) -> str:
        results = ", ".join(self.register_of[s] for s in fetch_slots)
        body = self.lines + [f"    return [{results}]"]
        return "\n".join(["def program(_step, _interrupted, _cancellation):", *body, ""])


def _is_identity(ins: Instruction) -> bool:
    op = ins.item.op
    return (op is not None and getattr(op, "type", None) == "Identity" and not ins.needs_step
            and len(ins.in_slots) == 1 and ins.num_outputs == 1)


def _constant_value(ins: Instruction) -> Optional[tuple[Any]]:
    """(value,) for a Const node (its kernel returns the same array every step), else None."""
    item = ins.item
    op = item.op
    if op is None or ins.needs_step or ins.in_slots or ins.num_outputs != 1:
        return None
    if getattr(op, "type", None) not in _CONST_TYPES:
        return None
    try:
        return (ins.compute(),)
    except Exception:  # noqa: BLE001  (raised again, naming the node, when the step runs it)
        return None


class StraightLineCode:
    """A sequential partition's run function: the interpreter for its first steps and traced
    ones, then the generated function. `interpret(step)` and `traced(step)` are the
    interpreter's loop bodies."""

    def __init__(self, program: Sequence[Instruction], fetch_slots: Sequence[int],
                 interpret: Callable[[StepContext], list[Any]], traced: Callable[[StepContext], list[Any]]) -> None:
        self.program = program
        self.fetch_slots = fetch_slots
        self.interpret = interpret
        self.traced = traced
        self.steps = 0
        self.function: Optional[Callable[..., list[Any]]] = None
        self.code: Any = None
        self.source = ""  # the generated function's text (for debugging)
        self.line_node: dict[int, int] = {}
        self._lock = threading.Lock()

    def run(self, step: StepContext) -> list[Any]:
        function = self.function
        if function is None:
            if step.stats is not None or self.steps < INTERPRETED_STEPS:
                self.steps += 1
                return self.interpret(step)
            function = self.generate()
        elif step.stats is not None:
            return self.traced(step)
        try:
            return function(step, step.interrupted, step.cancellation)
        except Exception as err:
            if err is step.cancellation.cancelled:
                raise  # the step's own cancellation (close, the deadline), naming no node
            kernel_errors.reraise(err, self.failed_op(err))

    def generate(self) -> Callable[..., list[Any]]:
        with self._lock:  # two threads running the plan's second step write it once
            if self.function is None:
                writer = _Writer(self.program, self.fetch_slots)
                for pos, ins in enumerate(self.program):
                    writer.write(pos, ins)
                # a module name under tensorweave.: NumPy's floating-point warnings from bare
                # ufunc calls here are filtered as the kernels' are (ops/_util.quiet_numpy_warnings)
                namespace = dict(writer.globals, __name__="tensorweave.runtime.generated_plan")
                self.source = writer.source(self.fetch_slots)
                self.code = compile(self.source, "<tensorweave plan>", "exec")
                exec(self.code, namespace)  # noqa: S102  (our own generated source)
                self.line_node = writer.line_node
                self.function = namespace["program"]
        return self.function  # type: ignore[return-value]

    def failed_op(self, err: BaseException) -> Any:
        """The op of the node whose line raised `err` (None if not found)."""
        tb = err.__traceback__
        code = self.function.__code__  # type: ignore[union-attr]
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        if tb is None:
            return None
        pos = self.line_node.get(tb.tb_lineno)
        return None if pos is None else self.program[pos].item.op
