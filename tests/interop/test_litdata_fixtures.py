"""Datasets written by the real LitData 0.2.76 read back identically here.

The fixtures were written by ``make_fixtures.py`` under LitData itself; each directory also
holds ``litdata-read.json``, what LitData returned when it read the fixture back.
"""

import json

import canonical
import expected
import pytest
from support.helpers import snapshot

import litdata as ld

ld.register_namedtuple(expected.Point, expected.POINT_TYPE_NAME)


def open_fixture(name):
    fixture = expected.FIXTURES[name]
    loader = None
    if fixture.item_loader:
        loader = ld.TokensLoader(block_size=int(fixture.item_loader.split(":")[1]))
    return ld.DatasetReader(expected.fixture_dir(name), item_loader=loader)


@pytest.mark.parametrize("name", sorted(expected.FIXTURES))
def test_litdata_fixture_reads_identically(name):
    before = snapshot(expected.fixture_dir(name))
    reader = open_fixture(name)
    ours = [canonical.canonical(reader[i]) for i in range(len(reader))]
    want = [canonical.canonical(sample) for sample in expected.expected_samples(name)]
    assert canonical.first_difference(ours, want, name) is None
    what_litdata_read = json.loads((expected.fixture_dir(name) / "litdata-read.json").read_text())
    assert canonical.first_difference(ours, what_litdata_read["getitem"], name) is None
    assert snapshot(expected.fixture_dir(name)) == before  # read in place, never modified


def test_fixtures_cover_litdatas_layouts():
    formats = set()
    levels = set()
    for name in expected.FIXTURES:
        config = json.loads((expected.fixture_dir(name) / "index.json").read_text())["config"]
        formats.update(f.split(":")[0] for f in config["data_format"])
        levels.add((config["compression"], config.get("compression_level")))
    assert {
        "int",
        "float",
        "bool",
        "str",
        "bytes",
        "numpy",
        "no_header_numpy",
        "tensor",
        "no_header_tensor",
        "pickle",
        "pil",
        "jpeg",
        "image",
        "file",
        "text",
        "json",
    } <= formats
    assert {("zstd", "batch"), ("zstd", "sample"), ("zstd", None), ("zstd:7", None)} <= levels
