"""The shapes of the resume state, declared once, and the check every loaded state passes.

Each ``state_dict()`` is one of the typed dicts below: the loader's (:class:`LoaderState`),
a dataset's (:class:`DatasetState`, with one :class:`RunState` per run of the epoch so far) and
a composition's own part (:class:`CompositionState`). The code that writes a state builds these
types, so a misspelt key is a type error, and :func:`check_shape` reads the same declarations
to check a loaded state: every key present has its declared type (``True`` is not a count, and
``"false"`` is not ``False``) and every count its declared range (``AtLeast``). A checkpoint
edited by hand or damaged on disk therefore fails with the field's path, never as samples
served twice or dropped, or as an error inside a worker.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral
from typing import Annotated, Any, TypedDict, Union, get_args, get_origin, get_type_hints

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired

__all__ = [
    "AtLeast",
    "CompositionState",
    "DatasetState",
    "LoaderState",
    "RunState",
    "Settings",
    "check_shape",
    "damaged",
]


@dataclass(frozen=True)
class AtLeast:
    """The smallest value an integer field may hold."""

    minimum: int


Count = Annotated[int, AtLeast(0)]
Positive = Annotated[int, AtLeast(1)]


class RunState(TypedDict):
    """One run of an epoch: its topology and how many items each of its workers consumed."""

    world_size: Positive
    num_workers: Positive
    batch_size: Positive
    consumed: list[Count]


class Settings(TypedDict):
    """What a dataset's state records of its settings, compared when resuming."""

    identity: str
    seed: int
    shuffle: bool | str
    drop_last: bool | None
    item_loader: dict[str, Any]


class DatasetState(Settings):
    """``StreamingDataset.state_dict()``: LitData's keys plus this epoch's runs (``history``)."""

    current_epoch: Count
    num_samples_yielded: Count
    history: list[RunState]
    num_workers: NotRequired[Positive]
    batch_size: NotRequired[Positive]
    input_dir_path: NotRequired[str | None]
    input_dir_url: NotRequired[str | None]
    cache_dir_path: NotRequired[str | None]
    world_size: NotRequired[Positive]
    state_version: NotRequired[int]
    num_canonical_nodes: NotRequired[Positive]
    next_worker: NotRequired[Count]


class CompositionState(TypedDict):
    """A mixture's or a zip's own part of its state (each child's state sits beside it)."""

    current_epoch: Count
    topology: list[Positive]
    next_worker: Count
    draws: NotRequired[list[Count]]
    steps: NotRequired[list[Count]]


class LoaderState(TypedDict):
    """``StreamingDataLoader.state_dict()``: the dataset's state and the loader's counters."""

    dataset: dict[str, Any]
    current_epoch: Count
    num_samples_yielded: Count
    num_samples_per_worker: NotRequired[dict[Any, list[Count]]]
    latest_worker_idx: NotRequired[Annotated[int, AtLeast(-1)]]
    epoch_finished: NotRequired[bool]
    clock: NotRequired[dict[str, Count]]
    epoch_clock: NotRequired[dict[str, Count]]


def damaged(where: str, problem: str) -> ValueError:
    """The error for a state field that no ``state_dict()`` writes."""
    return ValueError(
        f"The state dict's {where} {problem}: no state_dict() writes that, so the checkpoint "
        f"was edited or damaged. Resume from an unmodified checkpoint, or start the epoch "
        f"afresh without load_state_dict()."
    )


def check_shape(state: Any, shape: type, where: str = "state") -> None:
    """Check ``state`` against the ``TypedDict`` ``shape``: required keys, types and ranges.

    Keys the shape does not declare are left alone (a newer litdata may add some).

    Raises:
        ValueError: A required key is missing, or a value has another type or is out of
            range; the message names the field's path (``state["history"][0]["consumed"][1]``).
    """
    _check(state, shape, where)


def _check(value: Any, expected: Any, where: str) -> None:
    if not _fits(value, expected):
        raise damaged(where, f"is {_shown(value)}, not {_name(expected)}")
    origin = get_origin(expected)
    if origin is Annotated:
        kind, *rules = get_args(expected)
        _check(value, kind, where)
        for rule in rules:
            if isinstance(rule, AtLeast) and value < rule.minimum:
                raise damaged(where, f"is {value!r}, below its least value {rule.minimum}")
    elif origin is Union or origin is types.UnionType:
        _check(value, next(o for o in get_args(expected) if _fits(value, o)), where)
    elif _is_typeddict(expected):
        _check_mapping(value, expected, where)
    elif origin is list:
        for position, element in enumerate(value):
            _check(element, get_args(expected)[0], f"{where}[{position}]")
    elif origin is dict:
        for key, element in value.items():
            _check(element, get_args(expected)[1], f"{where}[{key!r}]")


def _check_mapping(value: Mapping[str, Any], shape: type, where: str) -> None:
    # Read from the hints: ``__required_keys__`` cannot see ``NotRequired`` in string annotations.
    for key, expected in get_type_hints(shape, include_extras=True).items():
        optional = get_origin(expected) is NotRequired
        if key in value:
            _check(value[key], get_args(expected)[0] if optional else expected, f"{where}[{key!r}]")
        elif not optional:
            raise damaged(where, f"has no {key!r}")


def _fits(value: Any, expected: Any) -> bool:
    """Whether ``value`` has the outer type ``expected`` (``bool`` is never an ``int`` here)."""
    if expected is Any:
        return True
    if expected is None or expected is type(None):
        return value is None
    origin = get_origin(expected)
    if origin is Annotated:
        return _fits(value, get_args(expected)[0])
    if origin is Union or origin is types.UnionType:
        return any(_fits(value, option) for option in get_args(expected))
    if origin is list:
        return isinstance(value, list | tuple)
    if origin is dict or _is_typeddict(expected):
        return isinstance(value, Mapping)
    if expected is int:  # numpy's integers too; a bool is not a count
        return isinstance(value, Integral) and not isinstance(value, bool)
    return isinstance(value, expected)


def _is_typeddict(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, dict) and hasattr(kind, "__total__")


def _name(expected: Any) -> str:
    if get_origin(expected) is Annotated:
        return _name(get_args(expected)[0])
    if get_origin(expected) in (Union, types.UnionType):
        return " or ".join(_name(option) for option in get_args(expected))
    if expected is type(None) or expected is None:
        return "None"
    return {int: "an integer", bool: "True or False", str: "a string"}.get(
        expected, getattr(expected, "__name__", str(expected))
    )


#: How much of a wrong value a message shows.
_SHOWN = 60


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{text[:_SHOWN]}... ({type(value).__name__})" if len(text) > _SHOWN else text
