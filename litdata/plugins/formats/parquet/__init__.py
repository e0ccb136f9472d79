"""``parquet``: folders of Parquet files, streamed without converting them."""
