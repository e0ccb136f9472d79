"""What a reader brings to decoding a dataset: its serializers, item loader and key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from litdata.core.items.serializer_set import SerializerSet

if TYPE_CHECKING:
    from litdata.core.items.loaders import ItemLoader
    from litdata.core.protocols import Encryptor

__all__ = ["ReadOptions"]


@dataclass(frozen=True)
class ReadOptions:
    """The reader's side of decoding, handed to a format adapter's ``decoder``.

    Attributes:
        serializers: The serializers to decode leaves with (the user's first).
        item_loader: The item loader the reader asked for, if any.
        encryption: The key to decrypt an encrypted dataset with, if any.
        where: The dataset's location, for messages.
    """

    serializers: SerializerSet
    item_loader: ItemLoader | None = None
    encryption: Encryptor | None = None
    where: str = "the dataset"
