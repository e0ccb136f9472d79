"""Loader checks run alike by LitData 0.2.76 and litdata: ``python loader_events.py DATA LOG W``.

Prints ``{"both_profilers": <exception type or null>, "batches": n}``: whether
``profile_batches`` with ``profile_cprofile`` is refused, and how many batches an epoch of
``DATA`` in batches of 4 with ``W`` workers has, traced at the ``batch`` level into ``LOG``.
"""

import json
import sys

import litdata as ld
from litdata.debugger import enable_tracer


def main(data, log, workers):
    out = {}
    try:
        ld.StreamingDataLoader(
            ld.StreamingDataset(data),
            batch_size=4,
            num_workers=1,
            profile_batches=5,
            profile_cprofile=True,
        )
        out["both_profilers"] = None
    except Exception as error:  # the type is what is compared
        out["both_profilers"] = type(error).__name__
    enable_tracer(level="batch", log_file=log)
    loader = ld.StreamingDataLoader(ld.StreamingDataset(data), batch_size=4, num_workers=workers)
    out["batches"] = sum(1 for _ in loader)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
