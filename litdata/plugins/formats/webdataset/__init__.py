"""``webdataset``: folders of WebDataset ``.tar`` shards, and ``iter_webdataset_tar``."""
