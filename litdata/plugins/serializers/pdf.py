"""``pdf``: PDF documents stored as their bytes, read back as ``pypdf.PdfReader``.

pypdf is imported only when a document is read or an open one is written
(``pip install '<litdata clone>[pdf]'``).
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.engine.items.wrappers import Pdf
from litdata.plugins.serializers._paths import media_path

__all__ = ["PdfSerializer"]

_MAGIC = b"%PDF"
#: Open-document classes claimed when their library is already imported.
_DOCUMENTS = (("pypdf", "PdfReader"), ("pypdf", "PdfWriter"), ("pdfplumber.pdf", "PDF"))


def _is_document(item: Any) -> bool:
    for module_name, class_name in _DOCUMENTS:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(item, getattr(module, class_name)):
            return True
    return False


def _document_bytes(document: Any) -> bytes:
    """The bytes of an open document: its source stream, or (pypdf writers) written out."""
    stream = getattr(document, "stream", None)
    if stream is not None and hasattr(stream, "seek"):
        position = stream.tell()
        stream.seek(0)
        try:
            return bytes(stream.read())
        finally:
            stream.seek(position)
    if hasattr(document, "write"):
        buffer = io.BytesIO()
        document.write(buffer)
        return buffer.getvalue()
    raise TypeError(f"cannot get the bytes of a {type(document).__qualname__}")


class PdfSerializer:
    """``Pdf`` wrappers, open documents, ``bytes`` that start with ``%PDF``, and ``.pdf`` paths.

    Args:
        decode: ``False`` reads leaves back as the file's bytes (a ``pypdf.PdfReader``
            otherwise), as LitData's ``decode=False`` does; no pypdf needed then.
    """

    name: ClassVar[str] = "pdf"
    types: ClassVar[tuple[str, ...]] = (
        "litdata.engine.items.wrappers.Pdf",
        "builtins.bytes",
        "builtins.str",
        "pypdf._reader.PdfReader",
        "pypdf._writer.PdfWriter",
        "pdfplumber.pdf.PDF",
    )
    priority: ClassVar[int] = 217

    def __init__(self, decode: bool = True) -> None:
        self.decode = decode

    def can_serialize(self, item: Any) -> bool:
        """Claims PDFs in any of the forms above (``bytes`` before the ``bytes`` serializer)."""
        if isinstance(item, Pdf) or _is_document(item):
            return True
        if type(item) is bytes:
            return item.startswith(_MAGIC)
        return not isinstance(item, dict) and media_path(item, ("pdf",)) is not None

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The document's bytes; the leaf is ``pdf``."""
        if isinstance(item, Pdf):
            data = _document_bytes(item.pdf) if item.pdf is not None else item.read()
        elif _is_document(item):
            data = _document_bytes(item)
        elif type(item) is bytes:
            data = item
        elif isinstance(item, str | os.PathLike) and media_path(item, ("pdf",)) is not None:
            data = Pdf(path=item).read()
        else:
            raise TypeError(
                f"expected a Pdf, PDF bytes or a .pdf path, got {type(item).__qualname__}"
            )
        if not data.startswith(_MAGIC):
            raise ValueError(f"the data is not a PDF (it starts with {data[:8]!r}, not %PDF)")
        return data, self.name

    def deserialize(self, data: bytes | memoryview) -> Any:
        """A ``pypdf.PdfReader`` over the document, or its bytes."""
        if not self.decode:
            return bytes(data)
        pypdf = require("pypdf", extra="pdf", purpose="Reading pdf leaves")
        return pypdf.PdfReader(io.BytesIO(bytes(data)))

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""
