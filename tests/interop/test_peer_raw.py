"""Raw files: the same items as LitData 0.2.76's ``StreamingRawDataset``, and a shared file list.

Runs when ``LITDATA_PEER_PYTHON`` points at the peers' python (``bench/peers.py``). Both
libraries keep the folder's listing as ``<cache_dir>/<md5 of the folder>/index.json.zstd``;
each reuses the other's (a file added after the listing stays unseen until it is recomputed).
"""

import hashlib
import json
import os

from peer import MARKS, run_peer

import litdata as ld

pytestmark = MARKS

READ = """
import hashlib, json, sys
from litdata import StreamingRawDataset
dataset = StreamingRawDataset(sys.argv[1], cache_dir=sys.argv[2])
items = dataset.__getitems__(list(range(len(dataset))))
print(json.dumps([hashlib.sha256(item).hexdigest() for item in items]))
"""


def _litdata(tmp_path, folder, cache):
    out = run_peer("-c", READ, folder, cache, cwd=tmp_path)
    return json.loads(out.splitlines()[-1])


def _folder(root, count):
    for index in range(count):
        folder = root / f"class{index % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{index:03d}.bin").write_bytes(os.urandom(50 + index))
    return root


def _ours(folder, cache):
    dataset = ld.StreamingRawDataset(folder, cache_dir=str(cache))
    return [hashlib.sha256(item).hexdigest() for item in dataset.__getitems__(range(len(dataset)))]


def test_litdata_reads_our_file_list_and_the_same_items(tmp_path):
    folder = _folder(tmp_path / "data", 20)
    ours = _ours(folder, tmp_path / "cache")
    (folder / "class0" / "late.bin").write_bytes(b"added after the listing")
    theirs = _litdata(tmp_path, folder, tmp_path / "cache")
    assert theirs == ours  # our list (20 files), in the same order


def test_we_read_litdatas_file_list(tmp_path):
    folder = _folder(tmp_path / "data", 15)
    theirs = _litdata(tmp_path, folder, tmp_path / "cache")
    (folder / "class1" / "late.bin").write_bytes(b"added after the listing")
    assert _ours(folder, tmp_path / "cache") == theirs
    fresh = ld.StreamingRawDataset(folder, cache_dir=str(tmp_path / "cache"), recompute_index=True)
    assert len(fresh) == 16
