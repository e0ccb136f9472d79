"""litdata's native format (LitData's chunks), its machinery in one room.

The bytes of a chunk live in the kernel (``core/chunks/``: layout, framing, checksums, names),
``index.json`` and the compact index's layout in ``core/index.py`` and ``core/compact.py``; the
format's adapter in ``plugins/formats/chunks/``, and the item encodings in
``plugins/item_loaders/``. Here: writing chunks (``writer``), one chunk memory-mapped
(``chunk_file``), per-writer indexes and their merge (``rank_indexes``), completing an unmerged
dataset (``completion``), opening through the compact index (``compact_index``), the keys
sidecar (``keys``), matching a key and decrypting (``encrypted``), and one writer per output
(``output_lock``).
"""
