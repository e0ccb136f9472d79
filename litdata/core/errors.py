"""The error hierarchy: one root, and each subclass also inherits the builtin callers expect.

Every message says what happened, where (file, plugin, URL, sample path) and what to do next.
"""

from __future__ import annotations

__all__ = [
    "ChunkCorruptError",
    "ChunkMissingError",
    "ChunkWaitTimeoutError",
    "DatasetExistsError",
    "DatasetFormatError",
    "DatasetNotFoundError",
    "DecryptionError",
    "DiskFullError",
    "DuplicatePluginError",
    "LitdataError",
    "LitdataWarning",
    "OutputLockedError",
    "PluginError",
    "PluginLoadError",
    "PluginOptionsError",
    "PluginValidationError",
    "ProcessingError",
    "SampleDecodeError",
    "SampleError",
    "StorageError",
    "UnknownPluginError",
    "UnsafeDataError",
]


class LitdataError(Exception):
    """Root of every error litdata raises on purpose."""


class LitdataWarning(UserWarning):
    """Root of every warning litdata emits."""


class PluginError(LitdataError):
    """A plugin could not be found, loaded or trusted."""


class UnknownPluginError(PluginError, KeyError, ValueError):
    """No plugin of the requested kind has the requested name.

    Also a ``ValueError``, which LitData raises for an unknown compression.
    """

    def __str__(self) -> str:
        # KeyError would otherwise show the message in quotes.
        return str(self.args[0]) if self.args else ""


class PluginLoadError(PluginError, ImportError):
    """A plugin's module failed to import (usually a missing optional dependency)."""


class PluginOptionsError(PluginError, TypeError, ValueError):
    """A plugin was given options its constructor does not take (the message lists its own).

    Both a ``TypeError`` (what calling the constructor would raise) and a ``ValueError`` (a
    bad setting).
    """


class PluginValidationError(PluginError, TypeError):
    """A plugin does not satisfy the protocol of its kind."""


class DuplicatePluginError(PluginError):
    """Two distributions register a plugin of the same kind under the same name."""


class DatasetNotFoundError(LitdataError, FileNotFoundError, ValueError):
    """There is no dataset (no ``index.json``) where one was expected.

    Also a ``ValueError``, which LitData raises for a missing or empty dataset directory.
    """


class DatasetExistsError(LitdataError, FileExistsError, ValueError, RuntimeError):
    """A dataset is already where a new one would be written.

    Also what LitData raises there: a ``ValueError`` (``merge_datasets``) or a
    ``RuntimeError`` (``optimize``), so ``except`` clauses written for LitData keep working.
    """


class DiskFullError(LitdataError, OSError):
    """The disk (or quota) filled up while writing; the message names the file and the bytes."""


class DatasetFormatError(LitdataError, ValueError):
    """An index or chunk does not follow the dataset format."""


class ChunkCorruptError(DatasetFormatError):
    """A chunk file is truncated, has a bad header or fails its checksum."""


class ChunkWaitTimeoutError(LitdataError, FileNotFoundError, TimeoutError):
    """A reader waited too long for a chunk file to be fetched (LitData's name).

    A ``FileNotFoundError`` as in LitData (so its handlers keep working) and a
    ``TimeoutError``; the chunk is usually not missing: its fetch is stuck or far too slow.

    Args:
        path: The chunk waited for (its file, or a description naming it).
        waited_s: How long the reader waited, in seconds. ``None`` when ``path`` is a whole
            message (how PyTorch re-raises a DataLoader worker's error in the main process).
        detail: What was waited for and what to do, appended to the message.
    """

    def __init__(self, path: str, waited_s: float | None = None, detail: str = "") -> None:
        self.path = path
        self.waited_s = waited_s
        self.detail = detail
        if waited_s is None:
            message = path
        else:
            message = f"Waited {waited_s:.0f} s for chunk {path} and it did not arrive. {detail}"
        super().__init__(message.strip())

    def __reduce__(self) -> tuple[type, tuple[str, float | None, str]]:
        return type(self), (self.path, self.waited_s, self.detail)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ChunkMissingError(DatasetFormatError, FileNotFoundError):
    """A chunk (or shard) the index lists is not there: the dataset is incomplete.

    Also a ``FileNotFoundError``, which callers of earlier versions caught.
    """


class DecryptionError(DatasetFormatError):
    """Encrypted data could not be decrypted with the key given (wrong key, or altered)."""


class UnsafeDataError(LitdataError, ValueError):
    """Decoding would run code from the dataset (a pickle that imports), and it was not allowed."""


class OutputLockedError(LitdataError, RuntimeError):
    """Another writer holds the output's lock; the message names it."""


class ProcessingError(LitdataError, RuntimeError):
    """A worker of ``optimize``/``map`` failed; the message holds the input and its traceback."""


class StorageError(LitdataError, OSError):
    """A storage backend kept failing (after retries); the message names the URL."""


class SampleDecodeError(LitdataError, ValueError):
    """A serializer failed to decode a stored leaf; the message names it, the file and item."""


class SampleError(LitdataError, TypeError):
    """A sample cannot be written: unsupported leaf, or a structure unlike the first sample's."""
