"""The epoch: which items each rank's workers read, in which order, and what the ranks agree on.

The plan (``plan``) is a pure function of the dataset's regions (``regions``, chosen by
``subsets``), the topology (``topology``: rank, world, worker), the seed and the shuffle
(``shuffles``); ``schedule`` drives mixture weights by training position, and ``agreement``
checks that the ranks read the same way before the first batch.
"""
