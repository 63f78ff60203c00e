"""The control-flow primitives of white paper 4.4: Switch, Merge, Enter, Exit, NextIteration and
LoopCond. They have no kernels of their own: the executor implements them (dead values,
frames and iterations), keyed by each definition's `control_flow` kind."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.graph import Operation
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.ops import _util


def _switch_shape(op: Operation) -> list[TensorShape]:
    op.inputs[1].shape.with_rank(0)
    return [op.inputs[0].shape, op.inputs[0].shape]


def _merge_shape(op: Operation) -> list[TensorShape]:
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        shape = shape.most_specific_compatible_shape(t.shape)
    return [shape, TensorShape([])]


Switch = define_op("Switch", inputs=["data: T", "pred: bool"],
                   outputs=["output_false: T", "output_true: T"], attrs=["T: type"],
                   shape_fn=_switch_shape, control_flow=ControlFlowKind.SWITCH, forwards_input=True)
RefSwitch = define_op("RefSwitch", inputs=["data: Ref(T)", "pred: bool"],
                      outputs=["output_false: Ref(T)", "output_true: Ref(T)"], attrs=["T: type"],
                      shape_fn=_switch_shape, control_flow=ControlFlowKind.SWITCH, forwards_input=True)
Merge = define_op("Merge", inputs=["inputs: N * T"], outputs=["output: T", "value_index: int32"],
                  attrs=["T: type", "N: int >= 1"], shape_fn=_merge_shape, control_flow=ControlFlowKind.MERGE,
                  forwards_input=True)
# A Merge of references (a cond whose branches both return a variable's assign): TF's cond builds
# it so the result is itself a reference, fetched as the variable's value.
RefMerge = define_op("RefMerge", inputs=["inputs: N * Ref(T)"], outputs=["output: Ref(T)", "value_index: int32"],
                     attrs=["T: type", "N: int >= 1"], shape_fn=_merge_shape,
                     control_flow=ControlFlowKind.MERGE, forwards_input=True)
Enter = define_op("Enter", inputs=["data: T"], outputs=["output: T"],
                  attrs=["T: type", "frame_name: string", "is_constant: bool = false",
                         "parallel_iterations: int = 10"],
                  shape_fn=_util.unchanged, control_flow=ControlFlowKind.ENTER, forwards_input=True)
RefEnter = define_op("RefEnter", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
                     attrs=["T: type", "frame_name: string", "is_constant: bool = false",
                            "parallel_iterations: int = 10"],
                     shape_fn=_util.unchanged, control_flow=ControlFlowKind.ENTER, forwards_input=True)
Exit = define_op("Exit", inputs=["data: T"], outputs=["output: T"], attrs=["T: type"],
                 shape_fn=_util.unchanged, control_flow=ControlFlowKind.EXIT, forwards_input=True)
NextIteration = define_op("NextIteration", inputs=["data: T"], outputs=["output: T"],
                          attrs=["T: type"], shape_fn=_util.unchanged,
                          control_flow=ControlFlowKind.NEXT_ITERATION, forwards_input=True)
LoopCond = define_op("LoopCond", inputs=["input: bool"], outputs=["output: bool"],
                     shape_fn=lambda op: [op.inputs[0].shape.with_rank(0)], control_flow=ControlFlowKind.LOOP_COND,
                     forwards_input=True)
# Orders ops that may be dead: it signals its control outputs live even when its control inputs
# were dead (the backward loop's pops, which a cond may have skipped, are ordered through one).
ControlTrigger = define_op("ControlTrigger", shape_fn=_util.no_outputs, control_flow=ControlFlowKind.CONTROL_TRIGGER)


def switch(data: Any, pred: Any, name: Optional[str] = None) -> Any:
    """Forwards `data` to output_true if `pred` else output_false; the other output is dead."""
    return apply_op(Switch, name=name, data=data, pred=pred)


def merge(inputs: Any, name: Optional[str] = None) -> Any:
    """Forwards the first live input; returns (output, value_index). All inputs references:
    a RefMerge, whose output is a reference too (as TF)."""
    inputs = list(inputs)
    all_refs = bool(inputs) and all(getattr(getattr(t, "dtype", None), "is_ref_dtype", False) for t in inputs)
    return apply_op(RefMerge if all_refs else Merge, name=name, inputs=inputs)


def enter(data: Any, frame_name: str, is_constant: bool = False, parallel_iterations: int = 10,
          name: Optional[str] = None) -> Any:
    return apply_op(Enter, name=name, data=data, frame_name=frame_name, is_constant=is_constant,
                    parallel_iterations=parallel_iterations)


def exit(data: Any, name: Optional[str] = None) -> Any:  # noqa: A001  (TF's name)
    return apply_op(Exit, name=name, data=data)


def next_iteration(data: Any, name: Optional[str] = None) -> Any:
    return apply_op(NextIteration, name=name, data=data)


def loop_cond(pred: Any, name: Optional[str] = None) -> Any:
    return apply_op(LoopCond, name=name, input=pred)


def control_trigger(name: Optional[str] = None) -> Any:
    """An op with no inputs or outputs whose control outputs fire even after dead control inputs."""
    return apply_op(ControlTrigger, name=name)


LoopCond.not_differentiable()
ControlTrigger.not_differentiable()
