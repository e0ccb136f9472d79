"""When two writers' configs agree: equal, or a field recorded under names one name decodes.

Every writer of a dataset (the workers of ``optimize``, an append, a resumed run) records the
``data_format`` of the samples it met. A field's name may differ between writers where the
field's serializer widens both names to one (:class:`~litdata.core.protocols.WideningSerializer`:
the JPEG files of one worker and the PNG files of another are all ``image``); any other
difference is an error naming the field, the two kinds and the fix.
"""

from __future__ import annotations

import dataclasses

from litdata.core.errors import DatasetFormatError, LitdataError
from litdata.core.formats import SerializerChoice
from litdata.core.index import DatasetConfig
from litdata.core.protocols import WideningSerializer
from litdata.engine.items.serializer_set import SerializerSet
from litdata.engine.items.treespec import leaf_paths, spec_from_json

__all__ = ["agreed_config", "config_conflict", "widened"]


def widened(recorded: str, other: str, serializers: SerializerChoice | None = None) -> str | None:
    """The ``data_format`` name decoding leaves recorded as ``recorded`` and ``other``.

    ``recorded`` itself when they are equal; else what either one's serializer widens them
    to; ``None`` when neither does (or neither is installed).
    """
    if recorded == other:
        return recorded
    chooser: SerializerChoice = serializers or SerializerSet()
    for name in (recorded, other):
        try:
            serializer = chooser.for_format(name)
        except LitdataError:
            continue
        if isinstance(serializer, WideningSerializer):
            name_for_both = serializer.widen(recorded, other)
            if name_for_both is not None:
                return name_for_both
    return None


def agreed_config(
    config: DatasetConfig, other: DatasetConfig, serializers: SerializerChoice | None = None
) -> DatasetConfig | None:
    """The config of a dataset written by both, or ``None`` when they disagree.

    They agree when they are equal, or differ only in fields whose names widen to one.
    """
    different = config.differences(other)
    if not different:
        return config
    if different != ["data_format"] or len(config.data_format) != len(other.data_format):
        return None
    names = []
    for mine, theirs in zip(config.data_format, other.data_format, strict=True):
        name = widened(mine, theirs, serializers)
        if name is None:
            return None
        names.append(name)
    return dataclasses.replace(config, data_format=tuple(names))


def config_conflict(
    config: DatasetConfig, other: DatasetConfig, *, mine: str, theirs: str, where: str
) -> DatasetFormatError:
    """The error for two configs that do not agree, naming the fields and the fix.

    Args:
        config: One writer's config.
        other: The other's.
        mine: Who wrote ``config`` (``"worker 1"``).
        theirs: Who wrote ``other`` (``"worker 0"``, ``"the dataset"``).
        where: The dataset's location.
    """
    different = config.differences(other)
    if different == ["data_format"] and len(config.data_format) == len(other.data_format):
        try:
            paths = leaf_paths(spec_from_json(config.data_spec))
        except LitdataError:
            paths = []
        if len(paths) != len(config.data_format):
            paths = [f"leaf {position}" for position in range(len(config.data_format))]
        fields = [
            f"{path}: {a!r} in {mine} but {b!r} in {theirs}"
            for path, a, b in zip(paths, config.data_format, other.data_format, strict=True)
            if a != b
        ]
        return DatasetFormatError(
            f"The samples of {where} store different kinds of value in the same field: "
            f"{'; '.join(fields)}. Every sample must hold one kind of value in a field. Fix: "
            f"make fn return one type there: int(...) or float(...) for numbers, "
            f"ld.Image(image=...) for images (any image, stored as encoded bytes, streamed "
            f"back as a uint8 tensor); then run again (a run with use_checkpoint=True keeps "
            f"the chunks already written and resumes)."
        )
    ours, others = config.core(), other.core()
    details = "; ".join(
        f"{key}: {ours[key]!r} in {mine} but {others[key]!r} in {theirs}" for key in different
    )
    return DatasetFormatError(
        f"The writers of {where} disagree on {details}. All writers of one dataset must use "
        f"the same chunk size, compression and sample structure."
    )
