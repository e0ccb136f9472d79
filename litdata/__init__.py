"""litdata: turn any Python samples into chunked datasets and stream them into PyTorch.

The public API has LitData's names. Everything is imported lazily on first access, so
``import litdata`` stays fast and imports neither torch nor any optional backend.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from litdata import compat
from litdata.__about__ import __version__
from litdata.core.errors import __all__ as _ERRORS
from litdata.core.registry.hookspecs import hookimpl

compat.install()  # LitData's import paths (litdata.streaming.item_loader, litdata.types...)

if TYPE_CHECKING:
    from litdata import errors
    from litdata.core.errors import (
        ChunkCorruptError,
        ChunkMissingError,
        ChunkWaitTimeoutError,
        DatasetExistsError,
        DatasetFormatError,
        DatasetNotFoundError,
        DecryptionError,
        DiskFullError,
        DuplicatePluginError,
        LitdataError,
        LitdataWarning,
        OutputLockedError,
        PluginError,
        PluginLoadError,
        PluginOptionsError,
        PluginValidationError,
        ProcessingError,
        SampleDecodeError,
        SampleError,
        StorageError,
        UnknownPluginError,
        UnsafeDataError,
    )
    from litdata.engine.items.treespec import register_namedtuple
    from litdata.engine.items.wrappers import (
        Audio,
        File,
        Graph,
        Image,
        Jpeg,
        JpegArray,
        Mesh,
        Nifti,
        Pdf,
        Pil,
        Tensor,
        Text,
        Tiff,
        Video,
    )
    from litdata.engine.native.writer import ChunkWriter
    from litdata.engine.reader import DatasetReader
    from litdata.plugins.formats.hf.datasets import index_hf_dataset, optimize_hf
    from litdata.plugins.formats.parquet.format import index_parquet_dataset
    from litdata.plugins.formats.parquet.rows import ParquetLoader
    from litdata.plugins.formats.raw.dataset import StreamingRawDataset
    from litdata.plugins.formats.raw.media import list_media_folder
    from litdata.plugins.formats.webdataset.tars import iter_webdataset_tar
    from litdata.plugins.item_loaders.temporal import TemporalArrayLoader
    from litdata.plugins.item_loaders.tokens import TokensLoader
    from litdata.processing.debugging import breakpoint
    from litdata.processing.keys import build_keys_index
    from litdata.processing.map import map
    from litdata.processing.merge import complete_dataset, is_complete_dataset, merge_datasets
    from litdata.processing.optimize import optimize
    from litdata.processing.update import dataset_update
    from litdata.processing.walk import walk
    from litdata.processing.write import write_dataset
    from litdata.streaming.composition.combined import CombinedStreamingDataset
    from litdata.streaming.composition.parallel import ParallelStreamingDataset
    from litdata.streaming.dataloader import StreamingDataLoader
    from litdata.streaming.dataset import StreamingDataset
    from litdata.streaming.epoch.schedule import WeightSchedule
    from litdata.streaming.split import train_test_split
    from litdata.streaming.workers.affinity import NumaAffinity, get_gpu_affinity, get_numa_affinity
    from litdata.streaming.workers.collate import litdata_collate
    from litdata.viewer import view

__all__ = [
    "Audio",
    "ChunkCorruptError",
    "ChunkMissingError",
    "ChunkWaitTimeoutError",
    "ChunkWriter",
    "CombinedStreamingDataset",
    "DatasetExistsError",
    "DatasetFormatError",
    "DatasetNotFoundError",
    "DatasetReader",
    "DecryptionError",
    "DiskFullError",
    "DuplicatePluginError",
    "File",
    "Graph",
    "Image",
    "Jpeg",
    "JpegArray",
    "LitdataError",
    "LitdataWarning",
    "Mesh",
    "Nifti",
    "NumaAffinity",
    "OutputLockedError",
    "ParallelStreamingDataset",
    "ParquetLoader",
    "Pdf",
    "Pil",
    "PluginError",
    "PluginLoadError",
    "PluginOptionsError",
    "PluginValidationError",
    "ProcessingError",
    "SampleDecodeError",
    "SampleError",
    "StorageError",
    "StreamingDataLoader",
    "StreamingDataset",
    "StreamingRawDataset",
    "TemporalArrayLoader",
    "Tensor",
    "Text",
    "Tiff",
    "TokensLoader",
    "UnknownPluginError",
    "UnsafeDataError",
    "Video",
    "WeightSchedule",
    "__version__",
    "breakpoint",
    "build_keys_index",
    "complete_dataset",
    "dataset_update",
    "errors",
    "get_gpu_affinity",
    "get_numa_affinity",
    "hookimpl",
    "index_hf_dataset",
    "index_parquet_dataset",
    "is_complete_dataset",
    "iter_webdataset_tar",
    "list_media_folder",
    "litdata_collate",
    "map",
    "merge_datasets",
    "optimize",
    "optimize_hf",
    "register_namedtuple",
    "train_test_split",
    "view",
    "vision",
    "walk",
    "write_dataset",
]

_LAZY = {
    "NumaAffinity": "litdata.streaming.workers.affinity",
    "get_gpu_affinity": "litdata.streaming.workers.affinity",
    "get_numa_affinity": "litdata.streaming.workers.affinity",
    "ChunkWriter": "litdata.engine.native.writer",
    "DatasetReader": "litdata.engine.reader",
    "File": "litdata.engine.items.wrappers",
    "Image": "litdata.engine.items.wrappers",
    "Jpeg": "litdata.engine.items.wrappers",
    "Pil": "litdata.engine.items.wrappers",
    "Tensor": "litdata.engine.items.wrappers",
    "Text": "litdata.engine.items.wrappers",
    "Audio": "litdata.engine.items.wrappers",
    "Graph": "litdata.engine.items.wrappers",
    "JpegArray": "litdata.engine.items.wrappers",
    "Mesh": "litdata.engine.items.wrappers",
    "Nifti": "litdata.engine.items.wrappers",
    "Pdf": "litdata.engine.items.wrappers",
    "Tiff": "litdata.engine.items.wrappers",
    "Video": "litdata.engine.items.wrappers",
    "TokensLoader": "litdata.plugins.item_loaders.tokens",
    "TemporalArrayLoader": "litdata.plugins.item_loaders.temporal",
    "register_namedtuple": "litdata.engine.items.treespec",
    "write_dataset": "litdata.processing.write",
    "ParquetLoader": "litdata.plugins.formats.parquet.rows",
    "index_parquet_dataset": "litdata.plugins.formats.parquet.format",
    "index_hf_dataset": "litdata.plugins.formats.hf.datasets",
    "optimize_hf": "litdata.plugins.formats.hf.datasets",
    "complete_dataset": "litdata.processing.merge",
    "is_complete_dataset": "litdata.processing.merge",
    "build_keys_index": "litdata.processing.keys",
    "map": "litdata.processing.map",
    "merge_datasets": "litdata.processing.merge",
    "optimize": "litdata.processing.optimize",
    "dataset_update": "litdata.processing.update",
    "breakpoint": "litdata.processing.debugging",
    "walk": "litdata.processing.walk",
    "StreamingDataLoader": "litdata.streaming.dataloader",
    "StreamingDataset": "litdata.streaming.dataset",
    "litdata_collate": "litdata.streaming.workers.collate",
    "CombinedStreamingDataset": "litdata.streaming.composition.combined",
    "ParallelStreamingDataset": "litdata.streaming.composition.parallel",
    "train_test_split": "litdata.streaming.split",
    "WeightSchedule": "litdata.streaming.epoch.schedule",
    "StreamingRawDataset": "litdata.plugins.formats.raw.dataset",
    "list_media_folder": "litdata.plugins.formats.raw.media",
    "iter_webdataset_tar": "litdata.plugins.formats.webdataset.tars",
    "view": "litdata.viewer",
}


_LAZY.update(dict.fromkeys(_ERRORS, "litdata.core.errors"))
#: Subpackages reached as attributes (``ld.vision.RandomResizedCrop``, ``ld.errors``), imported on
#: first use.
_SUBPACKAGES = ("vision", "errors")


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"litdata.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'litdata' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
