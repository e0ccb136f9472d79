"""Choosing a shuffle strategy, configuring it, and checking what it returns.

``shuffle=`` is ``False``/``True`` (the ``litdata_shuffle_for`` hook picks the strategy for the
dataset's location), a spec ``"name"`` or ``"name:key=value,key=value"`` (``"window:size=4"``),
or a strategy instance. Every order a strategy returns is checked where it enters the plan: a
strategy that repeats or drops an item is an error naming the plugin, never silently wrong
batches.
"""

from __future__ import annotations

from litdata.core.protocols import ShuffleStrategy
from litdata.core.registry import hooks
from litdata.engine.boundary.checked import CheckedShuffle
from litdata.engine.boundary.options import resolve_plugin

__all__ = ["CheckedShuffle", "choose_shuffle", "describe"]

ShuffleSetting = bool | str | ShuffleStrategy


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


def choose_shuffle(shuffle: ShuffleSetting, url: str) -> CheckedShuffle:
    """The (checked) strategy that ``shuffle=`` selects for the dataset at ``url``.

    Raises:
        UnknownPluginError: No shuffle plugin has that name.
        PluginValidationError: An instance lacks the protocol's members.
        ValueError: Bad options (the plugin's constructor refused them).
    """
    if isinstance(shuffle, bool):
        shuffle = hooks.shuffle_for(url, shuffle)
    checked: CheckedShuffle = resolve_plugin("shuffle", shuffle)
    return checked
