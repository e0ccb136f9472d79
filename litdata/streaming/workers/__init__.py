"""The worker transport: batches made in DataLoader workers and moved to the training process.

``batching`` makes and labels batches inside a worker, ``collate`` stacks them, ``transport``
chooses how they cross (``arena/``: shared-memory slots; ``direct_queue``: queues without
feeder threads), ``threads`` runs workers as threads of the training process instead, and
``interrupts`` and ``affinity`` look after the worker processes (Ctrl-C, NUMA placement).
"""
