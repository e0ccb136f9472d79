"""Reading ``jpeg`` leaves as their encoded bytes, so the crop decides how much to decode.

A ``jpeg`` leaf (an ``ld.Jpeg``, or a PIL image opened from a JPEG file, as LitData's image
examples write) streams back decoded by default. With ``serializers=ld.vision.ENCODED`` it
streams back as the JPEG's bytes, and ``RandomResizedCrop`` decodes only what its box needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litdata.plugins.serializers.images import JPEGSerializer

__all__ = ["ENCODED", "EncodedJpeg"]


class EncodedJpeg(JPEGSerializer):
    """The ``jpeg`` serializer, reading leaves back as their encoded bytes (writing as it does)."""

    def deserialize(self, data: bytes | memoryview) -> bytes:  # type: ignore[override]
        """The leaf's JPEG bytes, undecoded."""
        return bytes(data)

    def __repr__(self) -> str:
        return "EncodedJpeg()"


#: ``StreamingDataset(..., serializers=ld.vision.ENCODED)``: ``jpeg`` leaves as bytes.
ENCODED: Mapping[str, Any] = {"jpeg": EncodedJpeg()}
