"""Item loaders: the public objects that choose an item encoding (LitData's names).

``PyTreeLoader`` (the default) stores any sample structure; ``TokensLoader`` stores 1-D token
arrays and reads them back as fixed windows of ``block_size`` tokens. The class name is what
``index.json`` records as ``config.item_loader``; a dataset must be read with the loader it
was written with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from litdata.core.errors import DatasetFormatError
from litdata.core.index import DatasetIndex
from litdata.core.items.serializer_set import SerializerSet
from litdata.core.items.temporal import TemporalDecoder, TemporalEncoder
from litdata.core.items.tokens import TokensDecoder, TokensEncoder
from litdata.core.items.trees import PyTreeDecoder, PyTreeEncoder
from litdata.core.protocols import ItemDecoder
from litdata.core.reading import ReadOptions

__all__ = [
    "ItemEncoder",
    "ItemLoader",
    "PyTreeLoader",
    "TemporalArrayLoader",
    "TokensLoader",
    "loader_for",
]


class ItemEncoder(Protocol):
    """Turns samples into item bytes for a writer."""

    providers: dict[str, str]

    @property
    def data_format(self) -> tuple[str, ...]:
        """The ``data_format`` names fixed by the first sample."""
        ...

    @property
    def data_spec(self) -> str | None:
        """The ``data_spec`` fixed by the first sample."""
        ...

    def encode(self, sample: Any) -> tuple[list[bytes], int, int | None]:
        """The item's bytes as parts to concatenate, their total size, and its ``dim``."""
        ...


class ItemLoader(Protocol):
    """An item encoding, as passed to ``optimize(item_loader=...)`` and datasets."""

    name: ClassVar[str]

    def encoder(self, serializers: SerializerSet) -> ItemEncoder:
        """An encoder for a writer."""
        ...

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """A decoder for the dataset of ``index``."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """The parameters that must match when resuming."""
        ...


class PyTreeLoader:
    """Any sample structure; one serializer per leaf (the default)."""

    name: ClassVar[str] = "PyTreeLoader"

    def encoder(self, serializers: SerializerSet) -> PyTreeEncoder:
        """A PyTree encoder."""
        return PyTreeEncoder(serializers)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> PyTreeDecoder:
        """A PyTree decoder for ``index``."""
        return PyTreeDecoder(index, options)

    def state_dict(self) -> dict[str, Any]:
        """No parameters."""
        return {}

    def __repr__(self) -> str:
        return "PyTreeLoader()"


class TokensLoader:
    """1-D token arrays, read back as windows of ``block_size`` tokens (for LLM pre-training).

    Args:
        block_size: Tokens per item when reading; not needed when writing.
    """

    name: ClassVar[str] = "TokensLoader"

    def __init__(self, block_size: int | None = None) -> None:
        if block_size is not None and (
            not isinstance(block_size, int) or isinstance(block_size, bool) or block_size <= 0
        ):
            raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
        self.block_size = block_size

    def encoder(self, serializers: SerializerSet) -> TokensEncoder:
        """A token encoder."""
        return TokensEncoder(serializers)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> TokensDecoder:
        """A window decoder for ``index``.

        Raises:
            ValueError: ``block_size`` was not given.
        """
        if self.block_size is None:
            raise ValueError(
                "Reading a token dataset needs the window size: TokensLoader(block_size=...)."
            )
        return TokensDecoder(index, self.block_size, options)

    def state_dict(self) -> dict[str, Any]:
        """The window size."""
        return {"block_size": self.block_size}

    def __repr__(self) -> str:
        return f"TokensLoader(block_size={self.block_size})"


class TemporalArrayLoader:
    """Records of arrays sharing a leading frame axis ``T`` (tracks, time series, clips).

    Each record is a flat dict of numpy arrays or tensors ``(T, ...)``; names, dtypes,
    trailing shapes and array/tensor kinds must agree across records, ``T`` may vary. Fields
    in one group are stored interleaved frame by frame; every field not grouped is its own
    group. Records read back whole, as dicts (tensors stay tensors).

    Args:
        field_groups: Fields stored together, used when writing (e.g.
            ``[["score", "valid"]]``); reading takes the groups from the index.
    """

    name: ClassVar[str] = "TemporalArrayLoader"

    def __init__(self, field_groups: Sequence[Sequence[str]] | None = None) -> None:
        if field_groups is not None and (
            isinstance(field_groups, str)
            or any(isinstance(group, str) or not group for group in field_groups)
        ):
            raise ValueError(
                f"field_groups must be a list of non-empty lists of field names, got "
                f"{field_groups!r}"
            )
        self.field_groups = [list(group) for group in field_groups or []]

    def encoder(self, serializers: SerializerSet) -> TemporalEncoder:
        """A record encoder (serializers are not used: the layout is fixed)."""
        return TemporalEncoder(self.field_groups)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> TemporalDecoder:
        """A record decoder for ``index``."""
        return TemporalDecoder(index, options)

    def state_dict(self) -> dict[str, Any]:
        """No parameters that matter when reading."""
        return {}

    def __repr__(self) -> str:
        return f"TemporalArrayLoader(field_groups={self.field_groups})"


_BUILTIN: dict[str, type[PyTreeLoader] | type[TokensLoader] | type[TemporalArrayLoader]] = {
    PyTreeLoader.name: PyTreeLoader,
    TokensLoader.name: TokensLoader,
    TemporalArrayLoader.name: TemporalArrayLoader,
}


def loader_for(index: DatasetIndex, given: ItemLoader | None, where: str) -> ItemLoader:
    """The item loader to read ``index`` with, checking it against what the index records.

    Raises:
        DatasetFormatError: The given loader differs from the recorded one, or none was
            given for a dataset that needs parameters.
    """
    recorded = index.config.item_loader
    if recorded is None:  # old indexes: token datasets are those that count tokens (``dim``)
        counted = bool(index.chunks) and all(chunk.dim is not None for chunk in index.chunks)
        if len(index.config.data_format) == 1 and counted:
            recorded = TokensLoader.name
        else:
            recorded = given.name if given is not None else PyTreeLoader.name
    if given is None:
        if recorded == TokensLoader.name:
            raise DatasetFormatError(
                f"{where} was written with TokensLoader; open it with "
                f"item_loader=TokensLoader(block_size=...)."
            )
        if recorded not in _BUILTIN:
            raise DatasetFormatError(
                f"{where} was written with the item loader {recorded!r}, which litdata does not "
                f"know. Pass a matching item_loader."
            )
        return _BUILTIN[recorded]()
    if given.name != recorded:
        raise DatasetFormatError(
            f"{where} was written with {recorded}, but it is opened with {given.name}. Use "
            f"item_loader={recorded}(...) (or none, for PyTreeLoader)."
        )
    return given
