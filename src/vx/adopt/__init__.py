"""The engines of `vx init` and `vx migrate`: drafting vx configs from what a workspace has."""

__all__: list[str] = []
