"""What a loader does besides iterating: name, skip and replay batches.

Each batch's sample ids (``provenance``), the per-rank log of them (``provenance_log``), and
skipping or replaying batches (``batches``).
"""
