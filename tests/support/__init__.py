"""Helpers shared by the tests: real servers and clusters, fixtures' data, processes, waiting.

- ``servers``: moto (S3), gcp-storage-emulator and azurite, one per test session, each behind a
  ``tcp_gate`` a test can close; ``hub_server``: a local Hugging Face Hub.
- ``link_proxy`` (with ``link_http``, ``link_copies``): a realistic link to S3, an HTTP proxy in
  front of moto adding latency, bandwidth caps, ``503 SlowDown`` and resets; ``links``: its
  fixtures (``link_server``, ``link``). Standard library only, so ``bench/`` imports it too.
- ``clusters`` and ``cluster_cases``: one Dask and one Ray cluster per session.
- ``helpers``: waiting for a condition, the process tree of a process, file snapshots.
- ``fns``: picklable functions for ``optimize`` and ``map`` workers.
- ``mds_fixtures``, ``parquet_files``: datasets written by other tools.
- ``fault_table``: the table of ``make faults``.
"""
