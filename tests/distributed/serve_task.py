"""One task of a cluster in its own process, for the tests that need a real server:

    python -m tests.distributed.serve_task CLUSTER_JSON JOB TASK

prints "up grpc://host:port" once serving (the port its cluster spec gives, or the one picked
for port 0) and serves until SIGTERM or SIGINT; log lines (refused calls among them) go to
stderr. The security settings come from the environment (tensorweave/distributed/security.py).
"""
import json
import logging
import signal
import sys

import tensorweave as tf


def main(argv):
    cluster, job, task = json.loads(argv[1]), argv[2], int(argv[3])
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop())
    print("up", server.target, flush=True)
    server.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
