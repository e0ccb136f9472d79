"""MosaicML Streaming in the ``scale`` row: its datasets of N shards and its children.

A dataset is made as ours is (``scale.generate``): one real MDS shard of ``PER_CHUNK`` samples
``{"x": int32[4], "y": int}`` written by Mosaic's own ``MDSWriter`` (in the peers' venv), that
shard hard-linked under every shard name, and Mosaic's ``index.json`` with one entry per shard:
the writer's entry with its basename changed, in the writer's own JSON layout. Sample ``i`` is
then sample ``i % PER_CHUNK`` of the template, as in ours, so ``scale._right`` checks both.

The children run in the peers' venv (``scale.py --child mosaic ...``):

- open: ``streaming.StreamingDataset(local=folder, remote=None, batch_size=64, shuffle=False)``
  + ``len`` + one ``ds[i]``, then the random ``ds[i]`` (``scale.measure_open``);
- plan: Mosaic's own ``streaming.base.batching.generate_work`` ("random" batching: resampling,
  ``get_partitions`` with its default "relaxed" and ``get_shuffle`` with its default "py1e")
  for a simulated world of ranks x workers, 8 ranks a node, with Mosaic's defaults for py1e
  (``num_canonical_nodes`` = nodes, its shuffle block size). Mosaic computes the arrangement of
  the whole epoch, every reader's, once per node (in its first process), so that is the time;
- first batch: ``StreamingDataset(..., shuffle=True)`` + torch ``DataLoader`` (batch 64).

Every child first removes the shared memory that Mosaic's dead processes left behind
(``clean_stale_shared_memory``), so a run killed half-way does not fail the next.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from functools import partial
from pathlib import Path
from typing import Any

from scale import (
    BATCH,
    LINKS,
    PER_CHUNK,
    TOPOLOGIES,
    measure_first_batch,
    measure_open,
    plan_ms,
)

RANKS_PER_NODE = 8

WRITE_TEMPLATE = """
import sys
import numpy as np
from streaming import MDSWriter
columns = {"x": "ndarray:int32:4", "y": "int"}
with MDSWriter(out=sys.argv[1], columns=columns) as writer:
    for i in range(int(sys.argv[2])):
        writer.write({"x": np.full(4, i, dtype=np.int32), "y": i})
"""


def _shard_name(index: int) -> str:
    return f"shard.{index:05d}.mds"


def _template(root: Path, python: str, env: dict[str, str]) -> tuple[Path, str, str]:
    """One real shard written by ``MDSWriter``: its file, its index's text, its entry's text."""
    folder = root / "mosaic-template"
    if folder.exists():
        shutil.rmtree(folder)
    command = [python, "-c", WRITE_TEMPLATE, str(folder), str(PER_CHUNK)]
    subprocess.run(command, check=True, env=env, cwd=env["TMPDIR"])
    text = (folder / "index.json").read_text()
    (entry,) = json.loads(text)["shards"]
    if entry["raw_data"]["basename"] != _shard_name(0) or entry["samples"] != PER_CHUNK:
        raise RuntimeError(f"{folder}/index.json: not the one shard of {PER_CHUNK} expected")
    entry_text = json.dumps(entry, sort_keys=True)  # as MDSWriter writes it
    if text.count(entry_text) != 1:
        raise RuntimeError(f"{folder}/index.json: its layout is not json.dumps(sort_keys=True)")
    return folder / _shard_name(0), text, entry_text


def generate(root: Path, shards: int, python: str, env: dict[str, str]) -> Path:
    """The Mosaic dataset of ``shards`` shards under ``root`` (made once)."""
    folder = root / f"mosaic-{shards}"
    if (folder / "index.json").exists():
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    shard, text, entry_text = _template(root, python, env)
    folder.mkdir(parents=True)
    print(f"generating {shards:,} Mosaic shards ...", flush=True)
    data = shard.read_bytes()
    for i in range(shards):
        target = folder / _shard_name(i)
        if i % LINKS == 0:  # a file has at most 65,000 links (ext4)
            target.write_bytes(data)
            source = target
        else:
            os.link(source, target)
    before, after = text.split(entry_text)
    quoted = json.dumps(_shard_name(0))
    head, tail = entry_text.split(quoted)
    entries = ", ".join(f"{head}{json.dumps(_shard_name(i))}{tail}" for i in range(shards))
    partial = folder / "index.json.partial"  # the index last: its presence means complete
    partial.write_text(before + entries + after)
    partial.rename(folder / "index.json")
    return folder


def _clean() -> None:
    from streaming.base.util import clean_stale_shared_memory  # type: ignore[import-not-found]

    clean_stale_shared_memory()


def child_open(path: str) -> dict[str, Any]:
    """Open, len, one ds[i]; random ds[i] p50; memory; plan times."""
    _clean()
    import streaming  # type: ignore[import-not-found]

    streaming_dataset = streaming.StreamingDataset
    result = measure_open(
        lambda: streaming_dataset(local=path, remote=None, batch_size=BATCH, shuffle=False)
    )
    ds = result.pop("dataset")
    result.update(_plans(ds))
    return result


def _plans(ds: Any) -> dict[str, float]:
    from streaming.base.batching import generate_work  # type: ignore[import-not-found]
    from streaming.base.world import World  # type: ignore[import-not-found]

    out: dict[str, float] = {}
    ds.shuffle = True
    for key, (ranks, workers) in TOPOLOGIES.items():
        nodes = max(1, ranks // RANKS_PER_NODE)
        world = World(nodes, ranks // nodes, workers, nodes * (ranks // nodes) * workers - 1)
        ds.num_canonical_nodes = nodes  # Mosaic's default for py1e
        ds.shuffle_block_size = None
        ds._set_shuffle_block_size(world)
        works: list[Any] = []
        make = partial(generate_work, ds.batching_method, ds, world, 1, 0)
        out[key] = plan_ms(lambda make=make, works=works: works.append(make()))
        shapes = [work.shape[:3] for work in works]  # none when stopped at the limit
        if any(shape != (nodes, ranks // nodes, workers) for shape in shapes):
            raise RuntimeError(f"Mosaic's plan for {ranks}x{workers} has shape {shapes[0]}")
    return out


def child_batch(path: str, workers: int) -> dict[str, Any]:
    """Dataset + torch loader to the first batch; PSS of the main process and the workers."""
    _clean()
    import streaming
    from torch.utils.data import DataLoader

    streaming_dataset = streaming.StreamingDataset
    start = time.perf_counter()
    ds = streaming_dataset(local=path, remote=None, batch_size=BATCH, shuffle=True)
    return measure_first_batch(start, DataLoader(ds, batch_size=BATCH, num_workers=workers))
