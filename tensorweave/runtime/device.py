"""Devices and the device-type registry (white paper 3, 3.2; DESIGN.md "Devices").

A device has a type, a full name, an array namespace (`xp`), a thread pool for expensive
kernels, a resource manager for its stateful kernels, and allocation statistics. New device
types (a CuPy GPU, say) register a factory here; nothing else in the runtime names them.
"""
from __future__ import annotations

import random
import threading
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.device_spec import DeviceSpec, register_known_device_type
from tensorweave.runtime.resource_mgr import ResourceManager
from tensorweave.runtime.thread_pool import ThreadPool


class AllocationStats:
    """Bytes in use and peak bytes, counted by the executor for outputs it keeps alive."""

    __slots__ = ("bytes_in_use", "peak_bytes_in_use", "_lock")

    def __init__(self) -> None:
        self.bytes_in_use = 0
        self.peak_bytes_in_use = 0
        self._lock = threading.Lock()

    def allocate(self, nbytes: int) -> None:
        with self._lock:
            self.bytes_in_use += nbytes
            if self.bytes_in_use > self.peak_bytes_in_use:
                self.peak_bytes_in_use = self.bytes_in_use

    def free(self, nbytes: int) -> None:
        with self._lock:
            self.bytes_in_use -= nbytes

    def reset_peak(self) -> None:
        with self._lock:
            self.peak_bytes_in_use = self.bytes_in_use


class Device:
    """One device. `flops_per_second` and `bytes_per_second` (its link to other devices) are the
    cost model's static estimates for this device type; `memory_limit` (bytes, None for
    unlimited) bounds what the placer puts here; `incarnation` tells a restarted device from
    the old one in rendezvous keys."""

    def __init__(self, spec: DeviceSpec, xp: Any, num_threads: int,
                 memory_limit: Optional[int] = None, flops_per_second: float = 5e10,
                 bytes_per_second: float = 1e10) -> None:
        self.spec = spec
        self.name = spec.to_string()
        self.device_type = spec.device_type or "CPU"
        self.xp = xp
        self.memory_limit = memory_limit
        self.flops_per_second = flops_per_second
        self.bytes_per_second = bytes_per_second
        self.incarnation = random.getrandbits(63) or 1
        # The session's state, shared_name resources included: a local session owns its
        # devices, so two local sessions never share a queue or variable (TF's DirectSession).
        self.resource_manager = ResourceManager()
        self.stats = AllocationStats()
        self._num_threads = num_threads
        self._pool: Optional[ThreadPool] = None
        self._pool_lock = threading.Lock()

    @property
    def num_threads(self) -> int:
        """Threads of this device's pool; kernels size their intra-op helpers by it too."""
        return self._num_threads

    @property
    def thread_pool(self) -> ThreadPool:
        if self._pool is None:  # started lazily: most steps never leave the caller's thread
            with self._pool_lock:
                if self._pool is None:
                    self._pool = ThreadPool(self._num_threads, f"tw-{self.device_type}{self.spec.device_index}")
        return self._pool

    def to_host(self, value: Any) -> Any:
        return value

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __repr__(self) -> str:
        return f"<Device {self.name}>"


DeviceFactory = Callable[[DeviceSpec, int, Any], Device]
_FACTORIES: dict[str, DeviceFactory] = {}


def register_device_type(device_type: str, factory: DeviceFactory) -> None:
    """factory(spec, num_threads, config) -> Device; called once per device of that type.
    `ConfigProto(device_count={device_type: n})` then creates n of them; kernels registered
    for the type (or generic ones over `xp`) and the placer need nothing else."""
    _FACTORIES[device_type] = factory
    register_known_device_type(device_type)


def device_types() -> list[str]:
    return list(_FACTORIES)


def _cpu_factory(spec: DeviceSpec, num_threads: int, config: Any) -> Device:
    return Device(spec, np, num_threads)


register_device_type("CPU", _cpu_factory)


def create_devices(device_count: dict[str, int], num_threads: int, config: Any = None,
                   job: str = "localhost", replica: int = 0, task: int = 0) -> list[Device]:
    """Devices for one process: `device_count` per type (CPU defaults to 1)."""
    counts = {"CPU": 1}
    counts.update({k.upper(): v for k, v in (device_count or {}).items()})
    counts["CPU"] = max(counts["CPU"], 1)  # a process always has its host CPU device, as in TF
    devices = []
    for device_type, factory in _FACTORIES.items():
        for index in range(counts.get(device_type, 0)):
            spec = DeviceSpec(job, replica, task, device_type, index)
            devices.append(factory(spec, num_threads, config))
    return devices


class DeviceMgr:
    """The devices of one session (as TF's DirectSession: its variables die with it) or of
    one server process (where they live until the process ends)."""

    def __init__(self, devices: list[Device]) -> None:
        self.devices = devices
        self.by_name = {d.name: d for d in devices}

    def default_device(self) -> Device:
        return self.devices[0]

    def lookup(self, name: str) -> Device:
        return self.by_name[name]

    def shutdown(self) -> None:
        for d in self.devices:
            d.shutdown()
