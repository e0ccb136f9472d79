"""Run by the real LitData (``LITDATA_PEER_PYTHON``) against an S3 server.

s3_with_litdata.py read URL ENDPOINT     prints the samples as JSON lines, streamed
s3_with_litdata.py write URL ENDPOINT N  optimize()s N samples {"id", "name", "x"} there
"""

import json
import sys

import numpy as np

import litdata as ld


def sample(i):
    return {"id": i, "name": f"n{i}", "x": np.full(4, i, dtype=np.float32)}


if __name__ == "__main__":
    action, url, endpoint = sys.argv[1:4]
    options = {
        "endpoint_url": endpoint,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "region_name": "us-east-1",
    }
    if action == "write":
        ld.optimize(
            sample,
            list(range(int(sys.argv[4]))),
            url,
            chunk_size=10,
            num_workers=2,
            storage_options=options,
        )
    else:
        dataset = ld.StreamingDataset(url, storage_options=options, shuffle=True)
        loader = ld.StreamingDataLoader(dataset, batch_size=7, num_workers=2)
        for batch in loader:
            for i, name, x in zip(
                batch["id"].tolist(), batch["name"], batch["x"].tolist(), strict=True
            ):
                print(json.dumps({"id": i, "name": name, "x": x}))
