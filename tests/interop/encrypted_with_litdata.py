"""Run by the real LitData (``LITDATA_PEER_PYTHON``): Fernet-encrypted datasets, both ways.

encrypted_with_litdata.py write DIR KEYFILE LEVEL   writes 40 samples, saves the key file
encrypted_with_litdata.py read DIR KEYFILE          prints the samples as JSON lines
"""

import json
import sys

import litdata as ld
from litdata.utilities.encryption import FernetEncryption

PASSWORD = "interop password"

if __name__ == "__main__":
    action, folder, key_file = sys.argv[1:4]
    if action == "write":
        key = FernetEncryption(PASSWORD, level=sys.argv[4])
        samples = [{"id": i, "text": f"secret {i}" * 20} for i in range(40)]
        from litdata.streaming.cache import Cache

        cache = Cache(folder, chunk_size=10, encryption=key)
        for index, sample in enumerate(samples):
            cache[index] = sample
        cache.done()
        cache.merge()
        key.save(key_file)
    else:
        key = FernetEncryption.load(key_file, PASSWORD)
        dataset = ld.StreamingDataset(folder, encryption=key)
        for i in range(len(dataset)):
            print(json.dumps(dataset[i]))
