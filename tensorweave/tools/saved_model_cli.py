"""`tensorweave show` and `tensorweave run`: TF's saved_model_cli for SavedModels (and, for
show, plain GraphDef files) — what a model takes and returns, and its outputs for NumPy inputs.

    tensorweave show --dir DIR                               tag sets
    tensorweave show --dir DIR --tag_set serve               signature keys
    tensorweave show --dir DIR --tag_set serve --signature_def KEY   inputs, outputs, method
    tensorweave show --dir DIR --all                         all of the above
    tensorweave show --graph FILE.pb|FILE.pbtxt              placeholders, outputs, op counts
    tensorweave run --dir DIR --tag_set serve --signature_def serving_default \\
        --inputs 'x=x.npy;y=more.npz[y]' [--input_exprs 'z=np.ones((2,3))'] [--outdir OUT]
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
from typing import Any, Optional, Sequence, TextIO

import numpy as np
from google.protobuf import message, text_format
from tensorboard.compat.proto import graph_pb2, types_pb2

from tensorweave.framework.graph import Graph
from tensorweave.framework.graph_def import attr_from_proto
from tensorweave.runtime.session import Session
from tensorweave.saved_model import loader

__all__ = ["show_main", "run_main"]


def _tag_set(text: str) -> list[str]:
    return [t for t in text.split(",") if t]


def _shape_text(info: Any) -> str:
    shape = info.tensor_shape
    if shape.unknown_rank:
        return "unknown_rank"
    dims = [d.size for d in shape.dim]
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _print_tensor_infos(kind: str, infos: Any, indent: int, out: TextIO) -> None:
    pad = " " * indent
    print(f"{pad}The given SavedModel SignatureDef contains the following {kind}(s):", file=out)
    for key in sorted(infos):
        info = infos[key]
        print(f"{pad}  {kind}s['{key}'] tensor_info:", file=out)
        print(f"{pad}      dtype: {types_pb2.DataType.Name(info.dtype)}", file=out)
        print(f"{pad}      shape: {_shape_text(info)}", file=out)
        if info.WhichOneof("encoding") == "coo_sparse":
            sparse = info.coo_sparse
            print(f"{pad}      name: {sparse.values_tensor_name} (values), {sparse.indices_tensor_name} "
                  f"(indices), {sparse.dense_shape_tensor_name} (dense_shape)", file=out)
        else:
            print(f"{pad}      name: {info.name}", file=out)


def _print_signature(signature: Any, indent: int, out: TextIO) -> None:
    _print_tensor_infos("input", signature.inputs, indent, out)
    _print_tensor_infos("output", signature.outputs, indent, out)
    print(f"{' ' * indent}Method name is: {signature.method_name}", file=out)


def _show_saved_model(args: argparse.Namespace, out: TextIO) -> None:
    saved_model = loader.parse_saved_model(args.dir)
    meta_graphs = list(saved_model.meta_graphs)
    if args.all:
        for meta_graph_def in meta_graphs:
            tags = ", ".join(meta_graph_def.meta_info_def.tags)
            print(f"\nMetaGraphDef with tag-set: '{tags}' contains the following SignatureDefs:", file=out)
            for key in sorted(meta_graph_def.signature_def):
                print(f"\nsignature_def['{key}']:", file=out)
                _print_signature(meta_graph_def.signature_def[key], 2, out)
        return
    if args.tag_set is None:
        print("The given SavedModel contains the following tag-sets:", file=out)
        for meta_graph_def in meta_graphs:
            print(", ".join(f"'{t}'" for t in meta_graph_def.meta_info_def.tags), file=out)
        return
    meta_graph_def = loader.SavedModelLoader(args.dir).get_meta_graph_def_from_tags(_tag_set(args.tag_set))
    if args.signature_def is None:
        print("The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:", file=out)
        for key in sorted(meta_graph_def.signature_def):
            print(f'SignatureDef key: "{key}"', file=out)
        return
    if args.signature_def not in meta_graph_def.signature_def:
        raise ValueError(f'Could not find signature "{args.signature_def}". Please choose from: '
                         f"{', '.join(sorted(meta_graph_def.signature_def))}")
    _print_signature(meta_graph_def.signature_def[args.signature_def], 0, out)


def read_graph_def(path: str) -> Any:
    """A GraphDef file, binary or text format (tried in that order, as TF's tools do)."""
    with open(path, "rb") as f:
        data = f.read()
    graph_def = graph_pb2.GraphDef()
    try:
        graph_def.ParseFromString(data)
        return graph_def
    except message.DecodeError:
        pass
    try:
        text_format.Merge(data.decode("utf-8"), graph_def)
    except (UnicodeDecodeError, text_format.ParseError) as err:
        raise ValueError(f"{path} is neither a binary nor a text-format GraphDef: {err}") from None
    return graph_def


def _show_graph(path: str, out: TextIO) -> None:
    graph_def = read_graph_def(path)
    consumed = {i.lstrip("^").split(":")[0] for node in graph_def.node for i in node.input}
    print(f"The given GraphDef contains {len(graph_def.node)} nodes "
          f"(producer version {graph_def.versions.producer}).", file=out)
    print("Inputs (Placeholder nodes):", file=out)
    for node in graph_def.node:
        if node.op in ("Placeholder", "PlaceholderV2", "PlaceholderWithDefault"):
            dtype = types_pb2.DataType.Name(node.attr["dtype"].type)
            shape = attr_from_proto(node.attr["shape"], "shape") if "shape" in node.attr else None
            shape_text = "unknown" if shape is None or shape.ndims is None else \
                str(tuple(-1 if d is None else d for d in shape.as_list()))
            print(f"  {node.name}:0  dtype: {dtype}  shape: {shape_text}", file=out)
    print("Outputs (nodes no other node reads):", file=out)
    for node in graph_def.node:
        if node.name not in consumed and node.op not in ("NoOp", "Assert"):
            print(f"  {node.name} ({node.op})", file=out)
    print("Op types:", file=out)
    for op, count in sorted(collections.Counter(n.op for n in graph_def.node).items()):
        print(f"  {op}: {count}", file=out)


def show_main(argv: Sequence[str], out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="tensorweave show",
                                     description="Show a SavedModel's tag sets and signatures, or a GraphDef's "
                                                 "inputs and outputs.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dir", help="directory holding a SavedModel")
    source.add_argument("--graph", help="a GraphDef file (.pb binary or .pbtxt text)")
    parser.add_argument("--tag_set", help="comma-separated tags of one MetaGraphDef (e.g. serve)")
    parser.add_argument("--signature_def", help="a SignatureDef key of that MetaGraphDef")
    parser.add_argument("--all", action="store_true", help="every tag set and signature")
    args = parser.parse_args(list(argv))
    if args.graph is not None:
        _show_graph(args.graph, out)
    else:
        _show_saved_model(args, out)
    return 0


# -- run -----------------------------------------------------------------------------------------
def _split_assignments(text: Optional[str], flag: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in (text or "").split(";"):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f'{flag} "{item}" format is incorrect. Please follow "<input_key>=<value>"')
        if key.strip() in pairs:
            raise ValueError(f'{flag} "{item}" has a duplicate input key: {key.strip()}')
        pairs[key.strip()] = value.strip()
    return pairs


def _load_input_file(spec: str) -> np.ndarray:
    """`file.npy`, `file.npz` (its only array) or `file.npz[key]`."""
    filename, key = spec, None
    if spec.endswith("]") and "[" in spec:
        filename, _, key = spec[:-1].partition("[")
    data = np.load(filename, allow_pickle=False)
    if isinstance(data, np.ndarray):
        return data
    with data:
        if key is not None:
            if key not in data.files:
                raise ValueError(f'Input file {filename} does not contain variable "{key}"; it has '
                                 f"{', '.join(data.files)}")
            return data[key]
        if len(data.files) != 1:
            raise ValueError(f"Input file {filename} contains several arrays ({', '.join(data.files)}): "
                             f"name one as {filename}[key]")
        return data[data.files[0]]


def build_feeds(inputs: Optional[str], input_exprs: Optional[str]) -> dict[str, np.ndarray]:
    """Signature input key -> array, from `--inputs` files and `--input_exprs` NumPy expressions."""
    feeds = {key: _load_input_file(spec) for key, spec in _split_assignments(inputs, "--inputs").items()}
    for key, expr in _split_assignments(input_exprs, "--input_exprs").items():
        if key in feeds:
            raise ValueError(f"input key {key} is given by both --inputs and --input_exprs")
        # saved_model_cli evaluates these as Python with NumPy as `np` (a local, trusted tool).
        feeds[key] = np.asarray(eval(expr, {"np": np, "__builtins__": {}}))  # noqa: S307
    return feeds


def run_saved_model(export_dir: str, tags: Sequence[str], signature_key: str,
                    feeds: dict[str, np.ndarray]) -> dict[str, Any]:
    """Loads the SavedModel and runs one signature: output key -> value."""
    with Graph().as_default() as graph, Session(graph=graph) as sess:
        meta_graph_def = loader.load(sess, tags, export_dir)
        if signature_key not in meta_graph_def.signature_def:
            raise ValueError(f'Could not find signature "{signature_key}". Please choose from: '
                             f"{', '.join(sorted(meta_graph_def.signature_def))}")
        signature = meta_graph_def.signature_def[signature_key]
        missing = sorted(set(signature.inputs) - set(feeds))
        unknown = sorted(set(feeds) - set(signature.inputs))
        if unknown:
            raise ValueError(f'"{", ".join(unknown)}" is not a valid input key. Please choose from '
                             f"{', '.join(sorted(signature.inputs))}")
        if missing:
            raise ValueError(f"Missing input(s) for signature {signature_key}: {', '.join(missing)}")
        feed_dict = {signature.inputs[k].name: v for k, v in feeds.items()}
        keys = sorted(signature.outputs)
        values = sess.run([signature.outputs[k].name for k in keys], feed_dict=feed_dict)
    return dict(zip(keys, values))


def run_main(argv: Sequence[str], out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="tensorweave run",
                                     description="Run a SavedModel signature on NumPy inputs.")
    parser.add_argument("--dir", required=True, help="directory holding a SavedModel")
    parser.add_argument("--tag_set", required=True, help="comma-separated tags (e.g. serve)")
    parser.add_argument("--signature_def", default="serving_default", help="SignatureDef key")
    parser.add_argument("--inputs", help="'key=file.npy;key2=file.npz[array]'")
    parser.add_argument("--input_exprs", help="'key=np.ones((2, 3))' (NumPy as np)")
    parser.add_argument("--outdir", help="write each output to OUTDIR/<output key>.npy")
    parser.add_argument("--overwrite", action="store_true", help="replace existing output files")
    args = parser.parse_args(list(argv))
    feeds = build_feeds(args.inputs, args.input_exprs)
    results = run_saved_model(args.dir, _tag_set(args.tag_set), args.signature_def, feeds)
    for key, value in results.items():
        if args.outdir:
            os.makedirs(args.outdir, exist_ok=True)
            path = os.path.join(args.outdir, f"{key}.npy")
            if os.path.exists(path) and not args.overwrite:
                raise RuntimeError(f'Output file {path} already exists. Add "--overwrite" flag to overwrite '
                                   "this output file.")
            np.save(path, value, allow_pickle=isinstance(value, np.ndarray) and value.dtype == object)
            print(f"Output {key} is saved to {path}", file=out)
        else:
            print(f"Result for output key {key}:\n{value}", file=out)
    return 0
