"""`tf.profiler.ProfileOptionBuilder`: the option dicts tf.profiler.profile reads, with TF's keys
and defaults (three canned sets: parameters, float operations, time and memory)."""
from __future__ import annotations

import copy
from typing import Any, Optional

TRAINABLE_VARIABLES = "_trainable_variables"  # the op type given to trainable variables' ops
VARIABLES = "_variables"                      # ... and to every variable's op


def _base(**overrides: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "max_depth": 10000, "min_bytes": 0, "min_micros": 0, "min_params": 0, "min_float_ops": 0,
        "min_occurrence": 0, "order_by": "name", "account_type_regexes": [".*"],
        "start_name_regexes": [".*"], "trim_name_regexes": [], "show_name_regexes": [".*"],
        "hide_name_regexes": [], "account_displayed_op_only": True, "select": ["micros"],
        "step": -1, "output": "stdout"}
    options.update(overrides)
    return options


class ProfileOptionBuilder:
    """Builds profiler options step by step; `build()` returns a fresh dict."""

    def __init__(self, options: Optional[dict[str, Any]] = None) -> None:
        if options is not None:
            self._options = copy.deepcopy(options)
        else:
            self._options = _base(max_depth=100, account_displayed_op_only=False)

    @staticmethod
    def trainable_variables_parameter() -> dict[str, Any]:
        """Parameter counts of trainable variables, per name scope."""
        return _base(account_type_regexes=[TRAINABLE_VARIABLES], select=["params"])

    @staticmethod
    def float_operation() -> dict[str, Any]:
        """Float operations of ops with registered FLOP statistics."""
        return _base(min_float_ops=1, order_by="float_ops", select=["float_ops"])

    @staticmethod
    def time_and_memory(min_micros: int = 1, min_bytes: int = 1, min_accelerator_micros: int = 0,
                        min_cpu_micros: int = 0, min_peak_bytes: int = 0, min_residual_bytes: int = 0,
                        min_output_bytes: int = 0) -> dict[str, Any]:
        """Execution time and memory of ops, from traced steps (run_meta)."""
        return _base(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                     min_residual_bytes=min_residual_bytes, min_output_bytes=min_output_bytes,
                     min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                     min_cpu_micros=min_cpu_micros, order_by="micros", select=["micros", "bytes"])

    def build(self) -> dict[str, Any]:
        return copy.deepcopy(self._options)

    def _set(self, **values: Any) -> "ProfileOptionBuilder":
        self._options.update(values)
        return self

    def with_max_depth(self, max_depth: int) -> "ProfileOptionBuilder":
        return self._set(max_depth=max_depth)

    def with_min_memory(self, min_bytes: int = 0, min_peak_bytes: int = 0, min_residual_bytes: int = 0,
                        min_output_bytes: int = 0) -> "ProfileOptionBuilder":
        return self._set(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                         min_residual_bytes=min_residual_bytes, min_output_bytes=min_output_bytes)

    def with_min_execution_time(self, min_micros: int = 0, min_accelerator_micros: int = 0,
                                min_cpu_micros: int = 0) -> "ProfileOptionBuilder":
        return self._set(min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                         min_cpu_micros=min_cpu_micros)

    def with_min_parameters(self, min_params: int) -> "ProfileOptionBuilder":
        return self._set(min_params=min_params)

    def with_min_occurrence(self, min_occurrence: int) -> "ProfileOptionBuilder":
        return self._set(min_occurrence=min_occurrence)

    def with_min_float_operations(self, min_float_ops: int) -> "ProfileOptionBuilder":
        return self._set(min_float_ops=min_float_ops)

    def with_accounted_types(self, account_type_regexes: list[str]) -> "ProfileOptionBuilder":
        return self._set(account_type_regexes=list(account_type_regexes))

    def with_node_names(self, start_name_regexes: Optional[list[str]] = None,
                        show_name_regexes: Optional[list[str]] = None,
                        hide_name_regexes: Optional[list[str]] = None,
                        trim_name_regexes: Optional[list[str]] = None) -> "ProfileOptionBuilder":
        given = {"start_name_regexes": start_name_regexes, "show_name_regexes": show_name_regexes,
                 "hide_name_regexes": hide_name_regexes, "trim_name_regexes": trim_name_regexes}
        return self._set(**{k: list(v) for k, v in given.items() if v is not None})

    def account_displayed_op_only(self, is_true: bool) -> "ProfileOptionBuilder":
        return self._set(account_displayed_op_only=is_true)

    def with_empty_output(self) -> "ProfileOptionBuilder":
        return self._set(output="none")

    def with_stdout_output(self) -> "ProfileOptionBuilder":
        return self._set(output="stdout")

    def with_file_output(self, outfile: str) -> "ProfileOptionBuilder":
        return self._set(output=f"file:outfile={outfile}")

    def order_by(self, attribute: str) -> "ProfileOptionBuilder":
        return self._set(order_by=attribute)

    def select(self, attributes: list[str]) -> "ProfileOptionBuilder":
        return self._set(select=list(attributes))

    def with_step(self, step: int) -> "ProfileOptionBuilder":
        return self._set(step=step)
