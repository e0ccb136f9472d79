"""Run by the real LitData (``LITDATA_PEER_PYTHON``): keyed datasets, both ways.

keyed_with_litdata.py write DIR          optimizes 60 samples with key_fn (string ids)
keyed_with_litdata.py read DIR KEY...    prints each key's sample as a JSON line
"""

import json
import sys

import litdata as ld


def sample(i):
    return {"uid": f"user-{i}", "value": i}


def uid(item):
    return item["uid"]


if __name__ == "__main__":
    action, folder = sys.argv[1:3]
    if action == "write":
        ld.optimize(sample, list(range(60)), folder, chunk_size=16, num_workers=2, key_fn=uid)
    else:
        dataset = ld.StreamingDataset(folder)
        for key in sys.argv[3:]:
            print(json.dumps(dataset[key]))
