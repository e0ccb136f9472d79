"""Moving batches from DataLoader workers to the training process cheaply.

PyTorch sends every tensor a worker returns through a new shared-memory segment; for the
small tensors of a typical batch (labels, token windows, small features) setting that up costs
far more than copying the bytes. Workers therefore send small CPU tensors as numpy arrays,
which travel inline through the pipe, and the loader turns them back into tensors. Large ones
keep PyTorch's shared memory. Everything else a worker returns (lists of ``bytes``, strings)
is pickled through the result queue's pipe, which the loader widens so that a batch of a few
hundred KiB crosses in one write instead of a ping-pong of 64 KiB pieces.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

import torch

if sys.platform == "linux":
    import fcntl

__all__ = ["map_leaves", "pack", "unpack", "widen_pipe"]

#: Tensors at least this large keep PyTorch's shared-memory transport.
SHARED_MEMORY_BYTES = 1 << 20

#: The pipe capacity asked for (Linux caps it at ``/proc/sys/fs/pipe-max-size``, 1 MiB by default).
PIPE_BYTES = 1 << 20


class TensorPayload:
    """A tensor's data as a numpy array, for the trip from a worker to the loader."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def tensor(self) -> torch.Tensor:
        """The tensor again (sharing the received array's memory)."""
        return torch.from_numpy(self.array)

    def pin_memory(self, device: Any = None) -> torch.Tensor:
        """Called by the DataLoader's pinning thread: the tensor, in pinned memory."""
        return self.tensor().pin_memory()


def _small(tensor: torch.Tensor) -> bool:
    return (
        tensor.device.type == "cpu"
        and not tensor.requires_grad
        and tensor.element_size() * tensor.numel() < SHARED_MEMORY_BYTES
        and tensor.dtype not in (torch.bfloat16,)  # no numpy counterpart
    )


def map_leaves(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """Apply ``leaf`` to every non-container in a batch of dicts, lists and tuples."""
    if type(value) is dict:
        return {key: map_leaves(item, leaf) for key, item in value.items()}
    if type(value) is list:
        return [map_leaves(item, leaf) for item in value]
    if type(value) is tuple:
        return tuple(map_leaves(item, leaf) for item in value)
    return leaf(value)


def _pack_leaf(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and _small(value):
        return TensorPayload(value.numpy())
    return value


def _unpack_leaf(value: Any) -> Any:
    return value.tensor() if isinstance(value, TensorPayload) else value


def pack(value: Any) -> Any:
    """Replace the small tensors in a batch (dicts, lists, tuples) by ``TensorPayload``."""
    return map_leaves(value, _pack_leaf)


def unpack(value: Any) -> Any:
    """Undo ``pack`` (payloads become tensors again)."""
    return map_leaves(value, _unpack_leaf)


def widen_pipe(queue: Any) -> None:
    """Ask for a ``PIPE_BYTES`` buffer on the pipe under a ``multiprocessing`` queue.

    A no-op where pipes cannot be resized (not Linux) or the queue has no pipe; a refusal
    (a lower ``pipe-max-size``) leaves the default size.
    """
    reader = getattr(queue, "_reader", None)
    if sys.platform != "linux" or reader is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(reader.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
