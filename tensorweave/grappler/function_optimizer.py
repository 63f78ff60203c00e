"""The function optimizer's decision (TF's function_optimizer.cc): whether a plan's function
calls are inlined.

TensorFlow's function optimizer inlines a graph's function calls (Defun calls, PartitionedCall,
StatefulPartitionedCall) into the caller's graph unless the function is marked `_noinline`.
Here the inlining itself is runtime/inlining.py, run by StepPlan on each partition once it is
placed (it needs the call's device, and a body's kernels are keyed by the body's nodes so a
stateful body keeps its state); this module is its one switch, read from the session's
configuration as every other pass's is: `RewriterConfig.function_optimization` (off also with
`disable_meta_optimizer`, or TW_GRAPPLER=off), or the classic optimizer's
`OptimizerOptions.do_function_inlining`. A call that is not inlined runs as a sub-step with the
same numbers (runtime/functions.py).

Not done here: TF's specialisation of a non-inlined function on constant inputs or unused
outputs; the calls that stay sub-steps here are bodies with while loops, very large bodies and
`_noinline` ones, where a specialised copy saves little.
"""
from __future__ import annotations

from typing import Any

from tensorweave.grappler.settings import settings_for


def inlines_calls(config: Any) -> bool:
    """Whether a plan of a session with this ConfigProto inlines its function calls."""
    return settings_for(config).function_optimization
