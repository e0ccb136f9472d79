"""The installed entry points of litdata's groups, found in one pass over ``sys.path``.

Both the typed registries (``litdata.<kind>``) and the pluggy hook manager (``litdata``) read
this list, so opening the first dataset scans installed distributions once. The scan opens
only each distribution's ``entry_points.txt`` and parses a distribution's metadata only when
that file names a litdata group: a typical environment has hundreds of distributions, and
reading all of their metadata through :func:`importlib.metadata.distributions` costs more
than the rest of opening a dataset.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata

from litdata.core import config
from litdata.core.registry import known

__all__ = ["Declared", "allowed", "describe", "distribution_of", "forget", "installed"]

_GROUP_PREFIX = "litdata"
_METADATA_SUFFIXES = (".dist-info", ".egg-info")


def describe(distribution: str, version: str) -> str:
    """How messages name a plugin's provider, and what an index records: ``"name version"``."""
    return f"{distribution} {version}"


def distribution_of(provider: str) -> str:
    """The distribution name (what to ``pip install``) in a :func:`describe` string."""
    return provider.partition(" ")[0]


@dataclass(frozen=True)
class Declared:
    """An entry point in a litdata group, with the distribution that declares it.

    Attributes:
        entry_point: The entry point (its group, name and ``module:attr`` value).
        distribution: The declaring distribution's name.
        version: That distribution's version.
    """

    entry_point: metadata.EntryPoint
    distribution: str
    version: str

    @property
    def provider(self) -> str:
        """The declaring distribution and its version (see :func:`describe`)."""
        return describe(self.distribution, self.version)

    @property
    def origin(self) -> str:
        """``module:attr from distribution version``, for messages."""
        return f"{self.entry_point.value} from {self.provider}"


def _normalized(name: str) -> str:
    """A distribution name as :mod:`importlib.metadata` compares them (PEP 503, ``_`` joins)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata_dirs() -> Iterator[str]:
    """The ``*.dist-info`` / ``*.egg-info`` directories on ``sys.path`` that are in effect.

    As in :func:`importlib.metadata.entry_points`, only the first directory of each
    distribution name (in ``sys.path`` order) counts: a later one is a stale or shadowed copy.
    The name is read from the directory's name (``<name>-<version>.dist-info``).
    """
    seen: set[str] = set()
    for entry in sys.path:
        folder = entry or os.curdir
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # a zip file, a missing directory
            continue
        for name in names:
            if not name.endswith(_METADATA_SUFFIXES):
                continue
            distribution = _normalized(os.path.splitext(name)[0].partition("-")[0])
            if distribution not in seen:
                seen.add(distribution)
                yield os.path.join(folder, name)


def _declares_litdata(metadata_dir: str) -> bool:
    try:
        with open(os.path.join(metadata_dir, "entry_points.txt"), encoding="utf-8") as file:
            return f"[{_GROUP_PREFIX}" in file.read()
    except OSError:
        return False


def _name_and_version(distribution: metadata.Distribution) -> tuple[str, str]:
    """``Name`` and ``Version`` from the metadata's header, without parsing its long body."""
    text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO") or ""
    header = text.split("\n\n", 1)[0]
    fields: dict[str, str] = {}
    for line in header.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), value.strip())
    return fields.get("name", "unknown"), fields.get("version", "unknown")


def _builtin_table() -> list[Declared]:
    """Litdata's own entry points from :mod:`~litdata.core.registry.known` (source checkouts)."""
    from litdata.__about__ import __version__

    return [
        Declared(metadata.EntryPoint(name, value, group), known.DISTRIBUTION, __version__)
        for group, entries in known.BUILTIN.items()
        for name, value in entries.items()
    ]


@functools.cache
def installed() -> tuple[Declared, ...]:
    """Every installed entry point whose group starts with ``litdata``, read once per process.

    A distribution installed twice on ``sys.path`` counts once, from its first copy. When
    litdata itself has no distribution metadata (a source checkout on ``sys.path``), its own
    plugins come from the built-in table instead.
    """
    declared: list[Declared] = []
    for metadata_dir in _metadata_dirs():
        if not _declares_litdata(metadata_dir):
            continue
        distribution = metadata.PathDistribution.at(metadata_dir)
        ours = [ep for ep in distribution.entry_points if ep.group.startswith(_GROUP_PREFIX)]
        name, version = _name_and_version(distribution)
        declared.extend(Declared(ep, name, version) for ep in ours)
    if not any(_normalized(item.distribution) == known.DISTRIBUTION for item in declared):
        declared.extend(_builtin_table())
    return tuple(declared)


def allowed(declared: Declared) -> bool:
    """Whether a plugin may load: the rules every registry and the hooks share.

    litdata's own plugins always load. A third party's does unless
    ``LITDATA_DISABLE_PLUGIN_AUTOLOAD`` is set, or ``LITDATA_BLOCK_PLUGINS`` names it: by its
    entry-point name (``bz2``), as ``group:name`` (``litdata.compression:bz2``), or by its
    distribution's name (``litdata-plugin-example``: all of them).
    """
    if _normalized(declared.distribution) == known.DISTRIBUTION:
        return True
    if not config.plugin_autoload():
        return False
    entry_point = declared.entry_point
    blocked = config.blocked_plugins()
    names = {
        entry_point.name,
        f"{entry_point.group}:{entry_point.name}",
    }
    return not (names & blocked) and _normalized(declared.distribution) not in {
        _normalized(name) for name in blocked
    }


def forget() -> None:
    """Scan again on the next :func:`installed` call (after installing or removing a plugin)."""
    installed.cache_clear()
