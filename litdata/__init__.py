"""litdata: turn any Python samples into chunked datasets and stream them into PyTorch.

The public API has LitData's names. Everything is imported lazily on first access, so
``import litdata`` stays fast and imports neither torch nor any optional backend.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from litdata.__about__ import __version__
from litdata.core.registry.hookspecs import hookimpl

if TYPE_CHECKING:
    from litdata.core.errors import ChunkWaitTimeoutError
    from litdata.core.items.loaders import TemporalArrayLoader, TokensLoader
    from litdata.core.items.pytree import register_namedtuple
    from litdata.core.reader import DatasetReader
    from litdata.core.writer import ChunkWriter
    from litdata.plugins.formats._hf_datasets import index_hf_dataset, optimize_hf
    from litdata.plugins.formats._parquet_rows import ParquetLoader
    from litdata.plugins.formats.parquet import index_parquet_dataset
    from litdata.processing.debugging import breakpoint
    from litdata.processing.keys import build_keys_index
    from litdata.processing.map import map
    from litdata.processing.merge import complete_dataset, is_complete_dataset, merge_datasets
    from litdata.processing.optimize import optimize
    from litdata.processing.update import dataset_update
    from litdata.processing.walk import walk
    from litdata.processing.write import write_dataset
    from litdata.raw.dataset import StreamingRawDataset
    from litdata.raw.media import list_media_folder
    from litdata.raw.webdataset import iter_webdataset_tar
    from litdata.streaming.collate import litdata_collate
    from litdata.streaming.combined import CombinedStreamingDataset
    from litdata.streaming.dataloader import StreamingDataLoader
    from litdata.streaming.dataset import StreamingDataset
    from litdata.streaming.parallel import ParallelStreamingDataset
    from litdata.streaming.split import train_test_split
    from litdata.types import (
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
    from litdata.utilities.affinity import NumaAffinity, get_gpu_affinity, get_numa_affinity

__all__ = [
    "Audio",
    "ChunkWaitTimeoutError",
    "ChunkWriter",
    "CombinedStreamingDataset",
    "DatasetReader",
    "File",
    "Graph",
    "Image",
    "Jpeg",
    "JpegArray",
    "Mesh",
    "Nifti",
    "NumaAffinity",
    "ParallelStreamingDataset",
    "ParquetLoader",
    "Pdf",
    "Pil",
    "StreamingDataLoader",
    "StreamingDataset",
    "StreamingRawDataset",
    "TemporalArrayLoader",
    "Tensor",
    "Text",
    "Tiff",
    "TokensLoader",
    "Video",
    "__version__",
    "breakpoint",
    "build_keys_index",
    "complete_dataset",
    "dataset_update",
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
    "walk",
    "write_dataset",
]

_LAZY = {
    "ChunkWaitTimeoutError": "litdata.core.errors",
    "NumaAffinity": "litdata.utilities.affinity",
    "get_gpu_affinity": "litdata.utilities.affinity",
    "get_numa_affinity": "litdata.utilities.affinity",
    "ChunkWriter": "litdata.core.writer",
    "DatasetReader": "litdata.core.reader",
    "File": "litdata.types",
    "Image": "litdata.types",
    "Jpeg": "litdata.types",
    "Pil": "litdata.types",
    "Tensor": "litdata.types",
    "Text": "litdata.types",
    "Audio": "litdata.types",
    "Graph": "litdata.types",
    "JpegArray": "litdata.types",
    "Mesh": "litdata.types",
    "Nifti": "litdata.types",
    "Pdf": "litdata.types",
    "Tiff": "litdata.types",
    "Video": "litdata.types",
    "TokensLoader": "litdata.core.items.loaders",
    "TemporalArrayLoader": "litdata.core.items.loaders",
    "register_namedtuple": "litdata.core.items.pytree",
    "write_dataset": "litdata.processing.write",
    "ParquetLoader": "litdata.plugins.formats._parquet_rows",
    "index_parquet_dataset": "litdata.plugins.formats.parquet",
    "index_hf_dataset": "litdata.plugins.formats._hf_datasets",
    "optimize_hf": "litdata.plugins.formats._hf_datasets",
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
    "litdata_collate": "litdata.streaming.collate",
    "CombinedStreamingDataset": "litdata.streaming.combined",
    "ParallelStreamingDataset": "litdata.streaming.parallel",
    "train_test_split": "litdata.streaming.split",
    "StreamingRawDataset": "litdata.raw.dataset",
    "list_media_folder": "litdata.raw.media",
    "iter_webdataset_tar": "litdata.raw.webdataset",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'litdata' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
