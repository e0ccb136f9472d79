"""Moving batches from DataLoader workers to the training process cheaply.

PyTorch sends every tensor a worker returns through a new shared-memory segment; for the
small tensors of a typical batch (labels, token windows, small features) setting that up costs
far more than copying the bytes. Workers therefore send small CPU tensors as numpy arrays,
which travel inline through the pipe, and the loader turns them back into tensors. Large ones
keep PyTorch's shared memory.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["pack", "unpack"]

#: Tensors at least this large keep PyTorch's shared-memory transport.
SHARED_MEMORY_BYTES = 1 << 20


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


def pack(value: Any) -> Any:
    """Replace the small tensors in a batch (dicts, lists, tuples) by ``TensorPayload``."""
    if isinstance(value, torch.Tensor):
        return TensorPayload(value.numpy()) if _small(value) else value
    if type(value) is dict:
        return {key: pack(item) for key, item in value.items()}
    if type(value) is list:
        return [pack(item) for item in value]
    if type(value) is tuple:
        return tuple(pack(item) for item in value)
    return value


def unpack(value: Any) -> Any:
    """Undo ``pack`` (payloads become tensors again)."""
    if isinstance(value, TensorPayload):
        return value.tensor()
    if type(value) is dict:
        return {key: unpack(item) for key, item in value.items()}
    if type(value) is list:
        return [unpack(item) for item in value]
    if type(value) is tuple:
        return tuple(unpack(item) for item in value)
    return value
