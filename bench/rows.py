"""Row definitions: what each benchmark row runs and which metrics its table shows.

To add a row, append a :class:`Row` to ``ROWS`` (and, if it needs a new child action, a method on
``systems.base.System`` plus a branch in ``child.run``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workloads import MIX_WEIGHTS

#: Ours' worker modes (``child.py --mode``): process workers sending batches through a pipe
#: (``transport="pipe"``) or the shared-memory arena (``transport="arena"``), thread workers.
MODES = ("pipe", "arena", "thread")


def worker_variants(
    workers: tuple[int, ...], shuffles: tuple[int, ...] = (1,)
) -> tuple[dict[str, Any], ...]:
    """Variants for ``workers`` counts: no mode at 0 workers, each of ``MODES`` above."""
    return tuple(
        {"shuffle": shuffle, "num_workers": count, **({"mode": mode} if count else {})}
        for count in workers
        for mode in (MODES if count else ("",))
        for shuffle in shuffles
    )


@dataclass(frozen=True)
class Metric:
    """One reported number."""

    key: str  # key in the child's ``metrics`` (``peak_pss_mb`` is added by the parent)
    label: str
    higher_is_better: bool
    digits: int = 2
    compare: bool = True  # show ``ours vs X`` ratios for this metric


#: The systems of the local rows (``--systems`` default order).
STANDARD = ("ours", "litdata", "mosaic", "webdataset", "baseline")
#: Ours with ``LITDATA_VERIFY=0`` in its environment (chunks not checked against checksums).
NOVERIFY = "ours-noverify"
#: Ours with ``LITDATA_VERIFY=always``: every chunk hashed on every open, as a first job sees it
#: (plain ``ours`` hashes a local chunk file once, then again only when it changes).
VERIFYALL = "ours-verifyall"
#: Ours as an earlier commit has it (``LITDATA_BENCH_BEFORE``: a checkout of it), reading
#: ours' prepared datasets: a change's cost, side by side with the peers in one run.
BEFORE = "ours-before"
BEFORE_ENV = "LITDATA_BENCH_BEFORE"
VERIFY_NOTES = {
    BEFORE: f"ours at the checkout {BEFORE_ENV} names (before the change), same datasets",
    NOVERIFY: "ours with LITDATA_VERIFY=0 (chunks not checked against their XXH3)",
    VERIFYALL: (
        "ours with LITDATA_VERIFY=always (every chunk hashed on every open: a first job's cost;"
        " plain ours hashes a local chunk file once and again only when it changes, so its"
        " first repeat hashes and later repeats find the files recorded)"
    ),
}
MODE_NOTES = {
    "litdata": "process workers only: one measurement per worker count, shown in each mode's line",
    "baseline": "torch DataLoader process workers only: one measurement per worker count, shown"
    " in each mode's line",
}
#: The remote rows' reference: the chunk objects read with s3fs at the same concurrency.
S3FS_RAW = "s3fs-raw"
#: Ours and LitData writing and reading Fernet-encrypted datasets (per sample, LitData's
#: default level; ``-chunk``: whole chunks), the key saved next to the chunks.
ENCRYPTION_ENV = "LITDATA_BENCH_ENCRYPTION"
#: W6: ours with the plain Pillow recipe in ``transform=`` (``ours`` runs the fused crop), and
#: the decode limit (the fastest decoder's full decode from RAM on one thread x cores).
PLAIN = "ours-plain"
DECODE_LIMIT = "decode-limit"
VISION_ENV = "LITDATA_BENCH_VISION"
ENCRYPTED = ("ours-fernet", "ours-fernet-chunk", "litdata-fernet", "litdata-fernet-chunk")


@dataclass(frozen=True)
class Row:
    """A benchmark row: one child action over workloads x variants x systems."""

    name: str
    action: str  # child action: write, optimize, random, stream, mixture
    workloads: tuple[str, ...]  # workloads this row can run
    metrics: tuple[Metric, ...]
    variants: tuple[dict[str, Any], ...] = ({},)
    needs_dataset: bool = False  # reads a dataset prepared by the same system
    prepare_action: str = "prepare"  # child action that writes that dataset
    dataset_suffix: str = ""  # prepared/<system>/<workload><suffix>
    description: str = ""
    notes: dict[str, str] = field(default_factory=dict)  # per-system footnotes
    defaults: tuple[str, ...] | None = (
        None  # workloads run when --workloads is not given (all if None)
    )
    systems: tuple[str, ...] = STANDARD  # the systems this row runs (others are skipped)
    remote: bool = False  # reads datasets from the bench's S3 server (see remote.py)

    def selected(
        self, num_workers: list[int] | None, modes: list[str] | None
    ) -> list[dict[str, Any]]:
        """The variants with these worker counts and modes (``None``: any)."""
        return [
            variant
            for variant in self.variants
            if (num_workers is None or variant.get("num_workers", 0) in num_workers)
            and (modes is None or "mode" not in variant or variant["mode"] in modes)
        ]

    def variant_label(self, variant: dict[str, Any]) -> str:
        """Short text for a variant (e.g. ``shuffle, 2 workers``)."""
        if not variant:
            return ""
        parts = []
        if "mix" in variant:
            weights = "/".join(str(w) for w in MIX_WEIGHTS)
            weighted = variant["mix"] == "weighted"
            parts.append(f"weights {weights}" if weighted else "all, no weights")
        if "cache" in variant:
            parts.append(str(variant["cache"]))
        if "shuffle" in variant:
            parts.append("shuffle" if variant["shuffle"] else "no shuffle")
        if "num_workers" in variant:
            parts.append(f"{variant['num_workers']} workers")
        if "mode" in variant:
            parts.append(str(variant["mode"]))
        return ", ".join(parts)


SECONDS = Metric("seconds", "s", higher_is_better=False)
PSS = Metric("peak_pss_mb", "peak PSS MB", higher_is_better=False, digits=0)

ROWS: dict[str, Row] = {
    row.name: row
    for row in [
        Row(
            "write",
            "write",
            ("W1", "W2", "W3"),
            (SECONDS,),
            description="single-process lowest-level writer over the samples (chunk_bytes=64MB)",
            notes={
                "ours": "litdata.processing.write.write_dataset",
                "litdata": "BinaryWriter + merge",
                "mosaic": "MDSWriter",
                "webdataset": "ShardWriter",
                "baseline": "plain .bin/.npy files",
            },
        ),
        Row(
            "optimize",
            "optimize",
            ("W1", "W2", "W3", "W4"),
            (SECONDS, PSS),
            description="optimize(fn, inputs, chunk_bytes='64MB', num_workers=2), worker start in",
            notes={
                "mosaic": "no parallel optimize: MDSWriter in 1 process",
                "webdataset": "no parallel writer: ShardWriter in 1 process",
                "baseline": "plain files written in 1 process",
            },
        ),
        Row(
            "random",
            "random",
            ("W1", "W2", "W3"),
            (
                Metric("p50_us", "p50 µs", False, 1),
                Metric("p99_us", "p99 µs", False, 1),
                Metric("first_us", "first ds[i] µs", False, 0),
            ),
            needs_dataset=True,
            description="1,000 random ds[i] on a freshly opened dataset",
            defaults=("W1", "W3"),
            systems=(*STANDARD, NOVERIFY, VERIFYALL, BEFORE),
            notes=VERIFY_NOTES,
        ),
        Row(
            "stream",
            "stream",
            ("W1", "W2", "W3"),
            (
                Metric("samples_per_s", "samples/s", True, 0),
                Metric("first_batch_ms", "first batch ms", False, 0),
                PSS,
            ),
            variants=(
                {"shuffle": 0, "num_workers": 0},
                *worker_variants((0, 2, 4)),
            ),
            needs_dataset=True,
            description=(
                "one epoch from building dataset + loader to the last batch; ours' workers as"
                " processes sending batches through a pipe or the shared-memory arena, or as"
                " threads (`pipe`, `arena`, `thread`)"
            ),
            systems=(*STANDARD, NOVERIFY, VERIFYALL, BEFORE),
            notes={**VERIFY_NOTES, **MODE_NOTES},
        ),
        Row(
            "decode",
            "stream",
            ("W5",),
            (
                Metric("samples_per_s", "samples/s", True, 0),
                Metric("first_batch_ms", "first batch ms", False, 0),
                PSS,
            ),
            variants=worker_variants((0, 1, 2, 4)),
            needs_dataset=True,
            description=(
                "the stream row on W5: every 256x256 JPEG decoded with Pillow in the dataset's"
                " transform (the baseline's __getitem__), where workers have work to share"
            ),
            systems=("ours", "litdata", "baseline", NOVERIFY, BEFORE),
            notes=MODE_NOTES,
        ),
        Row(
            "vision",
            "stream",
            ("W6",),
            (
                Metric("samples_per_s", "img/s", True, 0),
                Metric("cpu_s_per_1k", "CPU s / 1k img", False, 2),
                Metric("first_batch_ms", "first batch ms", False, 0),
                PSS,
            ),
            variants=worker_variants((0, 1, 2)),
            needs_dataset=True,
            description=(
                "W6: one shuffled epoch of 10,000 ImageNet-like JPEGs, decode +"
                " RandomResizedCrop(224) + flip to uint8 CHW, batch 256; CPU s of the whole"
                " process tree per 1,000 images"
            ),
            systems=("ours", PLAIN, "litdata", "baseline", DECODE_LIMIT, BEFORE),
            notes={
                **MODE_NOTES,
                "ours": "fused: ld.vision.RandomResizedCrop(224, field='image') in transform=",
                PLAIN: "ours' dataset with the plain recipe (Pillow decode + the same crop) in"
                " transform=",
                "litdata": "the same JPEG bytes written by its optimize, the plain recipe in"
                " transform=",
                "baseline": "a torch Dataset over the 10,000 JPEG files + the plain recipe,"
                " torch DataLoader",
                DECODE_LIMIT: "the fastest decoder's full decode from RAM, one thread's rate x"
                " max(1, min(workers, cores)); not a loader",
            },
        ),
        Row(
            "encrypted",
            "stream",
            ("W1", "W3"),
            (
                Metric("samples_per_s", "samples/s", True, 0),
                Metric("first_batch_ms", "first batch ms", False, 0),
                PSS,
            ),
            variants=tuple({"shuffle": 1, "num_workers": workers} for workers in (0, 2)),
            needs_dataset=True,
            description=(
                "the stream row on Fernet-encrypted datasets (password-derived key, LitData's"
                " scheme), per sample and per chunk, next to the plain ones: the overhead is"
                " each system's encrypted / plain samples/s"
            ),
            systems=("ours", "litdata", *ENCRYPTED),
        ),
        Row(
            "mixture",
            "mixture",
            ("W2",),
            (
                Metric("tokens_per_s", "tokens/s", True, 0),
                Metric("first_batch_ms", "first batch ms", False, 0),
                PSS,
                Metric("b_share", "B share", True, 3, compare=False),
            ),
            variants=tuple(
                {"mix": mix, "num_workers": workers}
                for mix in ("weighted", "all")
                for workers in (0, 2)
            ),
            needs_dataset=True,
            prepare_action="prepare-mixture",
            dataset_suffix="-mix",
            description=(
                "W2 split into token corpora A (documents 0-187, 14,664 blocks) and B (the other"
                " 125, 9,750 blocks); one epoch of CombinedStreamingDataset([A, B], seed=42) over"
                " shuffled StreamingDataset(TokensLoader(block_size=2048)) + StreamingDataLoader,"
                " batch 8. 'weights 0.7/0.3': iterate_over_all=False, stops when a corpus runs out;"
                " 'all, no weights': iterate_over_all=True, every block of A and B once"
            ),
            notes={
                "mosaic": "bonus, different semantics: StreamingDataset(streams=[Stream(A),"
                " Stream(B)], shuffle=True) + torch DataLoader; 'weights' = fixed per-epoch counts"
                " Stream(A, choose=14,664), Stream(B, choose=6,285) (B share exactly 0.3), not a"
                " weighted draw per sample that stops when a corpus runs out",
                "webdataset": "not applicable: no mixture dataset in the benchmarked API",
                "baseline": "not applicable: no mixture",
            },
        ),
        Row(
            "remote-stream",
            "remote-stream",
            ("W1", "W3"),
            (
                Metric("samples_per_s", "samples/s", True, 0),
                Metric("first_batch_ms", "first batch ms", False, 0),
                PSS,
                Metric("peak_cache_mb", "peak cache disk MB", False, 0),
                Metric("requests", "HTTP requests", False, 0, compare=False),
            ),
            variants=tuple(
                {"cache": cache, "num_workers": workers}
                for workers in (0, 2)
                for cache in ("cold", "warm")
            ),
            needs_dataset=True,
            description=(
                "one shuffled epoch of StreamingDataset('s3://...', storage_options=...,"
                " cache_dir=...) + StreamingDataLoader from a moto S3 server on loopback; cold:"
                " empty cache dir; warm: the same cache dir, in a new process after the cold"
                " epoch"
            ),
            systems=("ours", "litdata", S3FS_RAW),
            remote=True,
            notes={
                "ours": "its local prepared dataset's files, uploaded to s3://bench/ours/<W>",
                "litdata": "its local prepared dataset's files (written by LitData's optimize),"
                " uploaded to s3://bench/litdata/<W>",
                S3FS_RAW: "ours' chunk objects fetched with S3FileSystem.cat_file (one GET"
                " each), 2 at a time per reader (main process, or each DataLoader worker), no"
                " decoding, no cache: the server's own limit (its warm rows fetch again)",
            },
        ),
        Row(
            "remote-random",
            "remote-random",
            ("W1", "W3"),
            (
                Metric("p50_us", "p50 µs", False, 0),
                Metric("p99_us", "p99 µs", False, 0),
                Metric("requests_per_item", "HTTP requests per ds[i]", False, 3),
                Metric("first_requests", "requests, first ds[i]", False, 0, compare=False),
                Metric("max_requests", "requests, most for one ds[i]", False, 0, compare=False),
            ),
            needs_dataset=True,
            description=(
                "200 random ds[i] (the first 200 of the random row's indices) on a freshly opened"
                " remote StreamingDataset with an empty cache dir; requests counted in the S3"
                " server's log"
            ),
            systems=("ours", "litdata"),
            remote=True,
        ),
    ]
}
