"""``fake_distribution``: a real, minimal installed distribution on ``sys.path``, for tests.

``importlib.metadata`` finds distributions through ``*.dist-info`` folders on ``sys.path``, so
writing one makes entry points discoverable exactly as ``pip install`` would, without mocks.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["fake_distribution", "rediscover"]


def fake_distribution(
    root: Path,
    name: str,
    entry_points: Mapping[str, Mapping[str, str]],
    modules: Mapping[str, str] | None = None,
    version: str = "0.1.0",
) -> Path:
    """Write an installed distribution into ``root`` and put ``root`` on ``sys.path``.

    Args:
        root: A directory (e.g. pytest's ``tmp_path``).
        name: The distribution name, e.g. ``"litdata-plugin-x"``.
        entry_points: ``{group: {name: "module:attr"}}``.
        modules: Python modules to write, ``{"module_name": "source"}``.
        version: The distribution's version.

    Returns:
        ``root``. Call :func:`rediscover` to make litdata see the new plugins; remove ``root``
        from ``sys.path`` afterwards (pytest's ``monkeypatch.syspath_prepend`` does) and call
        :func:`rediscover` again.
    """
    root.mkdir(parents=True, exist_ok=True)
    for module, source in (modules or {}).items():
        (root / f"{module}.py").write_text(source)
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{key} = {value}" for key, value in entries.items())
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    return root


def rediscover() -> None:
    """Make litdata scan installed plugins again (after installing or removing one).

    Every registry forgets what it discovered and loaded, and the hook manager is rebuilt on
    its next use. ``register()`` calls made in this process are kept.
    """
    from litdata.core.registry import kinds
    from litdata.core.registry.manager import reset_plugin_manager

    for registry in kinds.ALL.values():
        registry.refresh()
    reset_plugin_manager()
