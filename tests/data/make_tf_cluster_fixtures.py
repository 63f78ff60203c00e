"""Writes tf_cluster_expected.json: TensorFlow 2.21's answers (tf.compat.v1) for the cluster
description and the cluster resolvers: ClusterSpec constructions, queries and errors, as_dict,
serialized ClusterDef/ServerDef bytes, TFConfigClusterResolver on several TF_CONFIG values, and
SlurmClusterResolver on fabricated SLURM_* environments (no Slurm, no servers, no processes).

Each case is a snippet run with `tf` bound to the TF 1.x API; it sets `result`. Before it runs,
TF_CONFIG, CUDA_VISIBLE_DEVICES and every SLURM_* variable are cleared and the case's `env` set.
tests/distributed/test_cluster_tf_fixtures.py runs the same snippets with tensorweave.

Run: /opt/tfref/bin/python tests/data/make_tf_cluster_fixtures.py"""
import json
import os

SPEC = "{'worker': ['w0:2222', 'w1:2222', 'w2:2222'], 'ps': ['p0:2222', 'p1:2222']}"
SPARSE = "{'worker': {1: 'w1:2222', 3: 'w3:2222'}, 'ps': ['p0:2222']}"
TF_CONFIG = json.dumps({"cluster": {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]},
                        "task": {"type": "worker", "index": 1}})
TF_CONFIG_RPC = json.dumps({"cluster": {"worker": ["w0:2222", "w1:2222"]}, "task": {"type": "worker", "index": "0"},
                            "rpc_layer": "grpc"})
TF_CONFIG_SPARSE = json.dumps({"cluster": {"worker": {"1": "w1:2222", "4": "w4:2222"}, "ps": ["p0:1"]},
                               "task": {"type": "ps", "index": 0}})
TF_CONFIG_MASTER = json.dumps({"cluster": {"worker": ["w0:1", "w1:1"]}, "session_master": "grpc://m:1",
                               "task": {"type": "worker", "index": 0}})
TF_CONFIG_ONE = json.dumps({"cluster": {"worker": ["w0:1"]}, "task": {"type": "worker", "index": 0}})
SLURM = {"SLURM_PROCID": "3", "SLURM_STEP_NUM_TASKS": "6", "SLURM_STEP_NODELIST": "node[01-02],gpu5",
         "SLURM_STEP_TASKS_PER_NODE": "2(x2),2"}
SLURM_RANK0 = dict(SLURM, SLURM_PROCID="0")
SLURM_HET = {"SLURM_PROCID": "4", "SLURM_STEP_NUM_TASKS": "5", "SLURM_STEP_NODELIST": "b[7-8],a3",
             "SLURM_STEP_TASKS_PER_NODE": "1,2(x2)"}
R = "tf.distribute.cluster_resolver."
SLURM_PS = R + "SlurmClusterResolver(jobs={'ps': 2, 'worker': 4}, gpus_per_node=2, auto_set_gpu=False)"

CASES = [
    # ClusterSpec constructions and queries.
    ("dense_repr", {}, f"result = repr(tf.train.ClusterSpec({SPEC}))"),
    ("dense_str", {}, f"result = str(tf.train.ClusterSpec({SPEC}))"),
    ("dense_as_dict", {}, f"result = tf.train.ClusterSpec({SPEC}).as_dict()"),
    ("dense_jobs", {}, f"result = tf.train.ClusterSpec({SPEC}).jobs"),
    ("dense_num_tasks", {}, f"result = tf.train.ClusterSpec({SPEC}).num_tasks('worker')"),
    ("dense_task_indices", {}, f"result = tf.train.ClusterSpec({SPEC}).task_indices('ps')"),
    ("dense_task_address", {}, f"result = tf.train.ClusterSpec({SPEC}).task_address('worker', 2)"),
    ("dense_job_tasks", {}, f"result = tf.train.ClusterSpec({SPEC}).job_tasks('worker')"),
    ("dense_cluster_def_bytes", {},
     f"result = tf.train.ClusterSpec({SPEC}).as_cluster_def().SerializeToString(deterministic=True)"),
    ("dense_cluster_def_text", {}, f"result = str(tf.train.ClusterSpec({SPEC}).as_cluster_def())"),
    ("tuple_tasks", {}, "result = tf.train.ClusterSpec({'w': ('a:1', 'b:1')}).as_dict()"),
    ("bytes_addresses", {}, "result = tf.train.ClusterSpec({'w': [b'a:1']}).as_cluster_def().job[0].tasks[0]"),
    ("sparse_as_dict", {}, f"result = tf.train.ClusterSpec({SPARSE}).as_dict()"),
    ("sparse_repr", {}, f"result = repr(tf.train.ClusterSpec({SPARSE}))"),
    ("sparse_num_tasks", {}, f"result = tf.train.ClusterSpec({SPARSE}).num_tasks('worker')"),
    ("sparse_task_indices", {}, f"result = tf.train.ClusterSpec({SPARSE}).task_indices('worker')"),
    ("sparse_job_tasks", {}, f"result = tf.train.ClusterSpec({SPARSE}).job_tasks('worker')"),
    ("sparse_cluster_def_bytes", {},
     f"result = tf.train.ClusterSpec({SPARSE}).as_cluster_def().SerializeToString(deterministic=True)"),
    ("sparse_string_indices", {}, "result = tf.train.ClusterSpec({'w': {'2': 'a:1', '0': 'b:1'}}).as_dict()"),
    ("sparse_starting_at_zero_is_dense", {}, "result = tf.train.ClusterSpec({'w': {1: 'a:1', 0: 'b:1'}}).as_dict()"),
    ("empty_job", {}, "c = tf.train.ClusterSpec({'w': []}); result = [c.as_dict(), c.num_tasks('w'), bool(c)]"),
    ("empty_spec", {}, "c = tf.train.ClusterSpec({}); result = [bool(c), c.jobs, repr(c), c.as_dict()]"),
    ("from_cluster_def", {},
     f"d = tf.train.ClusterSpec({SPARSE}).as_cluster_def(); c = tf.train.ClusterSpec(d); "
     "result = [c.as_dict(), c.jobs, c.as_cluster_def() is d]"),
    ("from_cluster_spec", {},
     f"a = tf.train.ClusterSpec({SPEC}); c = tf.train.ClusterSpec(a); "
     "result = [c.as_dict(), c.jobs, c == a, c.as_cluster_def() is a.as_cluster_def(), "
     "c.as_cluster_def() == a.as_cluster_def()]"),
    ("equality", {},
     f"a = tf.train.ClusterSpec({SPEC}); b = tf.train.ClusterSpec({SPEC}); s = tf.train.ClusterSpec({SPARSE}); "
     "result = [a == b, a != b, a == s, a != s, a == {'ps': {0: 'p0:2222', 1: 'p1:2222'}, "
     "'worker': {0: 'w0:2222', 1: 'w1:2222', 2: 'w2:2222'}}, a == " + SPEC + "]"),
    ("job_def_proto", {},
     "d = tf.train.ClusterDef(); j = d.job.add(name='x'); j.tasks[3] = 'h:3'; "
     "result = tf.train.ClusterSpec(d).as_dict()"),
    # ClusterSpec errors.
    ("error_unknown_job_num_tasks", {}, f"result = tf.train.ClusterSpec({SPEC}).num_tasks('chief')"),
    ("error_unknown_job_task_indices", {}, f"result = tf.train.ClusterSpec({SPEC}).task_indices('chief')"),
    ("error_unknown_job_address", {}, f"result = tf.train.ClusterSpec({SPEC}).task_address('chief', 0)"),
    ("error_unknown_task_address", {}, f"result = tf.train.ClusterSpec({SPEC}).task_address('worker', 3)"),
    ("error_sparse_missing_task", {}, f"result = tf.train.ClusterSpec({SPARSE}).task_address('worker', 0)"),
    ("error_unknown_job_job_tasks", {}, f"result = tf.train.ClusterSpec({SPEC}).job_tasks('chief')"),
    ("error_bad_cluster", {}, "result = tf.train.ClusterSpec(['w0:1'])"),
    ("error_bad_tasks", {}, "result = tf.train.ClusterSpec({'w': 'w0:1'})"),
    ("error_bad_address", {}, "result = tf.train.ClusterSpec({'w': [5]})"),
    ("error_bad_job_name", {}, "result = tf.train.ClusterSpec({7: ['a:1']})"),
    # ServerDef.
    ("server_def_bytes", {},
     f"s = tf.train.ServerDef(cluster=tf.train.ClusterSpec({SPEC}).as_cluster_def(), job_name='worker', "
     "task_index=1, protocol='grpc', port=2222); s.default_session_config.allow_soft_placement = True; "
     "result = s.SerializeToString(deterministic=True)"),
    ("server_def_device_filters", {},
     "s = tf.train.ServerDef(job_name='ps', replica=2); f = s.cluster_device_filters.jobs.add(name='worker'); "
     "f.tasks[1].device_filters.extend(['/job:ps', '/job:worker/task:1']); "
     "f.tasks[0].device_filters.append('/job:ps'); "
     "result = [s.SerializeToString(deterministic=True), str(s)]"),
    ("server_def_defaults", {},
     "s = tf.train.ServerDef(); result = [s.job_name, s.task_index, s.protocol, s.port, s.replica, "
     "s.HasField('cluster'), s.HasField('default_session_config'), s.HasField('cluster_device_filters')]"),
    # SimpleClusterResolver.
    ("simple_master", {},
     f"r = {R}SimpleClusterResolver(tf.train.ClusterSpec({SPEC}), master='m:1', task_type='worker', task_id=1); "
     "result = [r.master(), r.master(rpc_layer='grpc'), r.master('ps', 1), r.master('ps', 1, 'grpc'), "
     "r.task_type, r.task_id, r.environment, r.num_accelerators(), r.rpc_layer, r.cluster_spec().as_dict()]"),
    ("simple_rpc_layer", {},
     f"r = {R}SimpleClusterResolver(tf.train.ClusterSpec({SPEC}), rpc_layer='grpc', num_accelerators={{'GPU': 2}}); "
     "r.task_type = 'ps'; r.task_id = 0; result = [r.master(), r.master('worker', 0), r.task_type, r.task_id, "
     "r.num_accelerators()]"),
    ("error_simple_not_spec", {}, f"result = {R}SimpleClusterResolver({SPEC})"),
    ("error_simple_master_type", {}, f"result = {R}SimpleClusterResolver(tf.train.ClusterSpec({SPEC}), master=5)"),
    ("union", {},
     f"a = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': ['w0:1', 'w1:1']}}), task_type='worker', "
     f"task_id=0, rpc_layer='grpc'); b = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': ['w2:1'], "
     f"'ps': ['p0:1']}})); u = {R}UnionResolver(a, b); "
     "result = [u.cluster_spec().as_dict(), u.master(), u.master('ps', 0), u.task_type, u.task_id, u.rpc_layer]"),
    ("union_sparse", {},
     f"a = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': ['w0:1']}})); "
     f"b = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': {{3: 'w3:1'}}}})); "
     f"result = {R}UnionResolver(a, b).cluster_spec().as_dict()"),
    ("union_one_task_sparse_is_dense", {},
     f"a = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': ['w0:1']}})); "
     f"b = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': {{0: 'w3:1'}}}})); "
     f"result = {R}UnionResolver(a, b).cluster_spec()"),
    ("error_union_duplicate", {},
     f"a = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': ['w0:1', 'w1:1']}})); "
     f"b = {R}SimpleClusterResolver(tf.train.ClusterSpec({{'worker': {{1: 'w3:1', 4: 'w4:1'}}}})); "
     f"result = {R}UnionResolver(a, b).cluster_spec()"),
    ("error_union_empty", {}, f"result = {R}UnionResolver()"),
    # TFConfigClusterResolver.
    ("tfconfig_basic", {"TF_CONFIG": TF_CONFIG},
     f"r = {R}TFConfigClusterResolver(); result = [r.cluster_spec().as_dict(), r.task_type, r.task_id, "
     "r.rpc_layer, r.environment, r.master(), r.master('ps', 0), r.master('chief', 0, 'grpc')]"),
    ("tfconfig_rpc_layer", {"TF_CONFIG": TF_CONFIG_RPC},
     f"r = {R}TFConfigClusterResolver(); result = [r.task_id, r.rpc_layer, r.master(), r.master(rpc_layer='grpc+x')]"),
    ("tfconfig_overrides", {"TF_CONFIG": TF_CONFIG},
     f"r = {R}TFConfigClusterResolver(task_type='ps', task_id=0, rpc_layer='grpc', environment='google'); "
     "result = [r.task_type, r.task_id, r.rpc_layer, r.environment, r.master()]"),
    ("tfconfig_setters", {"TF_CONFIG": TF_CONFIG},
     f"r = {R}TFConfigClusterResolver(); r.task_type = 'chief'; r.task_id = 0; r.rpc_layer = 'grpc'; "
     "result = [r.task_type, r.task_id, r.master()]"),
    ("tfconfig_sparse", {"TF_CONFIG": TF_CONFIG_SPARSE},
     f"r = {R}TFConfigClusterResolver(); result = [r.cluster_spec().as_dict(), repr(r.cluster_spec()), "
     "r.task_type, r.master(), r.master('worker', 4)]"),
    ("tfconfig_session_master", {"TF_CONFIG": TF_CONFIG_MASTER},
     f"r = {R}TFConfigClusterResolver(); result = [r.master(), r.master('worker', 1, 'grpc')]"),
    ("tfconfig_single_task", {"TF_CONFIG": TF_CONFIG_ONE},
     f"r = {R}TFConfigClusterResolver(); result = [r.master(), r.task_type, r.task_id]"),
    ("tfconfig_unset", {},
     f"r = {R}TFConfigClusterResolver(); result = [r.cluster_spec().as_dict(), bool(r.cluster_spec()), "
     "r.task_type, r.task_id, r.rpc_layer, r.master()]"),
    ("tfconfig_num_accelerators", {"TF_CONFIG": TF_CONFIG_ONE},
     f"result = dict({R}TFConfigClusterResolver().num_accelerators())"),
    ("error_tfconfig_no_task", {"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1", "b:1"]}})},
     f"result = {R}TFConfigClusterResolver().master()"),
    # SlurmClusterResolver.
    ("slurm_jobs", SLURM,
     f"r = {SLURM_PS}; c = r.cluster_spec(); result = [c.as_dict(), r.task_type, r.task_id, r.get_task_info(), "
     "r.master(), r.master('ps', 1), r.master('worker', 0, 'grpc+verbs'), r.num_accelerators(), r.rpc_layer]"),
    ("slurm_before_cluster_spec", SLURM, f"r = {SLURM_PS}; result = [r.get_task_info(), r.master()]"),
    ("slurm_default_jobs", SLURM_RANK0,
     f"r = {R}SlurmClusterResolver(gpus_per_node=2, auto_set_gpu=False, port_base=9000); "
     "result = [r.cluster_spec().as_dict(), r.get_task_info(), r.master()]"),
    ("slurm_heterogeneous", SLURM_HET,
     f"r = {R}SlurmClusterResolver(jobs={{'worker': 3, 'evaluator': 1, 'chief': 1}}, gpus_per_node=2, "
     "auto_set_gpu=False); result = [r.cluster_spec().as_dict(), r.get_task_info(), r.master(rpc_layer='')]"),
    ("slurm_tasks_per_node_int", {"SLURM_PROCID": "1", "SLURM_STEP_NODELIST": "h[9-11]"},
     f"r = {R}SlurmClusterResolver(jobs={{'worker': 6}}, tasks_per_node=2, gpus_per_node=4, rpc_layer=None, "
     "auto_set_gpu=False); result = [r.cluster_spec().as_dict(), r.master(), r.num_accelerators()]"),
    ("slurm_tasks_per_node_dict", {"SLURM_PROCID": "2"},
     f"r = {R}SlurmClusterResolver(jobs={{'ps': 1, 'worker': 2}}, tasks_per_node={{'z': 1, 'y': 2}}, "
     "gpus_per_node=2, gpus_per_task=1, auto_set_gpu=False); result = [r.cluster_spec().as_dict(), r.get_task_info()]"),
    ("slurm_auto_set_gpu", SLURM,
     f"r = {R}SlurmClusterResolver(gpus_per_node=4); r.cluster_spec(); "
     "result = [os.environ.get('CUDA_VISIBLE_DEVICES'), r.num_accelerators()]"),
    ("slurm_gpus_per_task", SLURM,
     f"r = {R}SlurmClusterResolver(gpus_per_node=4, gpus_per_task=1); r.cluster_spec(); "
     "result = [os.environ.get('CUDA_VISIBLE_DEVICES'), r.num_accelerators()]"),
    ("slurm_hostlists", {},
     "from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver as s; "
     "result = [s.expand_hostlist(h) for h in ['node[01-03],other[5,7-8]', 'n[1-2],m5,o[3-4,6,7-9]', 'a', "
     "'x[008-011]', 'p[9],q', 'r1-2,s[1-1]']] + [s.expand_tasks_per_node(t) for t in ['3(x2),2,1', '1', '4(x1)']]"),
    ("error_slurm_bad_hostlist", {},
     "from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver as s; "
     "result = s.expand_hostlist('n[1-2')"),
    ("error_slurm_bad_range", {},
     "from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver as s; "
     "result = s.expand_hostlist('n[1-2-3]')"),
    ("error_slurm_no_env", {}, f"result = {R}SlurmClusterResolver(gpus_per_node=1)"),
    ("error_slurm_too_many_tasks", SLURM,
     f"result = {R}SlurmClusterResolver(jobs={{'worker': 7}}, gpus_per_node=2)"),
    ("error_slurm_too_many_gpus", SLURM,
     f"result = {R}SlurmClusterResolver(gpus_per_node=2, gpus_per_task=2)"),
    ("error_slurm_no_tasks_per_node", {"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2",
                                       "SLURM_STEP_NODELIST": "a"},
     f"result = {R}SlurmClusterResolver(gpus_per_node=1)"),
]


def encode(value):
    """A JSON form keeping what JSON would lose: dict key types, tuples vs lists, bytes."""
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if type(value).__name__ == "ClusterSpec":
        return {"ClusterSpec": encode(value.as_dict())}
    return value


def clear_env():
    for name in list(os.environ):
        if name.startswith("SLURM_") or name in ("TF_CONFIG", "CUDA_VISIBLE_DEVICES"):
            del os.environ[name]


def run_case(tf, code, env):
    clear_env()
    os.environ.update(env)
    scope = {"tf": tf, "os": os}
    try:
        exec(code, scope)
    except Exception as e:  # the error is the expected result
        return {"error": type(e).__name__, "message": str(e)}
    finally:
        clear_env()
    return {"value": encode(scope["result"])}


def main():
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    cases = [{"name": name, "env": env, "code": code, "expected": run_case(tf, code, env)}
             for name, env, code in CASES]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_cluster_expected.json")
    with open(path, "w") as f:
        json.dump({"tensorflow_version": tf.__version__, "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
