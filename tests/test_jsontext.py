"""JSON a person gave: every way it can be wrong is one error naming the file and the line."""
from __future__ import annotations

import pytest

from hwnoise.forms.formpage import FormError, read_values
from hwnoise.forms.submissions import SubmissionsError, read_submissions
from hwnoise.jsontext import parse_json, read_json_file


class Bad(Exception):
    pass


@pytest.mark.parametrize("text, at_line, says", [
    ('{"a": 1,\n "b": }', False, "f.json:2: not valid JSON: Expecting value (column 7)"),
    ('{"a": 1,\n "b": }', True, "f.json: not valid JSON: Expecting value (column 7)"),
    ("[" * 100_000 + "]" * 100_000, False, "f.json: JSON nested too deeply"),
    (b'"\xff\xfe\xfd"', False, "f.json: not JSON text in UTF-8, UTF-16 or UTF-32 (invalid start byte at byte 1)"),
    ("1" * 5000, False, "f.json: not valid JSON (Exceeds the limit"),
])
def test_what_is_wrong_is_said_with_the_place(text, at_line, says):
    with pytest.raises(Bad) as info:
        parse_json(text, "f.json", Bad, at_line=at_line)
    assert str(info.value).startswith(says)


def test_json_in_any_encoding_json_allows():
    for encoding in ("utf-8", "utf-8-sig", "utf-16", "utf-32"):
        assert parse_json('{"é": [1]}'.encode(encoding), "f.json", Bad) == {"é": [1]}


def test_a_file_that_cannot_be_read(tmp_path):
    with pytest.raises(Bad, match=r"missing.json: cannot read it: No such file"):
        read_json_file(tmp_path / "missing.json", Bad)
    (tmp_path / "ok.json").write_text('{"a": 1}')
    assert read_json_file(tmp_path / "ok.json", Bad) == {"a": 1}


@pytest.mark.parametrize("content, says", [
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),  # a RecursionError traceback before
    ('{"q": "a"}\n{"q": ' + "[" * 100_000 + "\n", ":2: JSON nested too deeply"),
    ('[{"q": "a"}, 1]', "the JSON array must hold objects"),
])
def test_a_values_file_of_bad_json(tmp_path, content, says):
    path = tmp_path / "values.json"
    path.write_text(content)
    with pytest.raises(FormError, match=says):
        read_values(path)


def test_a_submissions_line_nested_too_deeply(tmp_path):
    path = tmp_path / "subs.jsonl"
    path.write_text('{"url": "http://a.example/?q=1"}\n{"url": ' + "[" * 100_000 + "\n")
    with pytest.raises(SubmissionsError, match=r"subs.jsonl:2: JSON nested too deeply"):
        read_submissions(path)
