"""Chunk bytes: the file layout, compressed framings, checksums, codecs and chunk file names."""
