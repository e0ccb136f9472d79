"""Hugging Face Hub datasets: ``index_hf_dataset`` and ``optimize_hf``.

Their files stream as Parquet through the ``hf`` storage backend.
"""
