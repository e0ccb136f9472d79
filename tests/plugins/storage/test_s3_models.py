"""Every S3 filesystem of a process (and of its forked workers) shares one botocore loader."""

from __future__ import annotations

import gc
import os

import botocore

from litdata.plugins.storage.s3 import S3Storage

OPTIONS = {
    "endpoint_url": "http://127.0.0.1:9",
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
    "region_name": "us-east-1",
}


def _loader_of(storage: S3Storage) -> object:
    storage.fs.connect()  # makes the client: no request goes out
    return storage.fs.session.get_component("data_loader")


def test_sessions_share_the_parsed_models_across_filesystems_and_forks():
    first, second = S3Storage(OPTIONS), S3Storage(OPTIONS)
    loader = _loader_of(first)
    assert _loader_of(second) is loader
    assert loader._cache  # the S3 model and endpoint rules, parsed once
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a DataLoader worker: its own filesystem, the parent's parsed models
        child = S3Storage(OPTIONS)
        os.write(write, b"1" if _loader_of(child) is loader else b"0")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    assert answer == b"1"


def test_model_files_are_parsed_without_garbage_collections():
    loader = _loader_of(S3Storage(OPTIONS))
    rules = os.path.join(os.path.dirname(botocore.__file__), "data", "s3", "2006-03-01")
    path = os.path.join(rules, "endpoint-rule-set-1")
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    threshold = gc.get_threshold()
    gc.callbacks.append(seen)
    gc.set_threshold(1)  # a collection every allocation, while collecting
    try:
        parsed = loader.file_loader.load_file(path)
        during = len(collections)
        [object() for _ in range(10)]  # collecting again once parsed
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(seen)
    assert parsed["version"]  # the endpoint rules, parsed
    assert during == 0
    assert gc.isenabled()
    assert len(collections) > during
