"""Discovery, manifests, config loading and validation, the package graph."""

__all__: list[str] = []
