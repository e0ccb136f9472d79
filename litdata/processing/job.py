"""What each worker of ``optimize`` and ``map`` does with its inputs.

Both jobs are picklable callables run by an executor in every worker. They call the user's
``fn`` on each input, report progress a few times a second, and report a failure with the
input that caused it and the original traceback.
"""

from __future__ import annotations

import contextlib
import inspect
import shutil
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.formats import ItemLoader
from litdata.core.index import DatasetConfig
from litdata.core.location import Location
from litdata.core.protocols import Serializer
from litdata.core.registry import hooks
from litdata.core.work import Failed, Item, Progress, Report, ReportedFailure
from litdata.engine.native.writer import ChunkWriter
from litdata.engine.upload import Uploader
from litdata.processing.checkpoint import Checkpoint, WorkerState
from litdata.processing.claims import ConfigClaims
from litdata.processing.inputs import InputDownloads

__all__ = ["MapJob", "OptimizeJob"]

_REPORT_SECONDS = 0.1
_MAX_ITEM_REPR = 300


class _Progress:
    """Batches progress reports so that small inputs do not flood the driver."""

    def __init__(self, rank: int, report: Report) -> None:
        self.rank, self.report = rank, report
        self.inputs = self.samples = 0
        self.last = time.monotonic()

    def add(self, inputs: int, samples: int) -> None:
        self.inputs += inputs
        self.samples += samples
        if time.monotonic() - self.last > _REPORT_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.inputs or self.samples:
            self.report(Progress(self.rank, self.inputs, self.samples))
            self.inputs = self.samples = 0
        self.last = time.monotonic()


def _fail(rank: int, position: int, item: Any, error: BaseException, report: Report) -> None:
    text = repr(item)
    if len(text) > _MAX_ITEM_REPR:
        text = text[:_MAX_ITEM_REPR] + "..."
    report(Failed(rank, f"{type(error).__name__}: {error}", traceback.format_exc(), position, text))


def _each(rank: int, inputs: Iterable[Item], report: Report, handle: Callable[[Any], int]) -> None:
    """Call ``handle(input)`` for each input (it returns the samples made), reporting progress.

    Raises:
        ReportedFailure: ``handle`` failed; the failure was reported with the input.
    """
    progress = _Progress(rank, report)
    current: Item = (-1, None)  # (position, input), named in a failure report
    done = 0
    hooks.process_context(worker_rank=rank)
    hooks.work_began("optimize", rank)
    try:
        for current in inputs:
            progress.add(1, handle(current[1]))
            done += 1
    except ReportedFailure:
        _ended(rank, progress, done)
        raise
    except Exception as error:
        # the hooks hear of it before the parent does: once told, the parent may stop this worker
        hooks.failed("optimize", error)
        _ended(rank, progress, done)
        _fail(rank, *current, error, report)
        raise ReportedFailure from error
    _ended(rank, progress, done)


def _ended(rank: int, progress: _Progress, done: int) -> None:
    progress.flush()
    hooks.work_ended("optimize", rank, done)


@dataclass
class OptimizeJob:
    """Writes the samples ``fn`` returns (or yields) for each input into this worker's chunks.

    Attributes:
        fn: The user's function.
        write_dir: Where chunks are written (the local output); ``None`` for a remote
            output, whose chunks each worker writes into a local folder of its own.
        writer_options: ``chunk_size``, ``chunk_bytes``, ``compression``, ``encryption``.
        item_loader: The item encoding.
        serializers: Extra serializers.
        expected: The config of the dataset being appended to.
        chunk_starts: The first chunk number of each rank (append).
        upload_to: A remote output: each chunk is uploaded there once written (in the
            background, in order), then deleted locally.
        checkpoints: The output's ``.checkpoints`` location (``use_checkpoint``), else ``None``.
        resume: Each rank's checkpointed state.
        claims: Where each worker records its config at its first chunk, to agree with the
            others' early (see :mod:`litdata.processing.claims`); ``None``: not compared.
        inputs: Downloads the remote files inputs name, before ``fn`` sees them.
        upload_threads: Chunks each worker uploads at once (remote outputs).
        node_share: The workers on one node, which share its connection budget for uploads.
    """

    fn: Callable[[Any], Any]
    write_dir: Path | None
    writer_options: Mapping[str, Any]
    item_loader: ItemLoader | None = None
    serializers: Mapping[str, Serializer] | None = None
    expected: DatasetConfig | None = None
    chunk_starts: Mapping[int, int] = field(default_factory=dict)
    upload_to: Location | None = None
    checkpoints: Location | None = None
    resume: Mapping[int, WorkerState] = field(default_factory=dict)
    claims: ConfigClaims | None = None
    inputs: InputDownloads | None = None
    upload_threads: int = 1
    node_share: int = 1

    def __call__(self, rank: int, inputs: Iterable[Item], report: Report) -> dict[str, Any]:
        """Process this worker's inputs; return ``{"samples": ...}``."""
        with _staging(self.write_dir) as folder:
            uploader = (
                Uploader(self.upload_to, threads=self.upload_threads, node_share=self.node_share)
                if self.upload_to is not None
                else None
            )
            try:
                return self._process(rank, inputs, report, folder, uploader)
            except BaseException:
                if uploader is not None:  # no upload outlives a failed worker
                    with contextlib.suppress(Exception):
                        uploader.wait()
                raise

    def _process(
        self,
        rank: int,
        inputs: Iterable[Item],
        report: Report,
        folder: Path,
        uploader: Uploader | None,
    ) -> dict[str, Any]:
        fn = self.inputs.wrap(self.fn) if self.inputs is not None else self.fn
        state = self.resume.get(rank)
        writer = ChunkWriter(
            folder,
            **self.writer_options,
            serializers=self.serializers,
            item_loader=self.item_loader,
            rank=rank,
            chunk_index=self.chunk_starts.get(rank, 0) + (len(state.chunks) if state else 0),
            expected=state.config if state else self.expected,
            previous_chunks=state.chunks if state else (),
            on_chunk=(lambda path, _: uploader.upload(path)) if uploader else None,
            mode="overwrite",  # the output was prepared for this run (optimize's mode)
        )
        checkpoint = Checkpoint(self.checkpoints, rank) if self.checkpoints else None
        seen = state.inputs_done if state else 0  # counted within this worker's slice
        generator = inspect.isgeneratorfunction(self.fn)

        def save(done: int) -> None:
            if checkpoint is None:
                return
            chunks, config = list(writer.chunks), writer.config
            if uploader is None:
                checkpoint.save(done, chunks, config)
            else:  # after the chunks it lists are uploaded
                uploader.submit(lambda: checkpoint.save(done, chunks, config))

        claims = self.claims

        def handle(item: Any) -> int:
            nonlocal seen, claims
            chunks_before = len(writer.chunks)
            samples = _write(writer, fn(item), generator)
            seen += 1
            if claims is not None and len(writer.chunks) > chunks_before:
                claims.claim(rank, writer.config)  # at this run's first chunk only
                claims = None
            if len(writer.chunks) > chunks_before:
                # The inputs seen are all in written chunks, unless this one's sample is buffered.
                save(seen if writer.buffered == 0 else seen - 1)
            return samples

        try:
            _each(rank, inputs, report, handle)
        finally:
            if self.inputs is not None:
                self.inputs.clean()
        writer.close()
        if uploader is not None:
            for name in writer.closing_files:
                if (folder / name).exists():
                    uploader.upload(folder / name, last=True)
        save(seen)
        if uploader is not None:
            uploader.wait()
        return {"samples": writer.num_samples}


@contextlib.contextmanager
def _staging(folder: Path | None) -> Iterator[Path]:
    """``folder``; or, for a remote output, a new local folder of this worker's, removed after.

    The folder is made on the machine the worker runs on (in its cache root), so workers on a
    cluster never depend on a path of the driver's machine.
    """
    if folder is not None:
        yield folder
        return
    root = config.cache_root() / "staging"
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="worker-", dir=root))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write(writer: ChunkWriter, result: Any, generator: bool) -> int:
    if generator or inspect.isgenerator(result):
        count = 0
        for sample in result:
            if sample is not None:
                writer.add(sample)
                count += 1
        return count
    if result is None:
        return 0
    writer.add(result)
    return 1


@dataclass
class MapJob:
    """Calls ``fn(input, output_dir)``, which writes files into ``output_dir``.

    Attributes:
        fn: The user's function; it must return ``None``.
        output_dir: The local directory ``fn`` writes into; ``None`` for a remote output.
        upload_to: A remote output: ``fn`` writes into a local folder of the worker's own,
            and after each input the files it wrote there are uploaded (same relative paths),
            then deleted locally.
        inputs: Downloads the remote files inputs name, before ``fn`` sees them.
        upload_threads: Files each worker uploads at once (remote outputs).
        node_share: The workers on one node, which share its connection budget for uploads.
        arguments: The optional arguments ``fn`` declares: ``is_last``, ``device``.
    """

    fn: Callable[[Any, str], Any]
    output_dir: Path | None
    upload_to: Location | None = None
    inputs: InputDownloads | None = None
    upload_threads: int = 1
    node_share: int = 1
    arguments: frozenset[str] = frozenset()

    @staticmethod
    def wanted_arguments(fn: Callable[..., Any]) -> frozenset[str]:
        """Which of LitData's optional ``map`` arguments ``fn`` declares."""
        try:
            parameters = inspect.signature(fn).parameters
        except (TypeError, ValueError):  # a builtin without a signature
            return frozenset()
        return frozenset(name for name in ("is_last", "device") if name in parameters)

    def __call__(self, rank: int, inputs: Iterable[Item], report: Report) -> dict[str, Any]:
        """Process this worker's inputs; return an empty summary."""
        with _staging(self.output_dir) as folder:
            uploader = (
                Uploader(self.upload_to, threads=self.upload_threads, node_share=self.node_share)
                if self.upload_to is not None
                else None
            )
            target = folder if uploader is None else folder / "out"
            target.mkdir(parents=True, exist_ok=True)
            fn = self.inputs.wrap(self.fn) if self.inputs is not None else self.fn
            extra = {"device": _device(rank)} if "device" in self.arguments else {}
            if "is_last" in self.arguments:
                inputs = _marking_the_last(inputs)

            def handle(entry: Any) -> int:
                item = entry
                if "is_last" in self.arguments:
                    item, extra["is_last"] = entry
                result = fn(item, str(target), **extra)
                if result is not None:
                    raise TypeError(
                        f"map's fn must write its outputs into the directory it is given and "
                        f"return None; it returned a {type(result).__name__}. To build a "
                        f"dataset from returned samples, use optimize()."
                    )
                if uploader is not None:
                    _send_new_files(target, folder / "sending", uploader)
                return 0

            try:
                _each(rank, inputs, report, handle)
            except BaseException:
                if uploader is not None:  # no upload outlives a failed worker
                    with contextlib.suppress(Exception):
                        uploader.wait()
                raise
            finally:
                if self.inputs is not None:
                    self.inputs.clean()
            if uploader is not None:
                uploader.wait()
        return {}


def _device(rank: int) -> str:
    """The device a map worker's ``fn`` gets: its share of the GPUs, or the CPU."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return f"cuda:{rank % count}" if count else "cpu"


def _marking_the_last(inputs: Iterable[Item]) -> Iterator[Item]:
    """The inputs as ``(position, (input, is_last))``: one is looked at ahead."""
    iterator = iter(inputs)
    current = next(iterator, None)
    while current is not None:
        following = next(iterator, None)
        position, item = current
        yield position, (item, following is None)
        current = following


def _send_new_files(folder: Path, sending: Path, uploader: Uploader) -> None:
    """Queue every file ``fn`` left in ``folder`` for upload (same relative path).

    Each file is first moved out of ``folder`` (a rename), so the next input's files are never
    mistaken for it, and a file ``fn`` writes again under the same name is sent again.
    """
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        name = path.relative_to(folder).as_posix()
        queued = sending / f"{uuid.uuid4().hex}-{path.name}"
        sending.mkdir(exist_ok=True)
        path.rename(queued)
        uploader.upload(queued, name)
