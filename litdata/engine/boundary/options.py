"""The plugin boundary: every plugin litdata uses is resolved here, and comes back checked.

``resolve_plugin(kind, spec_or_instance, **options)`` (public as ``litdata.plugins.resolve``)
is the one path from a user's setting to a plugin, for every kind: a spec names a registered
plugin with options in one syntax, ``"name"``, ``"name:value"`` (a positional option:
``"zstd:7"``) or ``"name:key=value,key=value"`` (``"window:size=4"``), merged with
``options``; an instance is checked against its kind's protocol. What comes back wraps the
plugin in its kind's checks (:mod:`litdata.engine.boundary.checked`; the storage backend's is
:class:`~litdata.engine.boundary.storage.Storage`): what a plugin returns is checked where it enters
litdata, and every error names the plugin and the distribution it comes from.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Mapping
from typing import Any

from litdata.core.errors import PluginOptionsError, PluginValidationError
from litdata.core.protocols import protocol_members
from litdata.core.registry import kinds
from litdata.engine.boundary.checked import WRAPPERS

__all__ = ["parse_spec", "provider_of", "resolve_plugin"]


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_spec(spec: str, *, what: str = "spec") -> tuple[str, list[Any], dict[str, Any]]:
    """A spec's name, positional and keyword options: ``"zstd:7"``, ``"window:size=4"``.

    Values are Python literals where they parse as one (``4``, ``0.5``, ``True``), else strings.

    Raises:
        ValueError: A positional option follows a ``key=value`` one.
    """
    name, _, rest = spec.partition(":")
    positional: list[Any] = []
    named: dict[str, Any] = {}
    for part in filter(None, (piece.strip() for piece in rest.split(","))):
        key, equals, value = part.partition("=")
        if equals and key.strip().isidentifier():
            named[key.strip()] = _value(value.strip())
        elif named:
            raise ValueError(
                f"{what}={spec!r}: a positional option ({part!r}) cannot follow key=value "
                f"ones; write 'name:value' or 'name:key=value,key=value'."
            )
        else:
            positional.append(_value(part))
    return name.strip(), positional, named


def _build(
    kind: str,
    spec: str,
    args: tuple[Any, ...],
    options: dict[str, Any],
    providers: Mapping[str, str] | None,
) -> Any:
    registry = kinds.ALL[kind]
    name, positional, named = parse_spec(spec, what=kind)
    plugin = registry.load(name, provider=(providers or {}).get(name))
    merged = {**named, **options}
    parameters = inspect.signature(plugin).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    unknown = sorted(key for key in merged if key not in parameters and not takes_any)
    if unknown:
        takes = ", ".join(name for name in parameters if name != "self") or "no options"
        raise PluginOptionsError(
            f"The {registry.noun} {name!r} does not take {', '.join(unknown)} ({kind}="
            f"{spec!r}); it takes {takes}."
        )
    return plugin(*positional, *args, **merged)  # its own errors say what it refuses


def _checked_instance(kind: str, instance: Any, options: dict[str, Any]) -> Any:
    registry = kinds.ALL[kind]
    if options:
        raise PluginOptionsError(
            f"Options ({', '.join(sorted(options))}) configure a {registry.noun} given by "
            f"name; this {type(instance).__name__} is already built: pass them to its "
            f"constructor."
        )
    missing = [
        member for member in protocol_members(registry.protocol) if not hasattr(instance, member)
    ]
    if missing:
        raise PluginValidationError(
            f"{instance!r} is not a {registry.noun}: it lacks {', '.join(missing)} (the "
            f"{registry.protocol.__name__} protocol)."
        )
    return instance


def resolve_plugin(
    kind: str,
    spec_or_instance: Any,
    *args: Any,
    providers: Mapping[str, str] | None = None,
    wrap: bool = True,
    **options: Any,
) -> Any:
    """The plugin of ``kind`` that ``spec_or_instance`` selects, built and checked.

    Args:
        kind: The plugin kind (``"compression"``, ``"shuffle"``, ``"executors"``...).
        spec_or_instance: A spec (``"zstd:7"``, ``"window:size=4"``) or a plugin instance.
        *args: Positional arguments for the plugin's constructor, after the spec's.
        providers: For a dataset being read, the distributions its index says provide its
            plugins (``{name: "dist version"}``), named when one is missing.
        wrap: Return the plugin wrapped in its kind's checks (the default), or bare.
        **options: Keyword arguments for the constructor (over the spec's).

    Raises:
        UnknownPluginError: No plugin of ``kind`` has that name (the message lists the known
            ones and says what to install).
        PluginValidationError: An instance lacks its protocol's members.
        PluginOptionsError: Options the plugin does not take (its constructor raises what
            it refuses among the others).
    """
    if isinstance(spec_or_instance, str):
        plugin = _build(kind, spec_or_instance, args, options, providers)
    else:
        plugin = _checked_instance(kind, spec_or_instance, options)
    wrapper = WRAPPERS.get(kind) if wrap else None
    return wrapper(plugin) if wrapper is not None else plugin


def provider_of(kind: str, spec: str) -> str | None:
    """``"distribution version"`` of the plugin ``spec`` names, when it is not litdata's own.

    What a dataset's index records for the plugins it needs (``index.plugins``).
    """
    return kinds.ALL[kind].provider(parse_spec(spec, what=kind)[0])
