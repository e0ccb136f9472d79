"""NUMA affinity: keep a rank's CPU work (and memory) on the NUMA node of its GPU.

Read from sysfs (``/sys/devices/system/node``, ``/sys/bus/pci/devices``); nothing is bound
until :meth:`NumaAffinity.bind`. A machine without NUMA information is one node holding every
CPU; a GPU whose node the kernel does not know (``numa_node`` is ``-1``), or no GPU at all,
gives ``None`` from :func:`get_gpu_affinity`.
"""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["NumaAffinity", "get_gpu_affinity", "get_numa_affinity", "parse_cpu_list"]

#: Where the kernel lists NUMA nodes and PCI devices (a parameter for tests on fake trees).
NODE_ROOT = Path("/sys/devices/system/node")
PCI_ROOT = Path("/sys/bus/pci/devices")

_MPOL_BIND = 2
#: ``(set_mempolicy, get_mempolicy)`` system call numbers per architecture.
_MEMPOLICY_CALLS = {"x86_64": (238, 239), "aarch64": (237, 236)}
_WORD_BITS = 8 * ctypes.sizeof(ctypes.c_ulong)


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """The CPUs of a kernel CPU list such as ``"0-3,8,10-11"``, sorted.

    Raises:
        ValueError: The text is not a CPU list.
    """
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return tuple(sorted(cpus))


def _nodes(root: Path) -> list[int]:
    if not root.is_dir():
        return []
    names = (path.name for path in root.glob("node[0-9]*"))
    return sorted(int(name[4:]) for name in names)


@dataclass(frozen=True)
class NumaAffinity:
    """A plan to run on one NUMA node's CPUs (and allocate from its memory); picklable.

    Get one with :func:`get_gpu_affinity` or :func:`get_numa_affinity` in the rank process,
    call :meth:`bind` there before creating DataLoader workers, and pass the same object as
    ``worker_init_fn`` so each worker binds itself too. Binding applies to the calling thread
    and the threads and processes it starts later.

    Attributes:
        numa_node: The node.
        cpus: The CPUs to run on.
        bind_memory: Also allocate new memory only from the node.
    """

    numa_node: int
    cpus: tuple[int, ...]
    bind_memory: bool = True

    def bind(self) -> None:
        """Apply the plan and check that it holds.

        Raises:
            OSError: The CPUs or the memory policy could not be set (denied, or not supported
                here); the message says which.
        """
        try:
            os.sched_setaffinity(0, self.cpus)
        except OSError as error:
            raise OSError(
                error.errno,
                f"Binding to CPUs {list(self.cpus)} of NUMA node {self.numa_node} "
                f"was refused ({error.strerror}); they may be outside this process's cgroup.",
            ) from error
        if os.sched_getaffinity(0) != set(self.cpus):
            raise OSError(f"CPU affinity did not stick: wanted {list(self.cpus)}")
        if self.bind_memory:
            _bind_memory(self.numa_node)

    def __call__(self, worker_id: int) -> None:
        """Bind, as a DataLoader ``worker_init_fn``."""
        self.bind()


def _mempolicy_calls() -> tuple[int, int]:
    machine = platform.machine()
    calls = _MEMPOLICY_CALLS.get(machine)
    if calls is None or not hasattr(os, "sched_setaffinity"):
        raise OSError(
            f"Binding memory to a NUMA node is not supported on {platform.system()} "
            f"{machine}; use NumaAffinity(..., bind_memory=False)."
        )
    return calls


def _bind_memory(node: int) -> None:
    set_call, get_call = _mempolicy_calls()
    libc = ctypes.CDLL(None, use_errno=True)
    words = node // _WORD_BITS + 1
    mask = (ctypes.c_ulong * words)()
    mask[node // _WORD_BITS] = 1 << (node % _WORD_BITS)
    max_node = ctypes.c_ulong(words * _WORD_BITS + 1)
    if libc.syscall(set_call, _MPOL_BIND, mask, max_node) != 0:
        errno = ctypes.get_errno()
        raise OSError(
            errno,
            f"Binding memory to NUMA node {node} was refused ({os.strerror(errno)}); "
            f"use bind_memory=False to bind CPUs only.",
        )
    mode = ctypes.c_int()
    current = (ctypes.c_ulong * words)()
    if libc.syscall(get_call, ctypes.byref(mode), current, max_node, None, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"Could not read the memory policy back ({os.strerror(errno)})")
    if mode.value != _MPOL_BIND or list(current) != list(mask):
        raise OSError(f"The memory policy did not stick for NUMA node {node}")


def get_numa_affinity(
    numa_node: int, *, bind_memory: bool = True, root: Path | None = None
) -> NumaAffinity:
    """A plan for ``numa_node``'s CPUs that this process may use. Binds nothing.

    Args:
        numa_node: The node.
        bind_memory: Whether :meth:`NumaAffinity.bind` also binds memory allocation.
        root: The sysfs node folder (default ``/sys/devices/system/node``).

    Raises:
        ValueError: There is no such node, or none of its CPUs is allowed here (the plan never
            falls back to another node's CPUs).
    """
    root = NODE_ROOT if root is None else root
    allowed = os.sched_getaffinity(0)
    nodes = _nodes(root)
    if not nodes and numa_node == 0:  # no NUMA information: one node, every CPU
        cpus: tuple[int, ...] = tuple(sorted(allowed))
    elif numa_node not in nodes:
        raise ValueError(f"There is no NUMA node {numa_node} here; the nodes are {nodes}.")
    else:
        listed = parse_cpu_list((root / f"node{numa_node}" / "cpulist").read_text())
        cpus = tuple(cpu for cpu in listed if cpu in allowed)
        if not cpus:
            raise ValueError(
                f"NUMA node {numa_node} has CPUs {list(listed)}, but this process may only run "
                f"on {sorted(allowed)}; choose another node or widen the CPU set."
            )
    return NumaAffinity(numa_node, cpus, bind_memory)


def _device_index(device: Any) -> int:
    import torch

    if device is None:
        return int(torch.cuda.current_device())
    if isinstance(device, int):
        return device
    resolved = torch.device(device)
    if resolved.type != "cuda":
        raise ValueError(f"get_gpu_affinity needs a CUDA device, got {device!r}")
    return resolved.index if resolved.index is not None else int(torch.cuda.current_device())


def get_gpu_affinity(
    device: Any = None, *, bind_memory: bool = True, root: Path | None = None
) -> NumaAffinity | None:
    """A plan for the NUMA node of a CUDA device, from its PCI address. Binds nothing.

    Call it in the rank process (it initializes CUDA) and hand the result to the workers.

    Args:
        device: A ``torch.device``, ``"cuda:1"`` or an index; the current device if ``None``.
        bind_memory: Whether :meth:`NumaAffinity.bind` also binds memory allocation.
        root: The sysfs node folder (default ``/sys/devices/system/node``).

    Returns:
        The plan, or ``None`` when CUDA is unavailable or the kernel does not know the GPU's
        node (no NUMA, or ``numa_node`` is ``-1``).

    Raises:
        RuntimeError: This PyTorch build does not report GPUs' PCI addresses; use
            :func:`get_numa_affinity` with an explicit node.
    """
    import torch

    if not torch.cuda.is_available():
        return None
    properties = torch.cuda.get_device_properties(_device_index(device))
    address = [getattr(properties, f"pci_{part}_id", None) for part in ("domain", "bus", "device")]
    if any(part is None for part in address):
        raise RuntimeError(
            f"PyTorch {torch.__version__} does not report GPUs' PCI addresses; use "
            f"get_numa_affinity(node) with the GPU's node (see nvidia-smi topo -m)."
        )
    domain, bus, slot = address
    node_file = PCI_ROOT / f"{domain:04x}:{bus:02x}:{slot:02x}.0" / "numa_node"
    if not node_file.exists():
        return None
    node = int(node_file.read_text())
    if node < 0:
        return None
    return get_numa_affinity(node, bind_memory=bind_memory, root=root)
