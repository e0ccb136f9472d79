"""Environment configuration: the only module that reads ``LITDATA_*`` variables.

Values are read when asked for, never at import time, so a test or a launcher can set them
after ``import litdata``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

__all__ = [
    "PRIVATE_MODE",
    "VARIABLES",
    "allow_pickle_default",
    "blocked_plugins",
    "cache_mode",
    "cache_root",
    "checked_mode",
    "cpu_stages_file",
    "flag",
    "integer",
    "max_metadata_bytes",
    "plugin_autoload",
    "ranged_reads_setting",
    "ranks_dir",
    "set_trace_settings",
    "storage_timeout",
    "trace_settings",
]

#: Every ``LITDATA_*`` variable litdata reads: ``{name: (default, what it sets)}``. The page
#: docs/environment.md is generated from this table (``tests/test_reference_pages.py`` checks
#: that it is current, and that no other variable is named in the package).
VARIABLES: dict[str, tuple[str, str]] = {
    "LITDATA_ALLOW_PICKLE": (
        "0",
        "let pickled leaves import code when decoded, without `allow_pickle=True`",
    ),
    "LITDATA_BLOCK_PLUGINS": (
        "",
        "third-party plugins not loaded, comma-separated: `name`, `group:name` or a distribution",
    ),
    "LITDATA_CACHE_DIR": ("~/.lightning/chunks", "the root of the local chunk cache"),
    "LITDATA_CACHE_MODE": (
        "0600",
        "permission bits of cached files (octal); `0640` shares a cache",
    ),
    "LITDATA_CHUNK_TIMEOUT": ("600", "seconds a reader waits for one chunk before an error"),
    "LITDATA_CPU_STAGES": (
        "",
        "a file each process appends its CPU seconds per read stage to (the bench's breakdown)",
    ),
    "LITDATA_CONNECTIONS": (
        "16",
        "storage requests in flight per machine, shared by its processes",
    ),
    "LITDATA_DIRECT_CACHE": (
        "0",
        "`1`: a fetched chunk is read from memory, its cache file written around the file cache",
    ),
    "LITDATA_DISABLE_PLUGIN_AUTOLOAD": ("0", "load no third-party plugin from entry points"),
    "LITDATA_KEY_PASSWORD": ("", "the password of the key file `litdata view --key` opens"),
    "LITDATA_LOG_FILE": ("litdata_debug.log", "where the tracer writes its log"),
    "LITDATA_LOG_LEVEL": ("DEBUG when tracing", "set by the tracer for LitData's tools"),
    "LITDATA_MAX_METADATA_BYTES": ("2 GiB", "the largest index or metadata file read"),
    "LITDATA_PART_MEMORY_MB": ("128", "MiB of ranged-read parts a process holds at once"),
    "LITDATA_POSIX_FAST": ("auto", "`1` reads every local path in place, `0` never"),
    "LITDATA_POSIX_SHUFFLE_WINDOW": ("16", "chunks a local dataset's shuffle mixes at once"),
    "LITDATA_RANGED_READS": ("1", "`0` fetches each chunk with one GET, never in ranges"),
    "LITDATA_RANKS_DIR": ("<cache root>/ranks", "a folder all ranks share, to compare their plans"),
    "LITDATA_STORAGE_ATTEMPTS": ("5", "attempts of a storage request before an error"),
    "LITDATA_STORAGE_TIMEOUT": ("30", "seconds a storage request may take"),
    "LITDATA_TRACE_CATEGORIES": (
        "",
        "the tracer's categories, comma-separated (wins over the level)",
    ),
    "LITDATA_TRACE_LEVEL": ("", "the tracer's level: `batch`, `chunk`, `sample`, `debug`"),
    "LITDATA_UPLOAD_CONNECTIONS": (
        "",
        "one process's uploads in flight (else its share of the budget)",
    ),
    "LITDATA_VERIFY": ("once", "check in-place chunks: `once`, `always`, `off`"),
    "LITDATA_VISION_REGION": (
        "1",
        "`0`: `ld.vision` crops decode whole images, not only the box's region",
    ),
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

_Default = TypeVar("_Default", bool, None)


def flag(name: str, default: _Default) -> bool | _Default:
    """The boolean environment variable ``name``, or ``default`` when it is unset.

    Plugins read their own ``LITDATA_*`` settings through this and :func:`integer`.

    Raises:
        ValueError: The variable is set to something that is not a boolean.
    """
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"Environment variable {name}={raw!r} is not a boolean; use 1 or 0.")


def verify_setting() -> str:
    """How in-place chunks are checked (``LITDATA_VERIFY``): ``"once"``, ``"always"`` or ``"off"``.

    ``once`` (the default, or any true value) hashes a chunk file the first time and again
    whenever the file changes; ``always`` hashes it on every open; ``off`` (any false value)
    never does.

    Raises:
        ValueError: The variable is set to something else.
    """
    raw = os.environ.get("LITDATA_VERIFY", "")
    if raw.strip().lower() == "always":
        return "always"
    return "once" if flag("LITDATA_VERIFY", default=True) else "off"


def ranged_reads_setting() -> str:
    """How ``ds[i]`` reads remote chunks: ``LITDATA_RANGED_READS`` (on, off or unverified).

    ``on`` (the default, or any true value) reads single items in byte ranges where they can be
    verified (block checksums) or where nothing could be (no checksum at all); ``unverified``
    also reads chunks that only have a whole-file checksum in ranges, without checking them;
    ``off`` (any false value) downloads whole chunks.

    Raises:
        ValueError: The variable is set to something else.
    """
    raw = os.environ.get("LITDATA_RANGED_READS", "")
    if raw.strip().lower() == "unverified":
        return "unverified"
    return "on" if flag("LITDATA_RANGED_READS", default=True) else "off"


def allow_pickle_default() -> bool:
    """Whether pickles may import code without ``allow_pickle`` (``LITDATA_ALLOW_PICKLE``)."""
    return flag("LITDATA_ALLOW_PICKLE", default=False)


def integer(name: str, default: int, *, minimum: int | None = None) -> int:
    """The integer environment variable ``name``, or ``default`` when it is unset.

    Args:
        name: The variable.
        default: Its value when unset.
        minimum: Values below this are raised to it.

    Raises:
        ValueError: The variable is set to something that is not an integer.
    """
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"Environment variable {name}={raw!r} is not an integer.") from None
    return value if minimum is None else max(minimum, value)


def upload_connections() -> int:
    """``LITDATA_UPLOAD_CONNECTIONS``: upload requests in flight per process.

    The node's whole budget unless set; a processing job sets it in each of its worker
    processes to their share (see :class:`litdata.engine.upload.Uploader`).
    """
    return integer("LITDATA_UPLOAD_CONNECTIONS", connection_budget(), minimum=1)


def storage_timeout() -> float:
    """How long a storage call may wait on a silent server, retries included, in seconds.

    ``LITDATA_STORAGE_TIMEOUT``: 30 by default, at least 1. Storage plugins size their
    per-request timeouts from it so that at least two attempts fit.

    Raises:
        ValueError: The variable is set to something that is not an integer.
    """
    return float(integer("LITDATA_STORAGE_TIMEOUT", 30, minimum=1))


def max_metadata_bytes() -> int:
    """``LITDATA_MAX_METADATA_BYTES``: the largest index or other metadata file read (2 GiB).

    An ``index.json`` is parsed whole in memory, so a bigger file is refused before it is
    read: one from someone else's bucket must not decide how much memory a reader takes.

    Raises:
        ValueError: The variable is set to something that is not an integer.
    """
    return integer("LITDATA_MAX_METADATA_BYTES", 2 << 30, minimum=1)


def connection_budget() -> int:
    """``LITDATA_CONNECTIONS``: the most requests to a store in flight per node (16 default).

    Raises:
        ValueError: The variable is set to something that is not an integer.
    """
    return integer("LITDATA_CONNECTIONS", 16, minimum=1)


def cache_root() -> Path:
    """The root of the local chunk cache (``LITDATA_CACHE_DIR``, else ``~/.lightning/chunks``)."""
    configured = os.environ.get("LITDATA_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".lightning" / "chunks"


#: The mode of cached files unless ``LITDATA_CACHE_MODE`` or ``cache_mode`` says otherwise.
PRIVATE_MODE = 0o600
#: The permission bits a cache mode may hold.
_ALL_BITS = 0o777


def cpu_stages_file() -> str | None:
    """Where to append CPU seconds per read stage (``LITDATA_CPU_STAGES``), or ``None``."""
    return os.environ.get("LITDATA_CPU_STAGES") or None


def cache_mode() -> int:
    """The permission bits of cached files (``LITDATA_CACHE_MODE``, octal; default ``0600``).

    Cached chunks may come from a bucket only the job's credentials can read, so by default
    no other local user can read them: files are ``0600`` and the folders holding them
    ``0700``. A shared cache (one per node, several users) sets e.g. ``0640``; folders then
    get the matching search bits (``0750``).

    Raises:
        ValueError: The variable is not an octal mode from 0 to 0777, or denies the owner
            reading and writing.
    """
    raw = os.environ.get("LITDATA_CACHE_MODE")
    if raw is None or not raw.strip():
        return PRIVATE_MODE
    try:
        mode = int(raw.strip(), 8)
    except ValueError:
        mode = -1
    return checked_mode(mode, f"Environment variable LITDATA_CACHE_MODE={raw!r}")


def checked_mode(mode: int, what: str) -> int:
    """``mode`` if it is a file mode (0 to 0o777) that lets the owner read and write.

    Raises:
        ValueError: It is not.
    """
    if not 0 <= mode <= _ALL_BITS or mode & PRIVATE_MODE != PRIVATE_MODE:
        raise ValueError(
            f"{what} is not a file mode for the cache: give octal permission bits that let "
            f"the owner read and write, e.g. 0600 (private, the default) or 0640 (group)."
        )
    return mode


def ranks_dir() -> tuple[Path, bool]:
    """Where training ranks leave notes of what they read, and whether the user chose it.

    ``LITDATA_RANKS_DIR`` (a folder all ranks share, e.g. on NFS), else ``<cache root>/ranks``.
    """
    configured = os.environ.get("LITDATA_RANKS_DIR")
    if configured:
        return Path(configured).expanduser(), True
    return cache_root() / "ranks", False


def plugin_autoload() -> bool:
    """Whether hook plugins load from entry points (not ``LITDATA_DISABLE_PLUGIN_AUTOLOAD``)."""
    return not flag("LITDATA_DISABLE_PLUGIN_AUTOLOAD", default=False)


def blocked_plugins() -> frozenset[str]:
    """Hook plugins to skip, by entry-point name (``LITDATA_BLOCK_PLUGINS``, comma-separated)."""
    raw = os.environ.get("LITDATA_BLOCK_PLUGINS", "")
    return frozenset(name.strip() for name in raw.split(",") if name.strip())


def trace_settings() -> tuple[str | None, str | None, str]:
    """The tracer's settings: ``(level, categories, log file)``.

    ``LITDATA_TRACE_LEVEL`` (``off``, ``batch``, ``chunk``, ``sample``, ``debug``),
    ``LITDATA_TRACE_CATEGORIES`` (comma-separated; wins over the level) and
    ``LITDATA_LOG_FILE`` (default ``litdata_debug.log``). Unset or empty values are ``None``.
    """
    level = os.environ.get("LITDATA_TRACE_LEVEL") or None
    categories = os.environ.get("LITDATA_TRACE_CATEGORIES") or None
    log_file = os.environ.get("LITDATA_LOG_FILE") or "litdata_debug.log"
    return level, categories, log_file


def set_trace_settings(level: str, categories: str, log_file: str) -> None:
    """Export the tracer's settings, so DataLoader and optimize workers inherit them."""
    os.environ["LITDATA_TRACE_LEVEL"] = level
    os.environ["LITDATA_TRACE_CATEGORIES"] = categories
    os.environ["LITDATA_LOG_FILE"] = log_file
    os.environ.setdefault("LITDATA_LOG_LEVEL", "DEBUG")
