"""TF1's `Defun` decorator (tensorflow.python.framework.function.Defun): a Python function traced
once into a graph function, added to the library of each graph that calls it, and called by a
node whose op type is the function's name.

    @Defun(tf.float32, tf.float32)
    def scaled_sum(x, y):
        return x * 2.0 + y

    z = scaled_sum(a, b)      # a call op of type 'scaled_sum_<hash>'

Tensors of the calling graph used in the body are captured: each becomes an extra argument of the
function and an extra input of every call (a variable's reference stays a reference, so the body
may assign it). Without input types (`@Defun()`), the function is traced once per distinct list
of argument dtypes it is called with.
"""
from __future__ import annotations

import hashlib
import inspect
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import function as _function
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["Defun"]

# Keyword arguments of Defun that become FunctionDef attrs, by TF's attr names.
_ATTR_KWARGS = {"noinline": "_noinline", "compiled": "_XlaCompile",
                "separate_compiled_gradients": "_XlaSeparateCompiledGradients"}


class Defun:
    """Decorator defining a graph function from a Python function (TF1's function.Defun).

    `input_types`: the dtype of each argument (none: traced per call signature).
    Keywords: `func_name` (the function's name in the library; default: the Python name
    plus a hash of the definition), `grad_func` (a Defun computing the gradient from the
    inputs and the output gradients: registered as the function's gradient in the library),
    `python_grad_func` (`fn(op, *output_grads)` building the gradient at graph construction),
    `out_names` (names of the outputs), `shape_func` (`fn(op) -> output shapes`), `noinline`."""

    def __init__(self, *input_types: Any, **kwargs: Any) -> None:
        self._input_types = [_dtypes.as_dtype(t) for t in input_types]
        self._kwargs = kwargs

    def __call__(self, func: Callable[..., Any]) -> Any:
        if not callable(func):
            raise ValueError(f"function {func} must be callable")
        argnames, has_varargs = _arg_names(func)
        if self._input_types:
            if len(argnames) < len(self._input_types) and not has_varargs:
                raise ValueError("The function has fewer arguments than the number of specified input types.")
            names = [argnames[i] if i < len(argnames) else f"arg{i}" for i in range(len(self._input_types))]
            return _DefinedFunction(func, names, self._input_types, **self._kwargs)
        if has_varargs:
            return _OverloadedFunction(func, None, **self._kwargs)
        return _OverloadedFunction(func, argnames, **self._kwargs)


def _arg_names(func: Callable[..., Any]) -> tuple[list[str], bool]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return [], True
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names, any(p.kind == p.VAR_POSITIONAL for p in params)


class _DefinedFunction:
    """A Defun with known input types: traced at first use (in the default graph of that
    moment, whose tensors it may capture)."""

    def __init__(self, func: Callable[..., Any], argnames: Sequence[str], input_types: Sequence[_dtypes.DType],
                 func_name: Optional[str] = None, grad_func: Any = None,
                 python_grad_func: Optional[Callable[..., Any]] = None, out_names: Optional[Sequence[str]] = None,
                 shape_func: Optional[Callable[..., Any]] = None, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - set(_ATTR_KWARGS))
        if unknown:
            raise ValueError(f"Unknown keyword arguments: {', '.join(unknown)}")
        if grad_func is not None and not isinstance(grad_func, _DefinedFunction):
            raise ValueError(f"grad_func must be a function defined with Defun and input types, got {grad_func!r}")
        self._func = func
        self._argnames = list(argnames)
        self._input_types = list(input_types)
        self._func_name = func_name
        self._grad_func = grad_func
        self._python_grad_func = python_grad_func
        self._out_names = list(out_names) if out_names is not None else None
        self._shape_func = shape_func
        self._attrs = {_ATTR_KWARGS[k]: bool(v) for k, v in kwargs.items()}
        self._defined: Optional[_function.DefinedFunction] = None
        self._captured: list[Tensor] = []

    # -- TF1's _DefinedFunction properties -------------------------------------------------------
    @property
    def name(self) -> str:
        return self._definition().name

    @property
    def definition(self) -> Any:
        return self._definition().definition

    @property
    def grad_func_name(self) -> Optional[str]:
        return self._grad_func.name if self._grad_func is not None else None

    @property
    def python_grad_func(self) -> Optional[Callable[..., Any]]:
        return self._python_grad_func

    @property
    def declared_input_types(self) -> tuple[_dtypes.DType, ...]:
        return tuple(self._input_types)

    @property
    def captured_inputs(self) -> list[Tensor]:
        self._definition()
        return list(self._captured)

    @property
    def graph(self) -> Any:
        """The body graph the Python function was traced into."""
        return self._definition().body.graph

    # -- tracing -----------------------------------------------------------------------------------
    def _definition(self) -> _function.DefinedFunction:
        if self._defined is None:
            self._defined = self._trace(_graph.get_default_graph())
        return self._defined

    def _trace(self, outer: Any) -> _function.DefinedFunction:
        body = _function.FuncGraph(self._func_name or self._func.__name__, outer_graph=outer)
        with body.as_default():
            args = [body.add_arg(n, t) for n, t in zip(self._argnames, self._input_types)]
            results = self._func(*args)
            outputs = self._outputs(results, body)
        if self._out_names is not None and len(self._out_names) != len(outputs):
            raise ValueError(f"Length of out_names ({len(self._out_names)}) does not match number of outputs "
                             f"({len(outputs)}): {', '.join(self._out_names)}")
        inputs = list(body.inputs)  # the declared arguments, then one per captured tensor
        self._captured = [outer_t for outer_t, _ in body.captures]
        fdef = _function.graph_to_function_def("", body, inputs, outputs, self._out_names)
        for key, value in self._attrs.items():
            fdef.attr[key].b = value
        name = self._func_name or f"{self._func.__name__}_{self._hash(fdef)}"
        fdef.signature.name = name
        body.name = name
        dependencies = list(body._functions.values())
        if self._grad_func is not None:
            dependencies.append(self._grad_func._definition())
        return _function.DefinedFunction(
            fdef, _function.FunctionBody(body, inputs, outputs), python_grad_func=self._python_grad_func,
            grad_func_name=self.grad_func_name, shape_func=self._shape_func, dependencies=dependencies)

    def _outputs(self, results: Any, body: Any) -> list[Tensor]:
        if results is None:
            raise ValueError(f"Function {self._func.__name__} can not return None.")
        items = list(results) if isinstance(results, (list, tuple)) else [results]
        outputs = []
        for item in items:
            if item is None:
                raise ValueError(f"Function {self._func.__name__} can not return None.")
            if isinstance(item, Operation):
                continue  # a stateful op the body runs anyway (FunctionBody keeps stateful ops)
            t = convert_to_tensor(item)
            if t.graph is not body:
                t = body.capture(t)
            outputs.append(t)
        return outputs

    def _hash(self, fdef: Any) -> str:
        hasher = hashlib.sha1()
        hasher.update(fdef.SerializeToString(deterministic=True))
        if self._grad_func is not None:
            hasher.update(self._grad_func.name.encode())
        if self._python_grad_func is not None:
            hasher.update(getattr(self._python_grad_func, "__qualname__", "python_grad_func").encode())
        return hasher.hexdigest()[:8]

    # -- use ---------------------------------------------------------------------------------------
    def instantiate(self, input_types: Sequence[Any]) -> "_DefinedFunction":
        types = [_dtypes.as_dtype(t).base_dtype for t in input_types]
        if types != [t.base_dtype for t in self._input_types]:
            raise ValueError(f"Function {self.name} takes {[t.name for t in self._input_types]}, "
                             f"called with {[t.name for t in types]}")
        return self

    def add_to_graph(self, graph: Any) -> _function.DefinedFunction:
        """Adds the function (with the functions it calls and its gradient) to `graph`'s library."""
        defined = self._definition()
        _function.add_function(graph, defined)
        return defined

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = kwargs.pop("name", None)
        if kwargs:
            raise ValueError(f"Unknown keyword arguments: {', '.join(sorted(kwargs))}")
        if len(args) != len(self._input_types):
            raise ValueError(f"Function {self._func.__name__} takes {len(self._input_types)} argument(s), "
                             f"{len(args)} given")
        graph = _graph.get_default_graph()
        defined = self.add_to_graph(graph)
        inputs = [convert_to_tensor(a, dtype=t) for a, t in zip(args, self._input_types)]
        op = _function.call_function(graph, defined, inputs + self._captured, name)
        if not op.outputs:
            return op
        return op.outputs[0] if len(op.outputs) == 1 else tuple(op.outputs)


class _OverloadedFunction:
    """A Defun without input types: one _DefinedFunction per list of argument dtypes."""

    def __init__(self, func: Callable[..., Any], argnames: Optional[Sequence[str]], **kwargs: Any) -> None:
        self._func = func
        self._argnames = argnames
        self._kwargs = kwargs
        self._overloads: dict[tuple[_dtypes.DType, ...], _DefinedFunction] = {}

    def instantiate(self, input_types: Sequence[Any]) -> _DefinedFunction:
        key = tuple(_dtypes.as_dtype(t).base_dtype for t in input_types)
        defined = self._overloads.get(key)
        if defined is None:
            names = self._argnames
            if names is not None and len(names) != len(key):
                raise ValueError(f"Function {self._func.__name__} takes {len(names)} argument(s), "
                                 f"{len(key)} given")
            names = names if names is not None else [f"arg{i}" for i in range(len(key))]
            kwargs = dict(self._kwargs)
            if kwargs.get("func_name") and self._overloads:
                kwargs["func_name"] = f"{kwargs['func_name']}_{len(self._overloads)}"
            defined = self._overloads[key] = _DefinedFunction(self._func, names, key, **kwargs)
        return defined

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tensors = [convert_to_tensor(a) for a in args]
        return self.instantiate([t.dtype for t in tensors])(*tensors, **kwargs)
