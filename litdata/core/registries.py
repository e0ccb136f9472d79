"""The registry of each plugin kind. Each reads the entry-point group ``litdata.<kind>``."""

from __future__ import annotations

from typing import Any

from litdata.core.protocols import (
    Compressor,
    Encryptor,
    Executor,
    FormatAdapter,
    Serializer,
    ShuffleStrategy,
    StorageBackend,
)
from litdata.core.registry import Registry

__all__ = [
    "ALL",
    "compression",
    "encryption",
    "executors",
    "formats",
    "serializers",
    "shuffle",
    "storage",
]

# mypy refuses protocols where a concrete ``type[T]`` is expected; the registries only use
# them to check members, never to instantiate.
storage: Registry[StorageBackend] = Registry(
    "storage",
    "storage backend",
    StorageBackend,  # type: ignore[type-abstract]
)
serializers: Registry[Serializer] = Registry(
    "serializers",
    "serializer",
    Serializer,  # type: ignore[type-abstract]
)
compression: Registry[Compressor] = Registry(
    "compression",
    "compressor",
    Compressor,  # type: ignore[type-abstract]
)
encryption: Registry[Encryptor] = Registry(
    "encryption",
    "encryption algorithm",
    Encryptor,  # type: ignore[type-abstract]
)
shuffle: Registry[ShuffleStrategy] = Registry(
    "shuffle",
    "shuffle strategy",
    ShuffleStrategy,  # type: ignore[type-abstract]
)
formats: Registry[FormatAdapter] = Registry(
    "formats",
    "dataset format",
    FormatAdapter,  # type: ignore[type-abstract]
)
executors: Registry[Executor] = Registry(
    "executors",
    "executor",
    Executor,  # type: ignore[type-abstract]
)

ALL: dict[str, Registry[Any]] = {
    registry.kind: registry
    for registry in (storage, serializers, compression, encryption, shuffle, formats, executors)
}
