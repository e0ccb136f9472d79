"""Resuming mid-epoch: the state a dataset records, and its checks.

What ``state_dict()`` records (``state``) and how a state is checked before use (``checks``),
against the dataset and the plan.
"""
