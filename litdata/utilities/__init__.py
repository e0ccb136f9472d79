"""LitData's ``litdata.utilities`` import paths, for code written against LitData."""
