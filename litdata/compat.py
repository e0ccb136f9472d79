"""LitData's import paths, generated from one table.

Code written against LitData imports from modules that are not where litdata keeps things
(``from litdata.streaming.item_loader import TokensLoader``, ``litdata.utilities.encryption``,
``litdata.debugger``...). Each such module is made from :data:`PATHS` when it is first
imported, by a finder ``import litdata`` puts on ``sys.meta_path``; its names resolve to
litdata's own objects when first used, so importing one imports nothing heavy. A path that is
a real module of this package is never shadowed (``litdata.streaming`` is ours).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from typing import Any

__all__ = ["PATHS", "install"]

#: ``{LitData's module path: {name: "our.module" or "our.module:our_name"}}``.
PATHS: dict[str, dict[str, str]] = {
    "litdata.streaming.item_loader": {
        "BaseItemLoader": "litdata.core.formats:ItemLoader",
        "ParquetLoader": "litdata.plugins.formats.parquet.rows",
        "PyTreeLoader": "litdata.plugins.item_loaders.pytree",
        "TemporalArrayLoader": "litdata.plugins.item_loaders.temporal",
        "TokensLoader": "litdata.plugins.item_loaders.tokens",
    },
    "litdata.streaming.combined": {
        "CombinedStreamingDataset": "litdata.streaming.composition.combined",
    },
    "litdata.streaming.parallel": {
        "ParallelStreamingDataset": "litdata.streaming.composition.parallel",
    },
    "litdata.processing.functions": {
        "map": "litdata.processing.map",
        "merge_datasets": "litdata.processing.merge",
        "optimize": "litdata.processing.optimize",
        "walk": "litdata.processing.walk",
    },
    "litdata.utilities": {},
    "litdata.streaming.serializers": {
        "Serializer": "litdata.core.protocols:Serializer",
        "BooleanSerializer": "litdata.plugins.serializers.scalars:BoolSerializer",
        "BytesSerializer": "litdata.plugins.serializers.scalars",
        "FloatSerializer": "litdata.plugins.serializers.scalars",
        "IntegerSerializer": "litdata.plugins.serializers.scalars:IntSerializer",
        "StringSerializer": "litdata.plugins.serializers.scalars:StrSerializer",
        "NumpySerializer": "litdata.plugins.serializers.arrays",
        "NoHeaderNumpySerializer": "litdata.plugins.serializers.arrays",
        "TensorSerializer": "litdata.plugins.serializers.tensors",
        "NoHeaderTensorSerializer": "litdata.plugins.serializers.tensors",
        "PILSerializer": "litdata.plugins.serializers.images",
        "JPEGSerializer": "litdata.plugins.serializers.images",
        "JPEGArraySerializer": "litdata.plugins.serializers.images",
        "ImageSerializer": "litdata.plugins.serializers.media",
        "FileSerializer": "litdata.plugins.serializers.media",
        "TextSerializer": "litdata.plugins.serializers.media",
        "JsonSerializer": "litdata.plugins.serializers.json",
        "PickleSerializer": "litdata.plugins.serializers.pickle",
        "VideoSerializer": "litdata.plugins.serializers.video",
        "AudioSerializer": "litdata.plugins.serializers.audio",
        "GraphSerializer": "litdata.plugins.serializers.graph",
        "MeshSerializer": "litdata.plugins.serializers.mesh",
        "NiftiSerializer": "litdata.plugins.serializers.nifti",
        "PDFSerializer": "litdata.plugins.serializers.pdf:PdfSerializer",
        "TIFFSerializer": "litdata.plugins.serializers.tiff:TiffSerializer",
    },
    "litdata.streaming.cache": {"Cache": "litdata.processing.cache"},
    # The modules that define LitData's top-level names: ``from litdata.streaming.writer import
    # index_parquet_dataset`` is how some of its users (and its own tests) import them.
    "litdata.streaming.writer": {"index_parquet_dataset": "litdata.plugins.formats.parquet.format"},
    "litdata.streaming.collate": {"litdata_collate": "litdata.streaming.workers.collate"},
    "litdata.streaming.dataset_update": {"dataset_update": "litdata.processing.update"},
    "litdata.processing.complete": dict.fromkeys(
        ("complete_dataset", "is_complete_dataset"), "litdata.processing.merge"
    ),
    "litdata.processing.media_folder": {
        "iter_webdataset_tar": "litdata.plugins.formats.webdataset.tars",
        "list_media_folder": "litdata.plugins.formats.raw.media",
    },
    "litdata.utilities.hf_dataset": {"index_hf_dataset": "litdata.plugins.formats.hf.datasets"},
    "litdata.utilities.keys_index": {"build_keys_index": "litdata.processing.keys"},
    "litdata.utilities.train_test_split": {"train_test_split": "litdata.streaming.split"},
    "litdata.utilities.dataset_utilities": {"load_index_file": "litdata.engine.opening"},
    "litdata.constants": {
        "_INDEX_FILENAME": "litdata.core.index:INDEX_FILENAME",
        "_NUMPY_DTYPES_MAPPING": "litdata.plugins.serializers._dtypes:NUMPY_DTYPES",
    },
    "litdata.utilities.encryption": {
        "FernetEncryption": "litdata.plugins.encryption.fernet",
        "RSAEncryption": "litdata.plugins.encryption.rsa",
    },
    "litdata.utilities.breakpoint": {"breakpoint": "litdata.processing.debugging"},
    "litdata.exceptions": {"ChunkWaitTimeoutError": "litdata.core.errors"},
    "litdata.debugger": {
        "TraceSummary": "litdata.observe.convert",
        "convert_trace": "litdata.observe.convert",
        "enable_tracer": "litdata.observe.enable",
    },
    "litdata.types": dict.fromkeys(
        (
            "Audio",
            "File",
            "Graph",
            "Image",
            "Jpeg",
            "JpegArray",
            "Mesh",
            "Nifti",
            "Pdf",
            "Pil",
            "Tensor",
            "Text",
            "Tiff",
            "Video",
        ),
        "litdata.engine.items.wrappers",
    ),
    "litdata.raw": {
        "BaseIndexer": "litdata.plugins.formats.raw.indexer",
        "FileIndexer": "litdata.plugins.formats.raw.indexer",
        "FileMetadata": "litdata.plugins.formats.raw.indexer",
        "StreamingRawDataset": "litdata.plugins.formats.raw.dataset",
    },
    "litdata.raw.dataset": {"StreamingRawDataset": "litdata.plugins.formats.raw.dataset"},
    "litdata.raw.indexer": {
        "BaseIndexer": "litdata.plugins.formats.raw.indexer",
        "FileIndexer": "litdata.plugins.formats.raw.indexer",
        "FileMetadata": "litdata.plugins.formats.raw.indexer",
    },
}


def _target(path: str, name: str) -> Any:
    module, _, attribute = PATHS[path][name].partition(":")
    return getattr(importlib.import_module(module), attribute or name)


class _Module(types.ModuleType):
    """A LitData import path: its names resolve to litdata's objects on first use."""

    def __getattr__(self, name: str) -> Any:
        if name in PATHS[self.__name__]:
            value = _target(self.__name__, name)
            setattr(self, name, value)
            return value
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(PATHS[self.__name__])


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _Module(spec.name, f"LitData's import path {spec.name}, kept by litdata.")
        module.__all__ = sorted(PATHS[spec.name])  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: names resolve when first used."""


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the modules of :data:`PATHS`, unless the package has one of that name."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in PATHS or self._real(fullname, path):
            return None
        package = any(other.startswith(f"{fullname}.") for other in PATHS)
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=package)
        if package:
            spec.submodule_search_locations = []
        return spec

    def _real(self, fullname: str, path: Sequence[str] | None) -> bool:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            if finder.find_spec(fullname, path) is not None:
                return True
        return False


def install() -> None:
    """Put the finder of LitData's import paths on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
