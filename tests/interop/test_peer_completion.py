"""Per-writer indexes merged on open, and ``walk``, next to LitData 0.2.76's.

Runs when ``LITDATA_PEER_PYTHON`` points at the peers' python (``bench/peers.py``).
"""

import json
import os
import shutil

from peer import MARKS, last_json, run_ours, run_peer

import litdata as ld

pytestmark = MARKS

#: LitData's own writer, three ranks, and no merge: what a run that never merged leaves.
WRITE_UNMERGED = """
import os, sys
from litdata.streaming.writer import BinaryWriter
for rank in range(3):
    os.environ["DATA_OPTIMIZER_GLOBAL_RANK"] = str(rank)
    writer = BinaryWriter(sys.argv[1], chunk_size=3)
    for i in range(7):
        writer[i] = {"id": rank * 100 + i}
    writer.done()
"""
#: Open the dataset, read every sample; print them and the files left in the folder.
READ = """
import json, os, sys
import litdata as ld
dataset = ld.StreamingDataset(sys.argv[1])
print(json.dumps({"ids": [s["id"] for s in dataset], "files": sorted(os.listdir(sys.argv[1]))}))
"""
WALK = """
import json, os, sys
import litdata as ld
print(json.dumps([[d, sorted(s), sorted(f)] for d, s, f in ld.walk(sys.argv[1])]))
"""


def _ours(code, *argv, cwd):
    return last_json(run_ours("-c", code, *argv, cwd=cwd))


def _theirs(code, *argv, cwd):
    return last_json(run_peer("-c", code, *argv, cwd=cwd))


def test_both_complete_litdatas_unmerged_dataset_alike_and_read_each_others_index(tmp_path):
    run_peer("-c", WRITE_UNMERGED, tmp_path / "written", cwd=tmp_path)
    assert "index.json" not in os.listdir(tmp_path / "written")
    for name in ("theirs", "ours"):
        shutil.copytree(tmp_path / "written", tmp_path / name)
    theirs = _theirs(READ, tmp_path / "theirs", cwd=tmp_path)
    ours = _ours(READ, tmp_path / "ours", cwd=tmp_path)
    ours["files"].remove("index.compact")  # ours publishes its compact index beside index.json
    assert ours == theirs
    assert theirs["ids"] == [rank * 100 + i for rank in range(3) for i in range(7)]
    assert theirs["files"][-1] == "index.json"
    assert _theirs(READ, tmp_path / "ours", cwd=tmp_path)["ids"] == theirs["ids"]
    assert [s["id"] for s in ld.StreamingDataset(str(tmp_path / "theirs"))] == theirs["ids"]


def test_walk_lists_what_litdatas_lists_in_sorted_breadth_first_order(tmp_path):
    root = tmp_path / "tree"
    for folder in ("zeta", "alpha", "mid/b", "mid/a", "beta/x/y"):
        (root / folder).mkdir(parents=True)
        for name in ("f2", "f1"):
            (root / folder / name).touch()
    (root / "top.txt").touch()
    theirs = _theirs(WALK, root, cwd=tmp_path)
    ours = _ours(WALK, root, cwd=tmp_path)
    assert sorted(map(json.dumps, ours)) == sorted(map(json.dumps, theirs))
    assert [os.path.relpath(folder, root) for folder, _, _ in ours] == [
        ".",
        "alpha",
        "beta",
        "mid",
        "zeta",
        "beta/x",
        "mid/a",
        "mid/b",
        "beta/x/y",
    ]
