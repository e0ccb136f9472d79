"""A real third-party plugin, installed with pip, works end to end (and its absence is clear).

``tests/plugin_example`` is its own distribution (``litdata-plugin-example``). It is installed
into a private directory; processes that put that directory on ``PYTHONPATH`` have it, the
others do not.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).with_name("plugin_example")

WRITE = """
from fractions import Fraction
import litdata as ld
ld.write_dataset(({"id": i, "ratio": Fraction(i, 7)} for i in range(10)), "ds",
                 chunk_size=4, compression="bz2:5")
"""
READ = """
from fractions import Fraction
import litdata as ld
reader = ld.DatasetReader("ds")
assert [reader[i] for i in range(10)] == [{"id": i, "ratio": Fraction(i, 7)} for i in range(10)]
print("read ok")
"""


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(EXAMPLE),
        ],
        check=True,
        timeout=300,
    )
    return site


def _run(code, cwd, site=None, check=True):
    env = {**os.environ, "PYTHONPATH": str(site) if site else ""}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=check,
        timeout=120,
    )


KINDS = [
    ("serializers", "fraction"),
    ("compression", "bz2"),
    ("storage", "dict"),
    ("shuffle", "blocks"),
    ("formats", "jsonl"),
    ("encryption", "sha256ctr"),
    ("executors", "threads"),
    ("item_loaders", "LinesLoader"),
    ("hooks", "example"),
]

EVERY_KIND = """
import json
import os
from fractions import Fraction

import litdata as ld
from litdata.core.registry import kinds


def sample(i):
    return {"id": i, "ratio": Fraction(i, 7)}


if __name__ == "__main__":
    key = kinds.encryption.create("sha256ctr", password="pw", level="chunk")
    ld.optimize(sample, list(range(60)), "dict://bucket/ds", chunk_size=8, num_workers=2,
                executor="threads", compression="bz2", encryption=key, verbose=False)
    ds = ld.StreamingDataset("dict://bucket/ds", shuffle="blocks:size=3", encryption=key)
    loader = ld.StreamingDataLoader(ds, batch_size=4, num_workers=2, collate_fn=list)
    ids = sorted(item["id"] for batch in loader for item in batch)
    assert ids == list(range(60)), ids
    assert ds[5]["ratio"] == Fraction(ds[5]["id"], 7)
    os.makedirs("lines")
    with open("lines/part-0.jsonl", "w") as handle:
        handle.write("\\n".join(json.dumps({"n": n}) for n in range(5)))
    assert sorted(item["n"] for item in ld.StreamingDataset("lines")) == list(range(5))
    print("ok", ds.strategy.name, ds.strategy.strategy.size)
"""


BLOCKED = """
import litdata.plugins
from litdata.core.registry.manager import get_plugin_manager

names = {kind: litdata.plugins.registry(kind).names() for kind in litdata.plugins.kinds()}
print("bz2" in names["compression"], "LinesLoader" in names["item_loaders"],
      get_plugin_manager().get_plugin("example") is not None)
"""


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ({}, "True True True"),
        ({"LITDATA_BLOCK_PLUGINS": "bz2,example"}, "False True False"),
        ({"LITDATA_BLOCK_PLUGINS": "litdata.item_loaders:LinesLoader"}, "True False True"),
        ({"LITDATA_BLOCK_PLUGINS": "litdata-plugin-example"}, "False False False"),
        ({"LITDATA_DISABLE_PLUGIN_AUTOLOAD": "1"}, "False False False"),
    ],
    ids=["none", "by name", "by group:name", "by distribution", "autoload off"],
)
def test_one_set_of_rules_blocks_registry_and_hook_plugins_alike(
    plugin_site, tmp_path, monkeypatch, setting, expected
):
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    assert _run(BLOCKED, tmp_path, plugin_site).stdout.strip() == expected


def test_every_kind_is_found_and_used_by_name(plugin_site, tmp_path):
    result = _run(EVERY_KIND, tmp_path, plugin_site)
    assert result.stdout.split() == ["ok", "blocks", "3"]


def test_plugin_is_listed_with_its_distribution(plugin_site, tmp_path):
    out = _run("from litdata.cli import main; main(['plugins'])", tmp_path, plugin_site).stdout
    lines = {tuple(line.split()[:4]) for line in out.splitlines()}
    for kind, name in KINDS:
        assert (kind, name, "litdata-plugin-example", "0.1.0") in lines, (kind, name)
    absent = _run("from litdata.cli import main; main(['plugins'])", tmp_path).stdout
    assert "litdata-plugin-example" not in absent


def test_plugin_writes_and_reads_a_dataset(plugin_site, tmp_path):
    _run(WRITE, tmp_path, plugin_site)
    index = json.loads((tmp_path / "ds" / "index.json").read_text())
    assert "fraction" in index["config"]["data_format"]
    assert index["config"]["compression"] == "bz2:5"
    assert index["plugins"] == {
        "serializers": {"fraction": "litdata-plugin-example 0.1.0"},
        "compression": {"bz2": "litdata-plugin-example 0.1.0"},
    }
    assert sorted(os.listdir(tmp_path / "ds"))[0] == "chunk-0-0.bz2:5.bin"
    assert _run(READ, tmp_path, plugin_site).stdout.strip() == "read ok"


def test_reading_without_the_plugin_names_the_package_to_install(plugin_site, tmp_path):
    _run(WRITE, tmp_path, plugin_site)
    failed = _run(READ, tmp_path, check=False)
    assert failed.returncode != 0
    assert "'fraction'" in failed.stderr
    assert "pip install litdata-plugin-example" in failed.stderr


def test_a_missing_codec_plugin_names_its_package(plugin_site, tmp_path):
    write = WRITE.replace('"ratio": Fraction(i, 7)', '"ratio": i / 7')
    _run(write, tmp_path, plugin_site)
    failed = _run("import litdata as ld; ld.DatasetReader('ds')[0]", tmp_path, check=False)
    assert "No compressor named 'bz2'" in failed.stderr
    assert "pip install litdata-plugin-example" in failed.stderr
