"""The output directories a build script writes: its framework's, or what its flags name."""

from __future__ import annotations

from vx.adopt.script_words import program, read_line


def outdir(command: str) -> tuple[str, ...] | None:
    """The output globs a build command's framework writes, or what it names as its out dir;
    None when nothing says."""
    line = read_line(command)
    made: set[str] = set()
    cleaned: list[str] = []
    for words in line.segments:
        name, args = program(words)
        verbs = [a for a in args if not a.startswith("-")]
        verb = verbs[0] if verbs else ""
        framework = _framework(name, verb)
        if framework is not None:
            return framework
        for i, arg in enumerate(args):
            if arg in ("--outDir", "--out-dir", "-d", "--outdir", "--out") and i + 1 < len(args):
                return (f"{_strip(args[i + 1])}/**",)
            for flag in ("--outDir=", "--out-dir=", "--outdir="):
                if arg.startswith(flag):
                    return (f"{_strip(arg[len(flag) :])}/**",)
        if name in ("rimraf", "del-cli", "del", "rm", "shx"):
            cleaned.extend(_strip(a) for a in args if not a.startswith("-") and a != "rm")
        if name == "mkdir":
            made.update(_strip(a) for a in args if not a.startswith("-"))
    kept = [c for c in cleaned if c and c not in made and "*" not in c and c != "."]
    return tuple(f"{c}/**" for c in kept) or None


def _strip(path: str) -> str:
    return path.removeprefix("./").rstrip("/")


def _framework(name: str, verb: str) -> tuple[str, ...] | None:
    if name == "next" and verb == "build":
        return (".next/**", "!.next/cache/**")
    if name in ("nuxt", "nuxi") and verb in ("build", "generate"):
        return (".output/**",)
    if name in ("remix", "react-router", "react-scripts", "docusaurus") and verb == "build":
        return ("build/**",)
    if name == "gatsby" and verb == "build":
        return ("public/**",)
    if (name == "storybook" and verb == "build") or name == "build-storybook":
        return ("storybook-static/**",)
    return None
