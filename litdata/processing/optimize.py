"""``optimize``: run a function over inputs in parallel and write what it returns as a dataset."""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from litdata.core.formats import ItemLoader
from litdata.core.index import DatasetConfig
from litdata.core.protocols import ClusterExecutor, Encryptor, Executor, Serializer
from litdata.core.units import counted
from litdata.core.work import LiveQueue, Slices, WorkSource
from litdata.engine.items.loaders import default_item_loader
from litdata.engine.native.keys import check_key_fn
from litdata.engine.native.writer import check_chunk_options
from litdata.processing.arguments import SharedArguments, check_common, check_fn
from litdata.processing.job import OptimizeJob
from litdata.processing.output import check_append, prepare_output
from litdata.processing.running import deal, plan_workers, report_done, run_job, workers_per_node

__all__ = ["ALL_DONE", "optimize"]

#: What a producer puts on a ``queue=`` input, once, when it has no more inputs (LitData's).
ALL_DONE = "ALL_DONE"


def _check_source(inputs: Any, queue: Any) -> None:
    if (inputs is None) == (queue is None):
        raise ValueError(
            "Pass either inputs (a sequence) or queue (a multiprocessing queue), not both and "
            "not neither."
        )
    if queue is not None and not all(hasattr(queue, method) for method in ("get", "put")):
        raise ValueError(f"queue must be a multiprocessing queue, got {type(queue).__name__}.")


def _check_resumable(
    fn: Callable[[Any], Any], use_checkpoint: bool, align_chunking: bool, chunk_size: int | None
) -> None:
    if align_chunking and chunk_size is None:
        raise ValueError(
            "align_chunking=True: `chunk_size` needs to be defined (it aligns whole chunks of "
            "items); chunk_bytes alone cannot say where a chunk ends."
        )
    if use_checkpoint and inspect.isgeneratorfunction(fn):
        raise ValueError(
            "use_checkpoint=True cannot resume a generator fn (an input may yield "
            "samples into several chunks); return one sample per input instead."
        )


def _ordered(
    keep_data_ordered: bool | None, use_checkpoint: bool, align_chunking: bool, queue: Any
) -> bool:
    if keep_data_ordered is False and use_checkpoint:
        raise ValueError(
            "Checkpoint feature is not supported with keep_data_ordered=False: "
            "use_checkpoint=True needs ordered inputs to know which are done."
        )
    if keep_data_ordered is False and align_chunking:
        raise ValueError(
            "align_chunking requires keep_data_ordered=True: the chunks it aligns follow "
            "the order of the inputs."
        )
    if queue is not None and (keep_data_ordered or use_checkpoint):
        raise ValueError(
            "queue inputs arrive in no fixed order: they cannot be combined with "
            "keep_data_ordered or use_checkpoint."
        )
    return bool(keep_data_ordered or use_checkpoint or align_chunking)


def _check_keys(
    key_fn: Callable[[Any], Any] | None, use_checkpoint: bool, item_loader: ItemLoader | None
) -> None:
    if key_fn is None:
        return
    check_fn(key_fn, "key_fn")
    check_key_fn(key_fn, item_loader or default_item_loader())
    if use_checkpoint:
        raise ValueError(
            "key_fn cannot be combined with use_checkpoint=True yet: a resumed run would lose "
            "the keys of the samples written before the interruption. Optimize without "
            "use_checkpoint, or call build_keys_index() on the finished dataset."
        )


def optimize(
    fn: Callable[[Any], Any],
    inputs: Sequence[Any] | None = None,
    output_dir: str | os.PathLike[str] = "optimized_data",
    *,
    queue: Any = None,
    chunk_size: int | None = None,
    chunk_bytes: int | str | None = None,
    align_chunking: bool = False,
    compression: str | None = None,
    num_workers: int | None = None,
    num_nodes: int | None = None,
    fast_dev_run: bool | int = False,
    batch_size: int | None = None,
    mode: str | None = None,
    use_checkpoint: bool = False,
    item_loader: ItemLoader | None = None,
    serializers: Mapping[str, Serializer] | None = None,
    start_method: str | None = None,
    keep_data_ordered: bool | None = None,
    verbose: bool = True,
    executor: str | Executor | None = None,
    executor_options: Mapping[str, Any] | None = None,
    encryption: Encryptor | None = None,
    storage_options: Mapping[str, Any] | None = None,
    input_dir: str | os.PathLike[str] | None = None,
    key_fn: Callable[[Any], Any] | None = None,
    weights: Sequence[float] | None = None,
    reader: Any = None,
    num_downloaders: int | None = None,
    num_uploaders: int | None = None,
    reorder_files: bool = True,
    machine: Any = None,
    optimize_dns: bool | None = None,
    broadcast_paths: bool = False,
) -> None:
    """Call ``fn`` on every input, in parallel workers, and write its samples as a dataset.

    Args:
        fn: ``fn(input)`` returns a sample (any structure of dicts, lists, tuples and leaves),
            ``None`` to skip the input, or yields several samples. It must be importable
            (module level) when workers are spawned.
        inputs: The inputs (any sequence). Exactly one of ``inputs`` and ``queue``.
        output_dir: A local directory or a URL (``s3://bucket/prefix``); ``index.json``
            appears there last, atomically.
        queue: A ``multiprocessing`` queue of inputs, ended by one ``ALL_DONE`` from the producer.
        chunk_size: Items per chunk (tokens for ``TokensLoader``).
        chunk_bytes: Bytes per chunk, e.g. ``"64MB"``. Exactly one of the two.
        align_chunking: Deal whole chunks of ``chunk_size`` inputs to the workers, so chunks
            match a single-worker run (ordered; needs ``chunk_size``).
        compression: ``"zstd"``, ``"zstd:<level>"``, ``"lz4"`` or a plugin's codec.
        num_workers: Worker processes; defaults to the CPUs available to this process. On a
            cluster: workers per machine, which sets how finely the inputs are split into
            tasks (by default the cluster's size does).
        num_nodes: Machines to run on: a cluster executor waits until its cluster has this
            many; the local executor runs on this one only.
        fast_dev_run: Process only the first 10 inputs (or this many).
        batch_size: Give ``fn`` lists of this many inputs.
        mode: ``None`` (refuse an existing dataset), ``"overwrite"`` or ``"append"``.
        use_checkpoint: Resume an interrupted run without duplicates or losses (ordered).
        item_loader: ``TokensLoader()`` for token streams; ``PyTreeLoader`` by default.
        serializers: Extra serializers, probed before the installed ones.
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` for local workers.
        keep_data_ordered: ``True`` gives each worker a contiguous slice and keeps the input
            order in the dataset; ``False`` (the default) shares one queue, so a slow input
            never idles the others.
        verbose: Show a progress bar.
        executor: An executor plugin's name (``"dask"``, ``"ray"``...) or instance; local
            processes by default.
        executor_options: Arguments of the named executor's constructor, e.g.
            ``{"address": "tcp://scheduler:8786"}``.
        encryption: Encrypt each sample or chunk with this key (see its ``level``).
        storage_options: Options for the storage backends (credentials, endpoint).
        input_dir: A remote folder whose files the inputs name (``"s3://bucket/raw/x.jpg"``):
            each is downloaded before ``fn`` is called, which gets the local path, and removed
            after. Without it, inputs reach ``fn`` as they are.
        key_fn: ``sample -> key`` (an int or a str, unique): write the ``keys/`` sidecar, so
            ``ds["some-id"]`` and ``ds.get_by_key(42)`` find a sample. Importable, like ``fn``.
        weights: One positive weight per input (its cost): inputs are dealt so every worker
            gets about the same total (see ``litdata.processing.dealing.weighted``).
        reader: A ``litdata.processing.readers.BaseReader``: ``fn`` gets ``reader.read(input)``.
        num_downloaders: Files of one input downloaded at once (with a remote ``input_dir``).
        num_uploaders: Chunks uploaded at once by each worker (remote outputs).
        reorder_files: Accepted for LitData's signature. LitData uses it to balance workers by
            file size; here the shared input queue balances them as they go, and
            ``keep_data_ordered=True`` keeps the input order you asked for.
        machine: LitData's Lightning AI Studio machine type: refused (see ``num_nodes``).
        optimize_dns: Accepted for LitData's signature (a Lightning AI Studio network tweak);
            it changes nothing here.
        broadcast_paths: Accepted for LitData's signature (Studio multi-node path sharing); it
            changes nothing here.

    Raises:
        ValueError: Bad or contradictory arguments; the message says which.
        DatasetExistsError: ``output_dir`` holds a dataset and ``mode`` is ``None``.
        ProcessingError: ``fn`` failed; the message names the input and holds its traceback.
    """
    _check_source(inputs, queue)
    common = check_common(SharedArguments.of(locals(), from_queue=queue is not None))
    _check_resumable(fn, use_checkpoint, align_chunking, chunk_size)
    _check_keys(key_fn, use_checkpoint, item_loader)
    ordered = _ordered(keep_data_ordered, use_checkpoint, align_chunking, queue)
    target_bytes = check_chunk_options(chunk_size, chunk_bytes, compression)
    writer_options = {
        "chunk_size": chunk_size,
        "chunk_bytes": target_bytes,
        "compression": compression,
        "encryption": encryption,
        "key_fn": key_fn,
    }
    output = prepare_output(output_dir, mode, use_checkpoint, storage_options=storage_options)
    start = time.monotonic()
    try:
        aligned = chunk_size if align_chunking else None
        workers = plan_workers(common.runner, num_workers, common.nodes, common.count, aligned)
        if use_checkpoint and isinstance(common.runner, ClusterExecutor):
            workers = output.checkpoints.saved_workers() or workers  # whatever the cluster now
        source: WorkSource = (
            LiveQueue(queue, ALL_DONE)
            if common.items is None
            else deal(common.items, workers, ordered, aligned, common.weights)
        )
        check_append(
            output,
            chunk_size=chunk_size,
            chunk_bytes=target_bytes,
            compression=compression,
            item_loader=item_loader,
            key_fn=key_fn,
        )
        output.claims.remove()  # a killed run's, if any
        job = OptimizeJob(
            common.fn,
            output.write_dir,
            writer_options,
            item_loader,
            serializers,
            output.existing.config if output.existing and output.existing.chunks else None,
            output.chunk_starts,
            upload_to=output.upload_to,
            inputs=common.downloads,
            upload_threads=common.upload_threads,
            node_share=workers_per_node(common.runner, num_workers, workers),
            claims=output.claims if workers > 1 else None,
        )
        if use_checkpoint and isinstance(source, Slices):  # use_checkpoint implies ordered slices
            checkpoints = output.checkpoints
            job.checkpoints = checkpoints.directory
            source, job.resume = checkpoints.resume(source)
        summaries = run_job(
            common.runner,
            job,
            source,
            workers,
            total=common.count,
            description=f"optimize -> {output.location.url.rsplit('/', 1)[-1]}",
            verbose=verbose,
        )
        index = output.publish(
            empty=DatasetConfig(
                chunk_bytes=target_bytes,
                chunk_size=chunk_size,
                compression=compression,
                item_loader=(item_loader or default_item_loader()).name,
            )
        )
    except BaseException:
        output.discard()
        raise
    samples = sum(summary.get("samples", 0) for summary in summaries)
    report_done(
        f"Wrote {counted(samples, 'sample')} in {counted(len(index.chunks), 'chunk')} to "
        f"{output.location.url}",
        start,
        verbose,
    )
