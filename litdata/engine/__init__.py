"""The engine: what turns the kernel's formats into bytes read and written.

Its rooms: ``boundary/`` (every plugin resolved and checked where it enters, URLs to storage
backends), ``items/`` (item encoding), ``cache/`` (remote chunks made local: cache, prefetch,
parted downloads), ``native/`` (the native format's writer, indexes, keys and output lock);
and single modules for the link (``throttle``, ``link``, ``upload``) and for opening and
reading a dataset in any format (``opening``, ``reader``, ``ranged``). It imports the kernel
(``litdata.core``) and resolves plugins through its registries; nothing below imports it.
"""
