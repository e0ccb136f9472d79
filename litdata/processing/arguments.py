"""The arguments ``optimize`` and ``map`` share, checked once: inputs, workers, executor."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from litdata.core.protocols import ClusterExecutor, Executor
from litdata.core.registry import hooks, kinds
from litdata.engine.boundary.options import resolve_plugin
from litdata.engine.boundary.resolve import resolve
from litdata.processing.dealing import check_weights
from litdata.processing.inputs import InputDownloads
from litdata.processing.readers import with_reader

__all__ = [
    "FAST_DEV_RUN_INPUTS",
    "CommonRun",
    "SharedArguments",
    "check_common",
    "check_fn",
    "check_nodes",
    "check_positive",
    "check_workers",
    "default_num_workers",
    "input_downloads",
    "make_output_dir",
    "prepare_inputs",
    "resolve_executor",
]

#: How many inputs ``fast_dev_run=True`` processes.
FAST_DEV_RUN_INPUTS = 10


@dataclass(frozen=True)
class SharedArguments:
    """The arguments ``optimize`` and ``map`` share, as the caller passed them.

    The fields are ``optimize``'s arguments of the same names (its docstring says more);
    ``from_queue`` says that the inputs come from a queue (``optimize(queue=...)``).
    """

    fn: Callable[..., Any]
    inputs: Any
    batch_size: int | None
    fast_dev_run: bool | int
    weights: Sequence[float] | None
    reader: Any
    num_workers: int | None
    num_nodes: int | None
    machine: Any
    executor: str | Executor | None
    start_method: str | None
    executor_options: Mapping[str, Any] | None
    input_dir: str | os.PathLike[str] | None
    storage_options: Mapping[str, Any] | None
    num_downloaders: int | None
    num_uploaders: int | None
    from_queue: bool = False

    @classmethod
    def of(cls, call: Mapping[str, Any], *, from_queue: bool = False) -> SharedArguments:
        """The shared ones among a call's arguments (its ``locals()`` before anything else)."""
        names = [field.name for field in fields(cls) if field.name != "from_queue"]
        return cls(**{name: call[name] for name in names}, from_queue=from_queue)


@dataclass(frozen=True)
class CommonRun:
    """What the shared arguments of ``optimize`` and ``map`` resolve to, checked once.

    Attributes:
        fn: The function to call on each input (wrapped to read through ``reader=``, if given).
        items: The inputs, batched and trimmed as asked; ``None`` for a queue.
        weights: One weight per input, checked, or ``None``.
        runner: The executor.
        nodes: The machines asked for.
        downloads: What fetches the files of a remote ``input_dir``, or ``None``.
        upload_threads: Files each worker uploads at once.
    """

    fn: Callable[..., Any]
    items: list[Any] | None
    weights: list[float] | None
    runner: Executor
    nodes: int
    downloads: InputDownloads | None
    upload_threads: int

    @property
    def count(self) -> int | None:
        """How many inputs there are (``None``: from a queue, not known ahead)."""
        return None if self.items is None else len(self.items)


def check_common(given: SharedArguments) -> CommonRun:
    """Check the arguments ``optimize`` and ``map`` share, in the order a user reads them.

    Raises:
        ValueError: A bad or contradictory argument; the message says which.
        FileNotFoundError: A local ``input_dir`` is not a folder.
        UnknownPluginError: No executor has that name.
    """
    fn, reader, weights, batch_size = given.fn, given.reader, given.weights, given.batch_size
    num_workers, num_nodes = given.num_workers, given.num_nodes
    check_fn(fn)
    check_studio_options(given.machine, num_nodes)
    items = (
        None if given.from_queue else prepare_inputs(given.inputs, batch_size, given.fast_dev_run)
    )
    if weights is not None and (reader is not None or items is None or batch_size):
        other = "reader=" if reader is not None else "queue=" if items is None else "batch_size="
        raise ValueError(
            f"weights= weighs each input of a list: it cannot be combined with {other}; "
            f"drop one of the two."
        )
    balance = check_weights(weights, len(items or ()))
    if reader is not None:
        if items is None:
            raise ValueError("reader= regroups a list of inputs; it cannot read from a queue.")
        items, fn = with_reader(reader, items, fn, num_workers)
    check_workers(num_workers, None if items is None else len(items))
    runner = resolve_executor(given.executor, given.start_method, given.executor_options)
    return CommonRun(
        fn=fn,
        items=items,
        weights=balance,
        runner=runner,
        nodes=check_nodes(runner, num_nodes),
        downloads=input_downloads(
            given.input_dir,
            given.storage_options,
            check_positive(given.num_downloaders, "num_downloaders"),
        ),
        upload_threads=check_positive(given.num_uploaders, "num_uploaders") or 1,
    )


def default_num_workers() -> int:
    """The CPUs this process may run on (the scheduler's allowance, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def resolve_executor(
    executor: str | Executor | None,
    start_method: str | None,
    options: Mapping[str, Any] | None = None,
) -> Executor:
    """The executor plugin for a name, built with ``options``, or the instance given.

    ``None`` is litdata's default executor (local processes); ``start_method`` is one of its
    options, kept as an argument of ``optimize`` and ``map`` as LitData has it.

    Raises:
        UnknownPluginError: No executor has that name.
        ValueError: Options for an instance, or options the executor does not take.
    """
    options = dict(options or {})
    if start_method is not None:
        options["start_method"] = start_method
    runner: Executor = resolve_plugin("executors", executor or hooks.default_executor(), **options)
    return runner


def check_nodes(runner: Executor, num_nodes: int | None) -> int:
    """The number of machines asked for (1 by default), if ``runner`` can use them.

    Raises:
        ValueError: ``num_nodes`` is not a positive integer, or is above 1 for an executor
            that runs on this machine only.
    """
    nodes = 1 if num_nodes is None else num_nodes
    if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 1:
        raise ValueError(f"num_nodes must be a positive integer, got {num_nodes!r}.")
    if nodes > 1 and not isinstance(runner, ClusterExecutor):
        name = getattr(runner, "name", type(runner).__name__)
        others = [other for other in kinds.executors.names() if other != name]
        raise ValueError(
            f"num_nodes={nodes}: the {name!r} executor runs on this machine only. To use "
            f"several machines, start a cluster on them and pass its executor (installed: "
            f"{', '.join(others) or 'no other'}); see docs/clusters.md."
        )
    return nodes


def input_downloads(
    input_dir: str | os.PathLike[str] | None,
    storage_options: Mapping[str, Any] | None,
    threads: int | None = None,
) -> InputDownloads | None:
    """What downloads the files inputs name under a remote ``input_dir`` (``None``: nothing).

    A local ``input_dir`` needs no downloads (``fn`` reads the files where they are), but it
    must exist.

    Args:
        input_dir: The folder, or ``None``.
        storage_options: Its storage options.
        threads: Files of one input fetched at once (LitData's ``num_downloaders``).

    Raises:
        FileNotFoundError: A local ``input_dir`` is not a folder.
    """
    if input_dir is None:
        return None
    location = resolve(input_dir, storage_options=storage_options)
    local = location.local_path
    if local is not None:
        if not os.path.isdir(local):
            what = "is a file" if os.path.exists(local) else "does not exist"
            raise FileNotFoundError(
                f"input_dir={os.fspath(input_dir)!r} {what}: it must be the folder the inputs' "
                f"files are in. Check the path, or leave input_dir out when the inputs name "
                f"their files themselves."
            )
        return None
    return InputDownloads(location, threads=threads or 2)


def check_studio_options(machine: Any, num_nodes: int | None) -> None:
    """Refuse ``machine=``: it picks a Lightning AI Studio machine, which runs elsewhere.

    Raises:
        ValueError: ``machine`` is given.
    """
    if machine is not None:
        nodes = f" and num_nodes={num_nodes}" if num_nodes else ""
        raise ValueError(
            f"machine={machine!r}{nodes} starts a job on Lightning AI Studio machines, which "
            f"litdata does not do. Run on your own cluster with num_nodes=N and "
            f"executor='dask' or 'ray' (see docs/clusters.md), or drop machine=."
        )


def check_positive(value: int | None, name: str) -> int | None:
    """``value`` if it is ``None`` or a positive int.

    Raises:
        ValueError: It is something else.
    """
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return value


def check_fn(fn: Callable[..., Any], name: str = "fn") -> None:
    """Refuse a function argument (``name``) that cannot be called.

    Raises:
        ValueError: ``fn`` is not callable.
    """
    if not callable(fn):
        raise ValueError(f"{name} must be callable, got {type(fn).__name__}.")


def prepare_inputs(inputs: Any, batch_size: int | None, fast_dev_run: bool | int) -> list[Any]:
    """Validate ``inputs`` and return them as a list, batched and trimmed as asked.

    Raises:
        ValueError: ``inputs`` is not a non-empty sequence, or a bad ``batch_size`` or
            ``fast_dev_run``.
    """
    if isinstance(inputs, str | bytes) or not isinstance(inputs, Iterable):
        raise ValueError(f"inputs must be a sequence of inputs, got {type(inputs).__name__}.")
    items = list(inputs)
    if not items:
        raise ValueError("inputs is empty: there is nothing to process.")
    if batch_size is not None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
        if batch_size > 1:
            items = [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
    if fast_dev_run is not False:
        count = FAST_DEV_RUN_INPUTS if fast_dev_run is True else fast_dev_run
        if not isinstance(count, int) or count < 1:
            raise ValueError(
                f"fast_dev_run must be True or a positive integer, got {fast_dev_run!r}."
            )
        items = items[:count]
    return items


def check_workers(num_workers: int | None, count: int | None) -> int:
    """The number of workers to start (never more than there are inputs).

    Raises:
        ValueError: ``num_workers`` is not a non-negative integer.
    """
    if num_workers is None:
        num_workers = default_num_workers()
    if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0:
        raise ValueError(f"num_workers must be a non-negative integer, got {num_workers!r}.")
    num_workers = max(num_workers, 1)
    return min(num_workers, count) if count is not None else num_workers


def make_output_dir(output_dir: str | os.PathLike[str]) -> Path:
    """The absolute output directory, created if missing.

    Raises:
        ValueError: The path is a file.
    """
    directory = Path(output_dir).absolute()
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"output_dir {directory} is a file; give a directory.")
    directory.mkdir(parents=True, exist_ok=True)
    return directory
