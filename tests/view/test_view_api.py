"""The viewer's JSON API over real datasets of every format, local, on S3, encrypted, hostile."""

from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from PIL import Image
from support.view_data import (
    ATTACKS,
    ENCRYPTED,
    GALLERY,
    GALLERY_ITEMS,
    HOSTILE,
    MDS,
    PARQUET,
    S3,
    WEBDATASET,
)

from litdata.viewer.images import THUMB_SIDE
from litdata.viewer.server import CSP


def fetch(viewer: Any, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any, bytes]:
    """``(status, headers, body)`` of a GET to the viewer."""
    request = urllib.request.Request(viewer.url + path, headers=headers or {})  # noqa: S310  # loopback
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, error.read()


def api(viewer: Any, path: str) -> Any:
    status, _, body = fetch(viewer, "api/" + path)
    assert status == 200, body
    return json.loads(body)


def test_overview_says_what_inspect_says_and_maps_the_chunks(viewer):
    found = api(viewer, f"overview?ds={GALLERY}")
    assert found["items"] == GALLERY_ITEMS
    assert found["keyed"] is True
    assert dict(found["summary"])["format"] == "chunks"  # not a plugin name
    chunks = api(viewer, f"chunks?ds={GALLERY}")
    assert [c["items"] for c in chunks["chunks"]] == [40, 40, 40]
    assert [c["start"] for c in chunks["chunks"]] == [0, 40, 80]
    assert all(c["cached"] for c in chunks["chunks"])  # read in place
    datasets = api(viewer, "datasets")
    assert len(datasets["datasets"]) == 7
    assert datasets["provenance"] is True


def test_a_page_of_samples_draws_each_field_by_kind(viewer):
    page = api(viewer, f"samples?ds={GALLERY}&start=50&count=50")
    assert [row["index"] for row in page["rows"]] == list(range(50, 100))
    cells = page["rows"][0]["cells"]
    assert cells["image"] == {"kind": "image", "width": 32, "height": 32}
    assert cells["label"] == {"kind": "number", "value": 2}
    assert cells["caption"]["kind"] == "text"
    assert cells["vector"]["shape"] == [64]
    assert len(cells["vector"]["plot"]) == 64
    assert cells["grid"]["heat_map"] is True
    assert cells["grid"]["max"] == 49 * 50
    assert cells["meta.source"]["value"] == "camera"
    assert page["cost"] == {"requests": 0, "bytes": 0, "in_place": True}
    assert len(api(viewer, f"samples?ds={GALLERY}&start=0&count=1000")["rows"]) == 100


def test_thumbnails_are_decoded_and_bounded(viewer):
    status, headers, body = fetch(viewer, f"api/field?ds={GALLERY}&i=7&field=image")
    assert status == 200
    assert headers["Content-Type"].startswith("image/")
    image = Image.open(io.BytesIO(body))
    assert image.size == (48, 28)
    assert max(image.size) <= THUMB_SIDE
    status, headers, body = fetch(viewer, f"api/field?ds={GALLERY}&i=7&field=grid&view=heat")
    assert status == 200
    assert Image.open(io.BytesIO(body)).size == (8, 8)
    assert headers["X-Litdata-Cost"] == "requests=0; bytes=0"


def test_hostile_samples_are_error_cells_and_the_server_stays_up(viewer):
    rows = api(viewer, f"samples?ds={HOSTILE}&start=0&count=30")["rows"]
    assert rows[0]["cells"]["image"]["kind"] == "image"
    assert "not a decodable image" in rows[1]["cells"]["image"]["error"]
    assert "over the viewer's limit" in rows[2]["cells"]["image"]["error"]
    truncated = [row for row in rows if "error" in row]
    assert [row["index"] for row in truncated] == list(range(10, 20))
    assert truncated[0]["error"].startswith("sample 10: ")
    assert rows[20]["cells"]["n"]["value"] == 20  # after the bad chunk, samples read again
    status, _, body = fetch(viewer, f"api/field?ds={HOSTILE}&i=2&field=image&view=full")
    assert status == 422
    assert b"limit" in body
    assert api(viewer, "datasets")["datasets"][HOSTILE]["items"] == 30


def test_audio_is_served_as_itself(viewer):
    cell = api(viewer, f"sample?ds={HOSTILE}&i=0")["cells"]["sound"]
    assert cell["kind"] == "audio"
    assert cell["mime"] == "audio/wav"
    status, headers, body = fetch(viewer, f"api/field?ds={HOSTILE}&i=0&field=sound&view=media")
    assert status == 200
    assert headers["Content-Type"] == "audio/wav"
    assert body[:4] == b"RIFF"
    assert len(body) == cell["size"]
    assert fetch(viewer, f"api/field?ds={HOSTILE}&i=0&field=n&view=media")[0] == 400


def test_key_lookup_jump_and_bad_requests(viewer):
    assert api(viewer, f"key?ds={GALLERY}&key=img-0010")["index"] == 10
    assert fetch(viewer, f"api/key?ds={GALLERY}&key=nope")[0] == 404
    assert fetch(viewer, f"api/key?ds={HOSTILE}&key=1")[0] == 404  # not keyed
    assert fetch(viewer, "api/samples?ds=99")[0] == 404
    assert fetch(viewer, f"api/sample?ds={GALLERY}&i={GALLERY_ITEMS}")[0] == 404
    assert fetch(viewer, f"api/sample?ds={GALLERY}&i=-1")[0] == 400
    assert fetch(viewer, f"api/samples?ds={GALLERY}&indices=1,x")[0] == 400
    assert fetch(viewer, "static/..%2f..%2fserver.py")[0] == 404
    assert fetch(viewer, "static/index.html")[0] == 404


def test_every_answer_is_locked_down(viewer):
    status, headers, _ = fetch(viewer, "")
    assert status == 200
    assert headers["Content-Security-Policy"] == CSP
    assert "'unsafe-inline'" not in CSP
    assert "script-src 'self'" in CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    status, _, body = fetch(viewer, "api/datasets", {"Host": "evil.example:80"})
    assert status == 403
    assert b"loopback" in body
    request = urllib.request.Request(viewer.url + "api/datasets", method="POST")  # noqa: S310
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)  # noqa: S310
    assert refused.value.code == 405
    refused.value.close()


def test_statistics_histograms_top_values_and_filters(viewer):
    import time

    deadline = time.monotonic() + 60
    while not (stats := api(viewer, f"stats?ds={GALLERY}"))["finished"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert stats["whole"]
    assert stats["done"] == GALLERY_ITEMS
    label = stats["fields"]["label"]
    assert [bar["count"] for bar in label["histograms"]["value"]] == [30, 30, 30, 30]
    assert sorted(label["top"]) == [["0", 30], ["1", 30], ["2", 30], ["3", 30]]
    widths = stats["fields"]["image"]["histograms"]["width"]
    assert sum(bar["count"] for bar in widths) == GALLERY_ITEMS
    found = api(viewer, f"filter?ds={GALLERY}&field=label&metric=value&bar=3")
    assert found["indices"] == list(range(3, GALLERY_ITEMS, 4))
    found = api(viewer, f"filter?ds={GALLERY}&field=label&value=1")
    assert found["count"] == 30
    assert found["indices"][:2] == [1, 5]
    assert fetch(viewer, f"api/filter?ds={GALLERY}&field=nope&value=1")[0] == 404


def test_search_is_bounded_and_resumes(viewer, monkeypatch):
    from litdata.viewer import search

    monkeypatch.setattr(search, "MAX_SCANNED", 50)
    first = api(viewer, f"search?ds={GALLERY}&q=DOG")
    assert {hit["index"] for hit in first["hits"]} == set(range(1, 50, 4)) - {5}
    assert first["next"] == 50
    assert first["scanned"] == [0, 50]
    assert first["hits"][0]["match"] == "dog"
    rest = api(viewer, f"search?ds={GALLERY}&q=dog&start=100")
    assert rest["next"] is None
    assert rest["hits"][0]["index"] == 101
    script = api(viewer, f"search?ds={GALLERY}&q=%3Cscript%3E")
    assert [hit["index"] for hit in script["hits"]] == [3]
    assert fetch(viewer, f"api/search?ds={GALLERY}&q=")[0] == 400


@pytest.mark.parametrize(
    ("ds", "field"),
    [(PARQUET, "text"), (MDS, None), (WEBDATASET, "txt"), (ENCRYPTED, "secret")],
)
def test_every_format_shows_samples(viewer, ds, field):
    rows = api(viewer, f"samples?ds={ds}&start=0&count=5")["rows"]
    assert rows
    assert not [row for row in rows if "error" in row]
    if field is not None:
        assert rows[0]["cells"][field]["kind"] in ("text", "bytes")
    assert api(viewer, f"overview?ds={ds}")["items"] >= 5


def test_the_encrypted_dataset_shows_plain_text(viewer):
    rows = api(viewer, f"samples?ds={ENCRYPTED}&start=0&count=2")["rows"]
    assert rows[1]["cells"]["secret"]["value"] == "hidden 1"


def test_a_remote_page_says_its_requests_and_bytes(viewer):
    page = api(viewer, f"samples?ds={S3}&start=0&count=10")
    assert not [row for row in page["rows"] if "error" in row]
    cost = page["cost"]
    assert cost["in_place"] is False
    assert cost["requests"] >= 1
    assert cost["bytes"] > 0
    again = api(viewer, f"samples?ds={S3}&start=0&count=10")["cost"]
    assert again["bytes"] <= cost["bytes"]  # the chunk is in the cache now


def test_a_training_step_from_the_provenance_log(viewer):
    step = api(viewer, "step?step=1")
    (rank,) = step["ranks"]
    assert rank["step"] == 1
    assert len(rank["ids"]) == 4
    assert [row["index"] for row in rank["rows"]] == [i for _, i in rank["ids"]]
    assert all(row["dataset"] == GALLERY and "cells" in row for row in rank["rows"])
    assert fetch(viewer, "api/step?step=99")[0] == 404


def test_concurrent_requests_are_served(viewer):
    failures: list[Any] = []

    def ask(start: int) -> None:
        try:
            rows = api(viewer, f"samples?ds={GALLERY}&start={start}&count=20")["rows"]
            assert [row["index"] for row in rows] == list(range(start, start + 20))
        except BaseException as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=ask, args=(n * 10,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_attacks_come_back_as_plain_strings(viewer):
    rows = api(viewer, f"samples?ds={GALLERY}&indices=3,4,5")["rows"]
    assert [row["cells"]["caption"]["value"] for row in rows] == list(ATTACKS.values())


def test_a_large_dataset_is_described_through_a_seeded_uniform_sample(viewer, monkeypatch):
    from litdata.viewer import stats

    monkeypatch.setattr(stats, "FULL_LIMIT", 50)
    monkeypatch.setattr(stats, "SAMPLE_SIZE", 30)
    source = viewer.sources[GALLERY]
    first, second = stats.Statistics(source), stats.Statistics(source)
    assert not first.whole
    assert first.indices.tolist() == second.indices.tolist()  # the same seed, the same sample
    assert len(set(first.indices.tolist())) == 30
    while not first.finished:
        first.step()
    found = first.result()
    assert (found["whole"], found["done"], found["items"]) == (False, 30, GALLERY_ITEMS)
    assert sum(bar["count"] for bar in found["fields"]["label"]["histograms"]["value"]) == 30
