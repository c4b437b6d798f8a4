"""Reading scripts as shell: groups, servers and watchers, other members' work, output dirs."""

from __future__ import annotations

import pytest

from vx.adopt import script_words as sw
from vx.adopt.script_outputs import outdir

SCRIPTS = frozenset({"build", "compile", "lint", "test", "start", "web", "api", "build:a"})


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("npm run compile", "compile"),
        ("pnpm compile", "compile"),
        ("pnpm run compile", "compile"),
        ("yarn compile", "compile"),
        ("bun run compile", "compile"),
        ("npm test", "test"),
        ("npm t", "test"),
        ("pnpm test", "test"),
        ("npm start", "start"),
        ("bun test", None),  # Bun's own test runner
        ("bun build", None),  # Bun's bundler
        ("pnpm install", None),
        ("yarn check", None),
        ("npm run compile -- --watch", None),  # arguments make it a command
        ("npm run compile && npm run lint", None),
        ("cross-env A=1 npm run compile", None),
        ("npm run missing", None),
        ("npm compile", None),  # npm runs only its shortcuts without `run`
        ("run compile", "compile"),  # Yarn 2+'s shell builtin
        ("run compile --watch", None),
    ],
)
def test_delegate(command: str, target: str | None) -> None:
    assert sw.delegate(command, SCRIPTS) == target


@pytest.mark.parametrize(
    ("command", "serves"),
    [
        ("vite", True),
        ("vite --port 3000", True),
        ("vite build", False),
        ("next dev", True),
        ("next start", True),
        ("netlify dev", True),
        ("pnpm dlx --package netlify-cli netlify dev", True),
        ("tsc -w", True),
        ("tsc -b", False),
        ("rollup -c -w", True),
        ("jest --watch", True),
        ("nodemon src/index.js", True),
        ("serve dist", True),
        ("http-server .", True),
        ("cross-env PORT=1 next dev", True),
        ("node build.js", False),
        ("pnpm start", False),  # a manager's run: what it runs decides
        # Runners whose first argument is a script or command: the tests end, so they do too.
        ("start-server-and-test start http://localhost:3000 cy", False),
        ("npx start-server-and-test dev 3000 test:e2e", False),
        ("server-test serve 8080 cy:run", False),
        ("concurrently dev api", False),
        ("wait-on tcp:3000", False),
        ("run-p start api", False),
    ],
)
def test_watches_or_serves(command: str, *, serves: bool) -> None:
    assert sw.watches_or_serves(sw.read_line(command).segments[0]) is serves


def test_a_backgrounded_server_is_marked() -> None:
    line = sw.read_line("vite & node e2e.js")
    assert line.background == (True, False)


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("run-p web api", ("web", "api")),
        ("npm-run-all build:*", ("build:a",)),
        ('concurrently "npm:web" "npm:api"', ("web", "api")),
        ('concurrently "pnpm lint" "pnpm test"', ("lint", "test")),
        ("pnpm run lint", ("lint",)),
    ],
)
def test_scripts_run(command: str, runs: tuple[str, ...]) -> None:
    assert sw.scripts_run(sw.read_line(command).segments[0], SCRIPTS) == runs


MEMBERS = ("packages/a", "packages/b", "apps/web")


@pytest.mark.parametrize(
    ("command", "here", "part"),
    [
        ("pnpm -r build", ".", True),
        ("pnpm --filter a build", ".", True),
        ("pnpm -F a build", ".", True),
        ("pn -r build", ".", True),
        ("yarn workspace a build", ".", True),
        ("yarn workspaces foreach -A run build", ".", True),
        ("npm run build --workspaces", ".", True),
        ("npm run build -w a", ".", True),
        ("bun run --filter '*' build", ".", True),
        ("turbo run build", ".", True),
        ("npx nx run-many -t build", ".", True),
        ("lerna run build", ".", True),
        ("cd packages/a", ".", True),
        ("cd packages", ".", True),
        ("cd test", ".", False),
        ("pnpm -C ../b run build", "packages/a", True),
        ("pnpm -C src run build", "packages/a", False),
        ("npm --prefix ../../packages/a run build", "apps/web", True),
        ("yarn node -r ./setup.ts", ".", False),
        ("pnpm exec eslint -r .", ".", False),
        ("eslint .", ".", False),
        ("pnpm -w add x", ".", False),
    ],
)
def test_workspace_part(command: str, here: str, *, part: bool) -> None:
    words = sw.read_line(command).segments[0]
    assert (sw.workspace_part(words, MEMBERS, here) is not None) is part


@pytest.mark.parametrize(
    ("command", "outputs"),
    [
        ("next build", (".next/**", "!.next/cache/**")),
        ("nuxt build", (".output/**",)),
        ("remix build", ("build/**",)),
        ("react-scripts build", ("build/**",)),
        ("docusaurus build", ("build/**",)),
        ("gatsby build", ("public/**",)),
        ("storybook build", ("storybook-static/**",)),
        ("build-storybook", ("storybook-static/**",)),
        ("tsc -p . --outDir lib", ("lib/**",)),
        ("babel src --out-dir ./es", ("es/**",)),
        ("del-cli distribution && tsc", ("distribution/**",)),
        ("rimraf lib types && tsc", ("lib/**", "types/**")),
        ("rimraf out && mkdir out && cp a out", None),
        ("tsc -b", None),
    ],
)
def test_outdir(command: str, outputs: tuple[str, ...] | None) -> None:
    assert outdir(command) == outputs


def test_npm_variables() -> None:
    assert sw.npm_variables("echo $npm_package_version ${npm_lifecycle_event} $HOME") == (
        "npm_package_version",
        "npm_lifecycle_event",
    )


@pytest.mark.parametrize(
    ("name", "watches"),
    [("dev", True), ("build:watch", True), ("watch", True), ("test-watch", True),
     ("build", False), ("watchman", False), ("preview", True)],
)  # fmt: skip
def test_watch_name(name: str, *, watches: bool) -> None:
    assert sw.watch_name(name) is watches
