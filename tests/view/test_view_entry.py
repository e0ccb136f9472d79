"""``ld.view`` and ``litdata view``: what starts a viewer, over what."""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.request

import pytest
from support.cli_process import cli_argv, cli_env, litdata

import litdata as ld
from litdata.plugins.encryption.fernet import FernetEncryption
from litdata.viewer import start


def _items(url: str) -> list[int]:
    with urllib.request.urlopen(url + "api/datasets", timeout=30) as response:  # noqa: S310
        return [d["items"] for d in json.load(response)["datasets"]]


@pytest.fixture
def small(tmp_path):
    ld.write_dataset(({"n": i, "s": f"v{i}"} for i in range(12)), tmp_path / "a", chunk_size=5)
    ld.write_dataset(({"n": i} for i in range(7)), tmp_path / "b", chunk_size=5)
    return tmp_path


def test_ld_view_returns_the_url_and_stays_callable(small):
    # The package is ``litdata.viewer``, not ``litdata.view``: importing it first must not turn
    # ``ld.view`` into a module.
    import litdata.viewer.server  # noqa: F401

    url = ld.view(str(small / "a"))
    try:
        assert isinstance(url, str)
        assert url.startswith("http://127.0.0.1:")
        assert _items(url) == [12]
        assert "litdata view" in url._repr_html_()
    finally:
        url.viewer.close()


def test_streaming_and_combined_datasets_show_each_dataset(small):
    combined = ld.CombinedStreamingDataset(
        [ld.StreamingDataset(str(small / "a")), ld.StreamingDataset(str(small / "b"))]
    )
    with start(combined) as viewer:
        assert _items(viewer.url) == [12, 7]
    with start([str(small / "b"), ld.StreamingDataset(str(small / "a"))]) as viewer:
        assert _items(viewer.url) == [7, 12]


def test_the_command_serves_until_interrupted(small):
    with subprocess.Popen(
        cli_argv("view", small / "a", small / "b"),
        env=cli_env(),
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            line = process.stdout.readline()  # type: ignore[union-attr]
            assert line.startswith("litdata view: http://127.0.0.1:")
            assert _items(line.split()[2]) == [12, 7]
        finally:
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 130


def test_the_command_opens_an_encrypted_dataset_with_its_key(tmp_path):
    key = FernetEncryption("pw")
    ld.write_dataset(({"n": i} for i in range(4)), tmp_path / "e", chunk_size=2, encryption=key)
    key.save(tmp_path / "key.json")
    refused = litdata("view", tmp_path / "e", "--key", tmp_path / "key.json", timeout=60)
    assert refused.returncode == 1
    assert "LITDATA_KEY_PASSWORD" in refused.stderr
    missing = litdata("view", tmp_path / "nothing-here", timeout=60)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: ")
    with subprocess.Popen(
        cli_argv("view", tmp_path / "e", "--key", tmp_path / "key.json"),
        env=cli_env({"LITDATA_KEY_PASSWORD": "pw"}),
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            url = process.stdout.readline().split()[2]  # type: ignore[union-attr]
            with urllib.request.urlopen(url + "api/sample?i=3", timeout=30) as response:  # noqa: S310
                assert json.load(response)["cells"]["n"]["value"] == 3
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)


def test_a_folder_of_raw_files_is_shown_one_item_per_file(tmp_path):
    from support.view_data import png

    folder = tmp_path / "photos"
    folder.mkdir()
    for i in range(3):
        (folder / f"p{i}.png").write_bytes(png(20 + i, 10, i * 50))
    (folder / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnope")
    for target, raw in ((str(folder), True), (ld.StreamingRawDataset(folder), False)):
        with start(target, raw=raw, cache_dir=str(tmp_path / "cache")) as viewer:
            assert _items(viewer.url) == [4]
            url = viewer.url + "api/samples?ds=0&start=0&count=4"
            with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310
                cells = [row["cells"]["value"] for row in json.load(response)["rows"]]
            kinds = sorted(cell["kind"] for cell in cells)
            assert kinds == ["error", "image", "image", "image"]
