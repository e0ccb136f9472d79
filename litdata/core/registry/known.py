"""litdata's own plugins in one table, for when its distribution metadata is absent.

``pyproject.toml`` declares these same entry points, and a test keeps the two equal. Installed
litdata reads them from its metadata like any plugin; a source checkout on ``sys.path`` has no
metadata, so :mod:`~litdata.core.registry.entry_points` falls back to this table (as fsspec's
``known_implementations`` does). A built-in whose dependencies are missing says which extra
installs them when it is first used.
"""

from __future__ import annotations

__all__ = ["BUILTIN", "DISTRIBUTION"]

#: The name of litdata's own distribution.
DISTRIBUTION = "litdata"

#: ``{entry-point group: {name: "module:attr"}}``, exactly as ``pyproject.toml`` declares them.
BUILTIN: dict[str, dict[str, str]] = {
    "litdata": {
        "builtin": "litdata.plugins.defaults",
        "posix": "litdata.plugins.storage.posix",
        "mds": "litdata.plugins.formats.mds.format",
        "webdataset": "litdata.plugins.formats.webdataset.format",
        "tracer": "litdata.observe.trace_hooks",
        "parquet": "litdata.plugins.formats.parquet.format",
    },
    "litdata.storage": {
        "file": "litdata.plugins.storage.local:LocalStorage",
        "memory": "litdata.plugins.storage.memory:MemoryStorage",
        "s3": "litdata.plugins.storage.s3:S3Storage",
        "gs": "litdata.plugins.storage.gcs:GSStorage",
        "gcs": "litdata.plugins.storage.gcs:GCSStorage",
        "az": "litdata.plugins.storage.azure:AzStorage",
        "azure": "litdata.plugins.storage.azure:AzureStorage",
        "abfs": "litdata.plugins.storage.azure:AbfsStorage",
        "hf": "litdata.plugins.storage.hf:HFStorage",
    },
    "litdata.serializers": {
        "bool": "litdata.plugins.serializers.scalars:BoolSerializer",
        "int": "litdata.plugins.serializers.scalars:IntSerializer",
        "float": "litdata.plugins.serializers.scalars:FloatSerializer",
        "str": "litdata.plugins.serializers.scalars:StrSerializer",
        "bytes": "litdata.plugins.serializers.scalars:BytesSerializer",
        "numpy": "litdata.plugins.serializers.arrays:NumpySerializer",
        "no_header_numpy": "litdata.plugins.serializers.arrays:NoHeaderNumpySerializer",
        "tensor": "litdata.plugins.serializers.tensors:TensorSerializer",
        "no_header_tensor": "litdata.plugins.serializers.tensors:NoHeaderTensorSerializer",
        "pil": "litdata.plugins.serializers.images:PILSerializer",
        "jpeg": "litdata.plugins.serializers.images:JPEGSerializer",
        "png": "litdata.plugins.serializers.images:PNGSerializer",
        "jpeg_array": "litdata.plugins.serializers.images:JPEGArraySerializer",
        "json": "litdata.plugins.serializers.json:JsonSerializer",
        "text": "litdata.plugins.serializers.media:TextSerializer",
        "image": "litdata.plugins.serializers.media:ImageSerializer",
        "file": "litdata.plugins.serializers.media:FileSerializer",
        "video": "litdata.plugins.serializers.video:VideoSerializer",
        "audio": "litdata.plugins.serializers.audio:AudioSerializer",
        "nifti": "litdata.plugins.serializers.nifti:NiftiSerializer",
        "mesh": "litdata.plugins.serializers.mesh:MeshSerializer",
        "pdf": "litdata.plugins.serializers.pdf:PdfSerializer",
        "graph": "litdata.plugins.serializers.graph:GraphSerializer",
        "tifffile": "litdata.plugins.serializers.tiff:TifffileSerializer",
        "tiff": "litdata.plugins.serializers.tiff:TiffSerializer",
        "pickle": "litdata.plugins.serializers.pickle:PickleSerializer",
    },
    "litdata.compression": {
        "zstd": "litdata.plugins.compression.zstd:ZstdCompressor",
        "lz4": "litdata.plugins.compression.lz4:LZ4Compressor",
    },
    "litdata.encryption": {
        "fernet": "litdata.plugins.encryption.fernet:FernetEncryption",
        "rsa": "litdata.plugins.encryption.rsa:RSAEncryption",
    },
    "litdata.executors": {
        "local": "litdata.plugins.executors.local:LocalExecutor",
        "dask": "litdata.plugins.executors.dask:DaskExecutor",
        "ray": "litdata.plugins.executors.ray:RayExecutor",
    },
    "litdata.shuffle": {
        "none": "litdata.plugins.shuffle.none:NoShuffle",
        "full": "litdata.plugins.shuffle.full:FullShuffle",
        "window": "litdata.plugins.shuffle.window:WindowShuffle",
    },
    "litdata.formats": {
        "chunks": "litdata.plugins.formats.chunks.format:ChunksFormat",
        "mds": "litdata.plugins.formats.mds.format:MDSFormat",
        "webdataset": "litdata.plugins.formats.webdataset.format:WebDatasetFormat",
        "parquet": "litdata.plugins.formats.parquet.format:ParquetFormat",
    },
    "litdata.item_loaders": {
        "PyTreeLoader": "litdata.plugins.item_loaders.pytree:PyTreeLoader",
        "TokensLoader": "litdata.plugins.item_loaders.tokens:TokensLoader",
        "TemporalArrayLoader": "litdata.plugins.item_loaders.temporal:TemporalArrayLoader",
        "ParquetLoader": "litdata.plugins.formats.parquet.rows:ParquetLoader",
    },
}
