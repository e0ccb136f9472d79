"""``mesh``: 3-D meshes as GLB, PLY or STL files (``mesh:<type>``), read back with trimesh.

trimesh is imported only when a mesh is met (``pip install '<litdata clone>[mesh]'``).
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.engine.items.wrappers import Mesh
from litdata.plugins.serializers._paths import extension_of, media_path

__all__ = ["MESH_TYPES", "MeshSerializer"]

MESH_TYPES = ("glb", "ply", "stl")


def _trimesh() -> Any:
    return require("trimesh", extra="mesh", purpose="Writing and reading meshes")


def _is_mesh(item: Any) -> bool:
    module = sys.modules.get("trimesh")
    return module is not None and isinstance(item, module.Trimesh | module.Scene)


def _file_type(file_type: str) -> str:
    kind = file_type.lower().lstrip(".")
    if kind not in MESH_TYPES:
        raise ValueError(f"Mesh(file_type={file_type!r}): the mesh serializer stores {MESH_TYPES}")
    return kind


def _mesh_bytes(mesh: Any, file_type: str | None) -> tuple[bytes, str]:
    """The mesh's source file when it remembers one of that type, else it exported."""
    source = getattr(mesh, "metadata", {}).get("file_path")  # older trimesh records it
    source_type = extension_of(source)
    kind = _file_type(file_type or (source_type if source_type in MESH_TYPES else "glb"))
    if source and source_type == kind and os.path.isfile(source):
        with open(source, "rb") as handle:
            return handle.read(), kind
    return bytes(mesh.export(file_type=kind)), kind


class MeshSerializer:
    """``Mesh`` wrappers, trimesh meshes and scenes, and ``.glb``/``.ply``/``.stl`` paths.

    Args:
        decode: ``False`` reads leaves back as the file's bytes (a trimesh object otherwise), as
            LitData's ``decode=False`` does; no trimesh needed then.
    """

    name: ClassVar[str] = "mesh"
    types: ClassVar[tuple[str, ...]] = (
        "litdata.engine.items.wrappers.Mesh",
        "builtins.str",
        "trimesh.base.Trimesh",
        "trimesh.scene.scene.Scene",
    )
    priority: ClassVar[int] = 218

    def __init__(self, decode: bool = True) -> None:
        self.decode = decode
        self._file_type = "glb"

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Mesh`` wrappers, trimesh objects and existing mesh files."""
        if isinstance(item, Mesh) or _is_mesh(item):
            return True
        return not isinstance(item, dict) and media_path(item, MESH_TYPES) is not None

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The mesh file's bytes; the name records its type (``mesh:glb``)."""
        path = None if isinstance(item, dict) else media_path(item, MESH_TYPES)
        if path is not None:
            item = Mesh(path=path, file_type=extension_of(path))
        if _is_mesh(item):
            data, kind = _mesh_bytes(item, None)
        elif not isinstance(item, Mesh):
            raise TypeError(f"expected a Mesh or a trimesh object, got {type(item).__qualname__}")
        elif item.mesh is not None:
            data, kind = _mesh_bytes(item.mesh, item.file_type)
        else:
            kind = _file_type(extension_of(item.path) or item.file_type)
            data = item.read()
        return data, f"mesh:{kind}"

    def deserialize(self, data: bytes | memoryview) -> Any:
        """What ``trimesh.load`` returns for the file (a ``Scene`` for GLB), or its bytes."""
        if not self.decode:
            return bytes(data)
        return _trimesh().load(io.BytesIO(bytes(data)), file_type=self._file_type)

    def setup(self, data_format: str) -> None:
        """Learn the file type from ``mesh:<type>``."""
        self._file_type = _file_type(data_format.partition(":")[2] or "glb")
