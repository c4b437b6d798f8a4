"""Input hashing, keys, the artifact store and its SQLite index."""

__all__: list[str] = []
