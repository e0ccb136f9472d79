"""``litdata view``: a local web viewer for any dataset litdata reads.

``ld.view("s3://bucket/ds")`` starts the viewer in a background thread and returns its URL (in a
notebook the returned object shows as a link); ``litdata view DATASET`` does the same from a
shell. See docs/view.md for the pages and the JSON API.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from litdata.core.location import Location
from litdata.core.protocols import Encryptor
from litdata.viewer.items import ItemsSource
from litdata.viewer.running import Viewer
from litdata.viewer.source import Source

__all__ = ["Source", "Viewer", "ViewerURL", "start", "view"]

#: Viewers started by :func:`view`, kept running until the process ends.
_RUNNING: list[Viewer] = []


def _sources(
    target: Any,
    encryption: Encryptor | None,
    storage_options: Mapping[str, Any] | None,
    cache_dir: str | None,
    raw: bool = False,
) -> list[Source]:
    """The sources for a path or URL, a list of them, or (combined) streaming datasets."""
    children = getattr(target, "datasets", None)
    if isinstance(children, Sequence) and not isinstance(target, str | bytes):
        return [
            s
            for child in children
            for s in _sources(child, encryption, storage_options, cache_dir, raw)
        ]
    if isinstance(target, list | tuple):
        return [
            s
            for item in target
            for s in _sources(item, encryption, storage_options, cache_dir, raw)
        ]
    location = getattr(target, "location", None)
    if isinstance(location, Location) and hasattr(target, "items"):  # a StreamingRawDataset
        return [ItemsSource.raw(location, cache_dir=cache_dir)]
    reader = getattr(target, "_reader", None)  # a StreamingDataset: view what it reads
    if reader is not None:
        return [
            Source.of_reader(
                reader,
                encryption=getattr(reader, "_encryption", None),
                item_loader=reader.item_loader,
                cache_dir=getattr(target, "cache_dir", None),
            )
        ]
    if raw:
        return [ItemsSource.raw(target, storage_options=storage_options, cache_dir=cache_dir)]
    return [
        Source.open(
            target, encryption=encryption, storage_options=storage_options, cache_dir=cache_dir
        )
    ]


def start(
    dataset: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    encryption: Encryptor | None = None,
    storage_options: Mapping[str, Any] | None = None,
    cache_dir: str | None = None,
    provenance_dir: str | os.PathLike[str] | None = None,
    raw: bool = False,
) -> Viewer:
    """Start a viewer over ``dataset`` and return it (``.url``; ``.close()`` stops it).

    Args:
        dataset: A path or URL (any format litdata reads), a ``StreamingDataset``, a
            ``CombinedStreamingDataset`` (each of its datasets is shown), a
            ``StreamingRawDataset`` (its files, one item each), or a list of these.
        host: The address to bind; loopback by default (the viewer has no authentication).
        port: The port; 0 picks a free one.
        encryption: The key of an encrypted dataset (the encryptor it was written with).
        storage_options: Options for a remote dataset's storage backend.
        cache_dir: Where fetched chunks are kept.
        provenance_dir: A ``StreamingDataLoader``'s provenance log: the training-step page.
        raw: Show the paths and URLs given as folders of files read as they are (as
            ``StreamingRawDataset`` reads them: images, audio...), one item per file.
    """
    sources = _sources(dataset, encryption, storage_options, cache_dir, raw)
    return Viewer(sources, host=host, port=port, provenance_dir=provenance_dir)


class ViewerURL(str):
    """The URL of a running viewer (a ``str``); in a notebook it shows as a link."""

    viewer: Viewer

    def _repr_html_(self) -> str:
        return self.viewer._repr_html_()


def view(dataset: Any, **options: Any) -> ViewerURL:
    """Start a viewer over ``dataset`` in the background and return its URL.

    Takes :func:`start`'s arguments. The viewer runs until the process ends
    (``url.viewer.close()`` stops it sooner); in a notebook the URL shows as a link.

    Example:
        >>> import litdata as ld
        >>> ld.view("./my-dataset")  # doctest: +SKIP
        'http://127.0.0.1:40123/'
    """
    viewer = start(dataset, **options)
    _RUNNING.append(viewer)
    url = ViewerURL(viewer.url)
    url.viewer = viewer
    return url
