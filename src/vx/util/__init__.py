"""Small standard-library helpers with one job each."""

__all__: list[str] = []
