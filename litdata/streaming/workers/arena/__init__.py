"""The arena: batches through shared memory, without pickling the payload.

Per-worker slots (``slots``), where each leaf lies in one (``layout``), and several batches to
a message, back in torch's order (``messages``).
"""
