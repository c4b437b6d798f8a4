"""The block-YAML reader on the shapes pnpm and Berry write."""

from __future__ import annotations

import pytest

from vx.lockfiles.model import LockfileError
from vx.lockfiles.yamlish import flow_map, parse

DOC = """# a comment
lockfileVersion: '9.0'

settings:
  autoInstallPeers: true

'@scope/key': "double \\"quoted\\""
plain: {a: 1,
  b: 2}
list:
  - one
  - 'two'
nested:
  'it''s':
    deep: value
"""


def test_parse_shapes() -> None:
    tree, sections = parse(DOC, "x.yaml")
    assert tree["lockfileVersion"] == "9.0"
    assert tree["settings"] == {"autoInstallPeers": "true"}
    assert tree["@scope/key"] == 'double "quoted"'
    assert tree["plain"] == "{a: 1, b: 2}"
    assert tree["list"] == ["one", "two"]
    assert tree["nested"] == {"it's": {"deep": "value"}}
    assert sections["settings"] == "settings:\n  autoInstallPeers: true"
    assert sections["plain"] == "plain: {a: 1,\n  b: 2}"


@pytest.mark.parametrize(
    ("text", "flow"),
    [
        ("{integrity: sha512-x}", {"integrity": "sha512-x"}),
        (
            "{tarball: 'https://h/x.tgz', integrity: y}",
            {"tarball": "https://h/x.tgz", "integrity": "y"},
        ),
        ("{}", {}),
        ("plain", {}),
    ],
)
def test_flow_map(text: str, flow: dict[str, str]) -> None:
    assert flow_map(text) == flow


@pytest.mark.parametrize("text", ["key without colon\n", "'unterminated: x\n"])
def test_damage_is_a_lockfile_error(text: str) -> None:
    with pytest.raises(LockfileError, match=r"x\.yaml:1"):
        parse(text, "x.yaml")
