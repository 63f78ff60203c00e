"""ClusterSpec, ServerDef and the cluster resolvers against TensorFlow 2.21: each case of
tests/data/tf_cluster_expected.json (written by make_tf_cluster_fixtures.py) is a snippet run
there with TF's tf.compat.v1 and run here with tensorweave, in the same fabricated environment;
values (dict key types, list/tuple, bytes of serialized protos) and errors (class and message)
must be TF's."""
import json
import os

import pytest

import tensorweave as tf

FIXTURE = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "tf_cluster_expected.json")))
CASES = {case["name"]: case for case in FIXTURE["cases"]}

# Errors whose TF message is empty after its prefix (an `assert` fired inside TF's parser);
# tensorweave's says what was wrong, so only the prefix is compared.
MESSAGE_PREFIX_ONLY = {"error_slurm_bad_range": 'Invalid hostlist format "n[1-2-3]": '}

_TF_SLURM = "tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver"
_TW_SLURM = "tensorweave.distributed.cluster_resolver import slurm_cluster_resolver"


def encode(value):
    """The fixture's JSON form (make_tf_cluster_fixtures.encode)."""
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, tf.train.ClusterSpec):
        return {"ClusterSpec": encode(value.as_dict())}
    return value


@pytest.fixture
def clean_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("SLURM_") or name in ("TF_CONFIG", "CUDA_VISIBLE_DEVICES"):
            monkeypatch.delenv(name)
    return monkeypatch


def run(code, env, monkeypatch):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    scope = {"tf": tf, "os": os}
    try:
        exec(code.replace(_TF_SLURM, _TW_SLURM), scope)
    except Exception as e:
        return {"error": type(e).__name__, "message": str(e)}
    return {"value": encode(scope["result"])}


def test_fixture_covers_the_pieces():
    assert FIXTURE["tensorflow_version"].startswith("2.21")
    assert len(CASES) >= 40
    for prefix in ("dense_", "sparse_", "error_", "server_def", "simple_", "union", "tfconfig_", "slurm_"):
        assert any(name.startswith(prefix) for name in CASES), prefix


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_tensorflow(name, clean_env):
    case = CASES[name]
    got = run(case["code"], case["env"], clean_env)
    expected = case["expected"]
    if name in MESSAGE_PREFIX_ONLY:
        assert got["error"] == expected["error"] and expected["message"] == MESSAGE_PREFIX_ONLY[name]
        assert got["message"].startswith(MESSAGE_PREFIX_ONLY[name]) and len(got["message"]) > len(expected["message"])
    else:
        assert got == expected
