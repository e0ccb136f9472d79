"""The registry of each plugin kind. Each reads the entry-point group ``litdata.<kind>``."""

from __future__ import annotations

from typing import Any

from litdata.core.formats import FormatAdapter, ItemLoader
from litdata.core.protocols import (
    Compressor,
    Encryptor,
    Executor,
    Serializer,
    ShuffleStrategy,
    StorageBackend,
)
from litdata.core.registry.registry import Registry

__all__ = [
    "ALL",
    "compression",
    "encryption",
    "executors",
    "formats",
    "item_loaders",
    "serializers",
    "shuffle",
    "storage",
]


def _registry(kind: str, noun: str, protocol: Any) -> Registry[Any]:
    # The protocol is only used to check members (mypy refuses protocols as ``type[T]``).
    return Registry(kind, noun, protocol)


storage: Registry[StorageBackend] = _registry("storage", "storage backend", StorageBackend)
serializers: Registry[Serializer] = _registry("serializers", "serializer", Serializer)
compression: Registry[Compressor] = _registry("compression", "compressor", Compressor)
encryption: Registry[Encryptor] = _registry("encryption", "encryption algorithm", Encryptor)
shuffle: Registry[ShuffleStrategy] = _registry("shuffle", "shuffle strategy", ShuffleStrategy)
formats: Registry[FormatAdapter] = _registry("formats", "dataset format", FormatAdapter)
executors: Registry[Executor] = _registry("executors", "executor", Executor)
item_loaders: Registry[ItemLoader] = _registry("item_loaders", "item loader", ItemLoader)

ALL: dict[str, Registry[Any]] = {
    registry.kind: registry
    for registry in (
        storage,
        serializers,
        compression,
        encryption,
        shuffle,
        formats,
        executors,
        item_loaders,
    )
}
