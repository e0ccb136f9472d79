"""Where bytes live and how they move: locations, checked backends, atomic files, uploads."""
