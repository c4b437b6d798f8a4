"""The run side of the remote cache: the local cache layered over a remote one, and which
remote hits may leave their outputs remote (`--download`)."""

__all__: list[str] = []
