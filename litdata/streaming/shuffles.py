"""Choosing a shuffle strategy, configuring it, and checking what it returns.

``shuffle=`` is ``False``/``True`` (the ``litdata_shuffle_for`` hook picks the strategy for the
dataset's location), a spec ``"name"`` or ``"name:key=value,key=value"`` (``"window:size=4"``),
or a strategy instance. Every order a strategy returns is checked where it enters the plan: a
strategy that repeats or drops an item is an error naming the plugin, never silently wrong
batches.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import numpy as np

from litdata.core.errors import PluginValidationError
from litdata.core.protocols import ShuffleStrategy, protocol_members
from litdata.core.registry import hooks, registries

__all__ = ["CheckedShuffle", "choose_shuffle", "describe", "parse_spec"]

ShuffleSetting = bool | str | ShuffleStrategy


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"window:size=4,seed_offset=2"`` -> ``("window", {"size": 4, "seed_offset": 2})``.

    Raises:
        ValueError: An option is not ``key=value``.
    """
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for part in filter(None, (piece.strip() for piece in rest.split(","))):
        key, equals, value = part.partition("=")
        if not equals or not key.strip().isidentifier():
            raise ValueError(
                f"shuffle={spec!r}: options are written key=value after the name, e.g. "
                f"'window:size=4'; {part!r} is not."
            )
        options[key.strip()] = _value(value.strip())
    return name.strip(), options


def describe(strategy: CheckedShuffle) -> str:
    """A spec that names the strategy and its options (``"window:size=16"``), for state dicts."""
    inner = strategy.strategy
    options = {
        key: value
        for key, value in sorted(vars(inner).items())
        if not key.startswith("_") and isinstance(value, int | float | str | bool)
    }
    if not options:
        return strategy.name
    return strategy.name + ":" + ",".join(f"{key}={value!r}" for key, value in options.items())


def _origin(strategy: Any) -> str:
    name = getattr(strategy, "name", None)
    if isinstance(name, str) and name in registries.shuffle:
        return f"{name!r} ({registries.shuffle.info(name).origin})"
    return f"{type(strategy).__module__}.{type(strategy).__qualname__}"


def choose_shuffle(shuffle: ShuffleSetting, url: str) -> CheckedShuffle:
    """The (checked) strategy that ``shuffle=`` selects for the dataset at ``url``.

    Raises:
        UnknownPluginError: No shuffle plugin has that name.
        PluginValidationError: An instance lacks the protocol's members.
        ValueError: Bad options (the plugin's constructor refused them).
    """
    if isinstance(shuffle, bool):
        shuffle = hooks.shuffle_for(url, shuffle)
    if isinstance(shuffle, str):
        name, options = parse_spec(shuffle)
        plugin = registries.shuffle.load(name)
        try:
            strategy = plugin(**options)
        except TypeError as error:
            raise ValueError(
                f"shuffle={shuffle!r}: the {name!r} shuffle does not take these options: {error}"
            ) from error
        return CheckedShuffle(strategy)
    missing = [
        member for member in protocol_members(ShuffleStrategy) if not hasattr(shuffle, member)
    ]
    if missing:
        raise PluginValidationError(
            f"shuffle={shuffle!r} is not a shuffle strategy: it lacks {', '.join(missing)}."
        )
    return CheckedShuffle(shuffle)


def _check(
    order: Sequence[int], expected: Sequence[int], strategy: Any, method: str
) -> Sequence[int]:
    """``order`` (a range, or a list), after checking it is a permutation of ``expected``."""
    if isinstance(order, range) and order == expected:
        return order
    array = np.asarray(order, dtype=np.int64)
    if isinstance(expected, range) and expected.start == 0 and expected.step == 1:
        count = len(expected)
        ok = array.shape == (count,) and (
            count == 0
            or (
                int(array.min()) >= 0
                and int(array.max()) < count
                and bool(np.bincount(array, minlength=count).all())
            )
        )
    else:
        ok = array.shape == (len(expected),) and bool(
            np.array_equal(np.sort(array), np.sort(np.asarray(expected, dtype=np.int64)))
        )
    if not ok:
        values = array.tolist() if array.ndim == 1 else order
        shown = values if len(values) <= 10 else [*values[:10], "..."]  # noqa: PLR2004
        raise PluginValidationError(
            f"The shuffle strategy {_origin(strategy)} returned {shown} from {method}, which is "
            f"not a permutation of its {len(expected)} positions: items would be read twice or "
            f"never. Fix the plugin (litdata.testing.ShuffleContract checks it), or choose "
            f"another shuffle."
        )
    checked: list[int] = order if isinstance(order, list) else array.tolist()
    return checked


class CheckedShuffle:
    """A strategy whose every order is checked to be a permutation (cheap: once per chunk).

    Args:
        strategy: The strategy to wrap.
    """

    def __init__(self, strategy: ShuffleStrategy | CheckedShuffle) -> None:
        if isinstance(strategy, CheckedShuffle):
            strategy = strategy.strategy
        self.strategy: ShuffleStrategy = strategy
        #: The strategy's name.
        self.name: str = strategy.name
        #: Whether workers get whole chunks in stripes.
        self.whole_chunks = bool(strategy.whole_chunks)

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """The strategy's chunk order, checked."""
        order = self.strategy.chunk_order(num_chunks, seed, epoch)
        return _check(order, range(num_chunks), self.strategy, "chunk_order")

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """The strategy's order of one worker's chunks, checked."""
        order = self.strategy.worker_chunk_order(chunks, seed, epoch, worker)
        return _check(order, chunks, self.strategy, "worker_chunk_order")

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """The strategy's item order for one chunk, checked."""
        order = self.strategy.item_order(chunk, num_items, seed, epoch)
        return _check(order, range(num_items), self.strategy, "item_order")
