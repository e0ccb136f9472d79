"""``mds``: MosaicML Streaming datasets, read as they are."""
