"""One ``ParallelStreamingDataset`` resume scenario, run alike by LitData 0.2.76 and by litdata.

``python parallel_resume.py ROOT LENGTH WORKERS STOP`` zips ``ROOT/a`` and ``ROOT/b`` (each
sample ``{"id": int}``) with ``length`` ``none``, an int or ``inf``, in batches of 2, and prints
one JSON object of ``[[a_id, b_id], ...]`` batches: two whole epochs of one loader, the first
``STOP`` batches of another, what a third loader resumed from that state yields (and then its
next epoch), and what one resumed from a state saved at the end of an epoch yields. Only the
public API both libraries share.
"""

import itertools
import json
import sys

import litdata as ld


def _pairs(batch):
    first, second = batch
    return [[int(a), int(b)] for a, b in zip(first["id"], second["id"], strict=False)]


def _loader(root, length, workers):
    datasets = [ld.StreamingDataset(f"{root}/a"), ld.StreamingDataset(f"{root}/b")]
    return ld.StreamingDataLoader(
        ld.ParallelStreamingDataset(datasets, length=length), batch_size=2, num_workers=workers
    )


def _take(loader, count=None):
    return [_pairs(batch) for batch in itertools.islice(loader, count)]


def main(root, length, workers, stop):
    length = None if length == "none" else float("inf") if length == "inf" else int(length)
    infinite = length == float("inf")
    out = {}
    first = _loader(root, length, workers)
    out["epoch"] = _take(first, 12 if infinite else None)
    if not infinite:
        out["next_epoch"] = _take(first)
    head = _loader(root, length, workers)
    out["head"] = [_pairs(batch) for _, batch in zip(range(stop), head, strict=False)]
    state = head.state_dict()
    resumed = _loader(root, length, workers)
    resumed.load_state_dict(state)
    out["resumed"] = _take(resumed, 6 if infinite else None)
    if not infinite:
        out["resumed_next"] = _take(resumed)
        whole = _loader(root, length, workers)
        _take(whole)
        after = _loader(root, length, workers)
        after.load_state_dict(whole.state_dict())
        out["after_end"] = _take(after)
        out["after_end_next"] = _take(after)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
