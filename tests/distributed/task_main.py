"""One task of a test cluster as a real process: argv = cluster JSON, job, task index."""
import json
import signal
import sys

import tensorweave as tf


def main() -> None:
    cluster, job, task = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    print("serving", flush=True)
    server.join()


if __name__ == "__main__":
    main()
