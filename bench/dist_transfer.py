"""Push or pull for tensors that cross tasks (issue 13: "choose by measurement and say why").

Two processes on loopback, our gRPC plumbing (tensorweave/distributed/rpc.py, wire.py). The
latency that matters is from the moment a value is ready at the sender to the moment the
receiver holds it (CLOCK_MONOTONIC is shared by the processes of one machine):

- push: the sender calls the receiver's PushTensor with the value as soon as it is ready;
- pull, receiver first: the receiver's RecvTensor request is already waiting at the sender when
  the value becomes ready (TF's usual case for a Recv that starts early);
- pull, value first: the value is ready before the receiver asks (a variable read on a PS).

Prints the median latency of each, for a scalar and for a 4 MB tensor, and the ratios.
Usage: python bench/dist_transfer.py [--repeats N]
"""
from __future__ import annotations

import argparse
import multiprocessing
import statistics
import threading
import time

import numpy as np


def _serve(conn, kind: str) -> None:
    """The far side: a task that either receives pushes or answers pulls."""
    from tensorweave.distributed import rpc

    arrived: list[float] = []
    ready = threading.Event()
    state: dict = {}

    def push(message):  # the receiver's side of a push: note when the value arrived
        arrived.append(time.monotonic())
        return {}, []

    def recv(message):  # the sender's side of a pull: answer when the value is ready
        ready.wait(10)
        ready.clear()
        return {"ready_at": state["ready_at"]}, [("value", state["value"])]

    server, port = rpc.make_server("127.0.0.1:0", {"PushTensor": push, "RecvTensor": recv})
    server.start()
    conn.send(port)
    while True:
        command = conn.recv()
        if command is None:
            break
        if command[0] == "arrivals":
            conn.send(list(arrived))
            arrived.clear()
        elif command[0] == "make_ready":  # the value becomes ready at the sender now
            _, size, delay = command
            time.sleep(delay)
            state["value"] = np.ones(size, np.float32)
            state["ready_at"] = time.monotonic()
            ready.set()
            conn.send(state["ready_at"])
    server.stop(None)


def measure(size: int, repeats: int) -> dict[str, float]:
    from tensorweave.distributed import rpc

    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(target=_serve, args=(child, "both"), daemon=True)
    process.start()
    try:
        port = parent.recv()
        client = rpc.TaskClient("/job:bench/replica:0/task:0", f"127.0.0.1:{port}")
        value = np.ones(size, np.float32)
        client.call("PushTensor", {}, [("value", value)])  # connect, warm up
        parent.send(("arrivals",))
        parent.recv()
        # push: ready here, arrival there
        sent = []
        for _ in range(repeats):
            ready_at = time.monotonic()
            client.call("PushTensor", {"step": 1}, [("value", value)])
            sent.append(ready_at)
        parent.send(("arrivals",))
        arrivals = parent.recv()
        push = [a - s for a, s in zip(arrivals, sent)]
        # pull, receiver first: the request waits at the sender until the value is ready
        pull_waiting = []
        for _ in range(repeats):
            holder: dict = {}

            def ask() -> None:
                reply = client.call("RecvTensor", {})
                holder["got"] = time.monotonic()
                holder["ready_at"] = reply.header["ready_at"]

            thread = threading.Thread(target=ask)
            thread.start()
            parent.send(("make_ready", size, 0.005))  # the request is there well before
            parent.recv()
            thread.join()
            pull_waiting.append(holder["got"] - holder["ready_at"])
        # pull, value first: ready at the sender, then the receiver asks
        pull_ready = []
        for _ in range(repeats):
            parent.send(("make_ready", size, 0.0))
            ready_at = parent.recv()
            time.sleep(0.001)
            asked = time.monotonic()
            client.call("RecvTensor", {})
            pull_ready.append(time.monotonic() - max(asked, ready_at))
        client.close()
        parent.send(None)
    finally:
        process.join(5)
        if process.is_alive():
            process.kill()
    return {"push": statistics.median(push), "pull, receiver first": statistics.median(pull_waiting),
            "pull, value first": statistics.median(pull_ready)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    for label, size in (("scalar", 1), ("4 MB", 1 << 20)):
        figures = measure(size, args.repeats if size == 1 else max(20, args.repeats // 10))
        push = figures["push"]
        ratios = f"{figures['pull, receiver first'] / push:.2f}x, {figures['pull, value first'] / push:.2f}x"
        print(f"{label:>6}: " + ", ".join(f"{k} {v * 1e6:7.0f} us" for k, v in figures.items())
              + f"  (pull/push: {ratios})")


if __name__ == "__main__":
    main()
