"""The local chunk cache: where chunks that cannot be read in place become local plain files."""
