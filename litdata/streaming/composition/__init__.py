"""Datasets made of datasets: weighted mixtures and zips, and what they share.

``CombinedStreamingDataset`` mixes datasets by weight, ``ParallelStreamingDataset`` reads them
side by side.
"""
