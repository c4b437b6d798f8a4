"""`vx completions`: the verb, the shell scripts it prints and the table they complete from."""

__all__: list[str] = []
