"""`tf.train.SyncReplicasOptimizer`: synchronous data-parallel training with backup workers
(OSDI 4.4, Figure 8), built as TF's graph is.

Each worker replica computes its gradients and adds them, stamped with its local step, to one
conditional accumulator per variable, kept next to the variable (shared by name across the
replicas' graphs). The chief's queue runner repeatedly takes the average of the first
`replicas_to_aggregate` gradients of every accumulator (the take advances the accumulator's
step, so the gradients of the slower replicas, computed at an older step, are dropped), applies
it with the wrapped optimizer, increments the global step and puts one token per replica,
carrying the new global step, into the sync token queue. A replica's train op waits for a token
after adding its gradients and takes the token's step as its local step: this is the barrier
that keeps the replicas in step. With `total_num_replicas > replicas_to_aggregate` the extra
replicas are backups: a step completes with the first gradients to arrive, so a straggler never
holds up the others.
"""
from __future__ import annotations

import logging
from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys, Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import array as array_ops
from tensorweave.ops.control_flow.grouping import group, no_op
from tensorweave.ops.queues import ConditionalAccumulator, FIFOQueue, SparseConditionalAccumulator
from tensorweave.ops.state import variable_ops as state_ops
from tensorweave.ops.state.variables import Variable, global_variables, report_uninitialized_variables
from tensorweave.training import session_manager
from tensorweave.training.optimizer import Optimizer
from tensorweave.training.queue_runner import QueueRunner
from tensorweave.training.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]

_log = logging.getLogger("tensorflow")


class SyncReplicasOptimizer(Optimizer):
    """Wraps `opt` so that `replicas_to_aggregate` replicas' gradients are averaged into each
    update; `total_num_replicas` beyond that are backup replicas whose late gradients are
    dropped."""

    def __init__(self, opt: Optimizer, replicas_to_aggregate: int, total_num_replicas: Optional[int] = None,
                 variable_averages: Any = None, variables_to_average: Optional[Sequence[Variable]] = None,
                 use_locking: bool = False, name: str = "sync_replicas") -> None:
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _log.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s", replicas_to_aggregate,
                  total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        # Each step hands out one token per replica (at least one per gradient it waits for).
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step: Any = None
        self._sync_token_queue: Any = None
        self._chief_queue_runner: Optional[QueueRunner] = None
        # (accumulator, device): the chief sets each accumulator's step to the global step.
        self._accumulator_list: list[tuple[Any, str]] = []

    def compute_gradients(self, *args: Any, **kwargs: Any) -> list[tuple[Any, Variable]]:
        """The wrapped optimizer's gradients (aggregation happens in apply_gradients, so a
        replica may still clip its own gradients)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars: Sequence[tuple[Any, Variable]], global_step: Any = None,
                        name: Optional[str] = None) -> Operation:
        """Builds the replica's train op (add gradients, then wait for a token) and the chief's
        sync op (take the averages, apply them, hand out tokens) run by the chief queue runner."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        train_ops: list[Any] = []
        aggregated_grad: list[Any] = []
        var_list: list[Variable] = []

        # The local step stays on this replica's task: colocated with an op of its own, so a
        # device function that puts variables on parameter servers leaves it here.
        local_anchor = no_op()
        with _graph.colocate_with(local_anchor):
            self._local_step = Variable(initial_value=0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                                        dtype=global_step.dtype.base_dtype, name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

        with _graph.name_scope(None, self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with _graph.device(var.device):
                    if grad is None:
                        aggregated_grad.append(None)  # passes through
                        continue
                    if isinstance(grad, Tensor):
                        accum: Any = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                            shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                        aggregated_grad.append(accum.take_grad(self._replicas_to_aggregate))
                    else:
                        if not isinstance(grad, IndexedSlices):
                            raise ValueError("Unknown grad type!")
                        accum = SparseConditionalAccumulator(grad.dtype, shape=(),
                                                             shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_indexed_slices_grad(grad, local_step=self._local_step))
                        aggregated_grad.append(accum.take_indexed_slices_grad(self._replicas_to_aggregate))
                    self._accumulator_list.append((accum, var.device))

            aggregated_grads_and_vars = list(zip(aggregated_grad, var_list))

            # The sync op runs where the global step lives.
            with _graph.device(global_step.device), _graph.name_scope(""):
                update_op = self._opt.apply_gradients(aggregated_grads_and_vars, global_step)

            with _graph.device(global_step.device), _graph.name_scope(""):
                sync_token_queue = FIFOQueue(-1, global_step.dtype.base_dtype, shapes=(), name="sync_token_q",
                                             shared_name="sync_token_q")
                self._sync_token_queue = sync_token_queue
                # The queue runner gets a queue of its own: closing it (as a runner does when it
                # stops) must not close the token queue, which would not reopen.
                dummy_queue = FIFOQueue(1, _dtypes.int32, shapes=(), name="dummy_queue", shared_name="dummy_queue")

            with _graph.device(global_step.device), _graph.name_scope(""):
                # A replica leaves its step only with a token, after its gradients are in.
                with _graph.control_dependencies(train_ops):
                    token = sync_token_queue.dequeue()
                train_op = state_ops.assign(self._local_step, token)

                with _graph.control_dependencies([update_op]):
                    # The tokens carry the incremented global step. TF's Fill reads the step
                    # through its ref-aliasing snapshot, which sees the increment; here the
                    # variable is read after the update explicitly.
                    tokens = array_ops.fill([self._tokens_per_step], global_step.read_value())
                    sync_op = sync_token_queue.enqueue_many((tokens,))

                if self._variable_averages is not None:
                    with _graph.control_dependencies([sync_op]), _graph.name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)

                self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])
            for accum, device in self._accumulator_list:
                with _graph.device(device):
                    chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def get_chief_queue_runner(self) -> QueueRunner:
        """The QueueRunner the chief runs: aggregate, apply, increment the step, hand out tokens."""
        if self._gradients_applied is False:
            raise ValueError("Should be called after apply_gradients().")
        assert self._chief_queue_runner is not None
        return self._chief_queue_runner

    def get_slot(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.get_slot(*args, **kwargs)

    def variables(self) -> list[Variable]:
        """The wrapped optimizer's variables (not the local step)."""
        return self._opt.variables()

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        """The op that puts the first tokens in the queue (`replicas_to_aggregate` by default;
        at least replicas_to_aggregate - total_num_replicas so the first step can finish)."""
        if self._gradients_applied is False:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) vs {tokens_needed} "
                             "(needed)")
        if num_tokens > 0:
            with _graph.device(self._global_step.device), _graph.name_scope(""):
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        """A hook that runs the replica's init ops and, on the chief, the init tokens and the
        chief queue runner, once its session exists."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool, num_tokens: int) -> None:
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self) -> None:
        opt = self._sync_optimizer
        if opt._gradients_applied is False:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner: Optional[QueueRunner] = opt.get_chief_queue_runner()
            self._init_tokens_op: Optional[Operation] = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session: Any, coord: Any) -> None:
        ready, msg = session_manager._ready(self._ready_for_local_init_op, session,
                                            "Model is not ready for SyncReplicasOptimizer local init.")
        if not ready:
            raise RuntimeError("Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                               f"Init op: {self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
