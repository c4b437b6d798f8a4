"""`vx docs <query>`: sections of the shipped manual, ranked, in text and in JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from tests.conftest import REPO

from vx.manual.search import Section, search, sections

SCHEMA = json.loads((REPO / "schemas" / "docs.json").read_text())


def test_a_page_is_cut_at_its_headings_but_not_inside_code():
    page = "# Top\nintro\n## `vx run`\n```sh\n# not a heading\n```\nbody\n"
    assert sections("cli", page) == [
        Section("cli", "Top", "top", "intro"),
        Section("cli", "vx run", "vx-run", "```sh\n# not a heading\n```\nbody"),
    ]


def test_a_heading_hit_outranks_any_count_in_the_text():
    found = [
        Section("a", "Other", "other", "cache " * 50),
        Section("b", "The cache", "the-cache", "one mention"),
        Section("c", "Nothing", "nothing", "no match here"),
    ]
    hits = search(found, ["cache"], 5)
    assert [h.section.page for h in hits] == ["b", "a"]
    assert search(found, ["cache", "mention"], 5)[0].section.page == "b"
    assert search(found, ["cache"], 1)[0].url == "docs/b.md#the-cache"


def test_json_follows_the_schema_and_names_the_section(vx, tmp_path):
    result = vx(["docs", "output-logs", "--format", "json", "--limit", "2"], tmp_path).assert_ok()
    doc = result.json()
    Draft202012Validator(SCHEMA).validate(doc)
    assert doc["query"] == "output-logs"
    assert len(doc["hits"]) == 2
    assert doc["hits"][0]["heading"] == "--output-logs"
    assert doc["hits"][0]["url"] == "docs/cli.md#--output-logs"


def test_the_text_prints_each_section_under_its_page_and_heading(vx, tmp_path):
    out = vx(["docs", "output-logs", "--limit", "1"], tmp_path).assert_ok().out
    assert out.startswith("── cli > --output-logs  (docs/cli.md#--output-logs)\n\n")


def test_no_match_says_which_pages_were_searched(vx, tmp_path):
    out = vx(["docs", "zzzqqq"], tmp_path).assert_ok().out
    pages = ", ".join(sorted(p.stem for p in Path(REPO / "docs").glob("*.md")))
    assert out == f'no section of the manual ({pages}) holds every word of "zzzqqq"\n'
    empty = vx(["docs", "zzzqqq", "--format", "json"], tmp_path).assert_ok().json()
    Draft202012Validator(SCHEMA).validate(empty)
    assert empty["hits"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["docs"], "vx docs: name what to look for, e.g. vx docs cache key\n"),
        (["docs", "x", "--limit", "0"], "--limit must be at least 1, not 0 — see vx docs --help\n"),
    ],
)
def test_a_missing_query_or_a_bad_flag_is_a_usage_error(vx, tmp_path, args, message):
    result = vx(args, tmp_path).assert_code(1)
    assert result.err == message
