"""The venue: tournaments over many tables (formats/ holds the pure tournament formats)."""
