"""tf.saved_model.utils: TensorInfo, how a SignatureDef names a tensor (dense by name, sparse
by its three component tensors), and back."""
from __future__ import annotations

import os
from typing import Any, Optional

from tensorboard.compat.proto import meta_graph_pb2

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph_def import shape_to_proto
from tensorweave.framework.meta_graph import prepend_name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.saved_model import constants

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor: Any) -> Any:
    """The TensorInfo of a Tensor or SparseTensor: its name(s), dtype and static shape."""
    info = meta_graph_pb2.TensorInfo()
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        info.dtype = tensor.dtype.as_datatype_enum
        info.tensor_shape.CopyFrom(shape_to_proto(tensor.get_shape()))
        return info
    if not isinstance(tensor, _graph.Tensor):
        raise TypeError(f"build_tensor_info expects a Tensor or SparseTensor, got {type(tensor).__name__}")
    info.name = tensor.name
    info.dtype = tensor.dtype.as_datatype_enum
    info.tensor_shape.CopyFrom(shape_to_proto(tensor.get_shape()))
    return info


def get_tensor_from_tensor_info(tensor_info: Any, graph: Optional[_graph.Graph] = None,
                                import_scope: Optional[str] = None) -> Any:
    """The Tensor (or SparseTensor) `tensor_info` names in `graph` (default: the default graph),
    under `import_scope` when the graph was imported with one."""
    graph = graph or _graph.get_default_graph()

    def tensor(name: str) -> Any:
        return graph.get_tensor_by_name(prepend_name_scope(name, import_scope))

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        sparse = tensor_info.coo_sparse
        return SparseTensor(tensor(sparse.indices_tensor_name), tensor(sparse.values_tensor_name),
                            tensor(sparse.dense_shape_tensor_name))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}")


# -- the directory layout ------------------------------------------------------------------------
def get_variables_dir(export_dir: str) -> str:
    return os.path.join(os.fspath(export_dir), constants.VARIABLES_DIRECTORY)


def get_variables_path(export_dir: str) -> str:
    """The checkpoint prefix of a SavedModel's variables (export_dir/variables/variables)."""
    return os.path.join(get_variables_dir(export_dir), constants.VARIABLES_FILENAME)


def get_or_create_variables_dir(export_dir: str) -> str:
    path = get_variables_dir(export_dir)
    os.makedirs(path, exist_ok=True)
    return path


def get_assets_dir(export_dir: str) -> str:
    return os.path.join(os.fspath(export_dir), constants.ASSETS_DIRECTORY)

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.utils", __name__)
