"""The bounded readers of :mod:`debatekit.files`: every malformed file is one FileMistake naming file and line."""

from __future__ import annotations

import pytest

from debatekit import files
from debatekit.files import FileMistake


@pytest.mark.parametrize(
    ("name", "data", "read", "line", "reason"),
    [
        ("deep.json", b"[" * 100000 + b"]" * 100000, files.read_json, 1, "nested deeper"),
        ("deep70.json", b"[\n" + b"[" * 70 + b"]" * 70 + b"]", files.read_json, 2, "nested deeper"),
        ("cut.json", b'{"a":\n[[1,2], 3\n', files.read_json, 3, "not valid JSON"),
        ("bytes.json", b'{"a": "\xff"}', files.read_json, 1, "not UTF-8"),
        ("digits.json", b"1" * 5000, files.read_json, 1, "not valid JSON"),
        ("cut.jsonl", b'{"a": 1}\n\n{"b": 2}\n{"c": [1, ', files.read_jsonl, 4, "not valid JSON"),
        ("open.jsonl", b'{"a": 1}\n{"b": 2}\n{"c":\n{"d": 4}\n', files.read_jsonl, 3, "not valid JSON"),
        ("deep.jsonl", b'{"a": 1}\n' + b"[" * 100000, files.read_jsonl, 2, "nested deeper"),
        ("list.jsonl", b'{"a": 1}\n[1]\n', files.read_jsonl, 2, "expected a JSON object"),
        ("deep.toml", b"a = " + b"[" * 100000 + b"]" * 100000, files.read_toml, 1, "nested deeper"),
        ("inline.toml", b"x = 1\na = " + b"{x=" * 100000 + b"1" + b"}" * 100000, files.read_toml, 2, "nested"),
        ("dotted.toml", b"a." * 1000 + b"b = 1", files.read_toml, 1, "nested deeper"),
        ("cut.toml", b"a = 1\nb = [\n", files.read_toml, 3, "not valid TOML"),
        ("bad.toml", b"a = 1\nb = = 2\n", files.read_toml, 2, "not valid TOML"),
    ],
)
def test_a_malformed_file_is_one_mistake_naming_its_file_and_line(tmp_path, name, data, read, line, reason):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(FileMistake) as caught:
        list(read(path)) if read is files.read_jsonl else read(path)
    assert (caught.value.file, caught.value.line) == (str(path), line)
    assert str(caught.value).startswith(f"{path}:{line}: {reason}")
    assert "\n" not in str(caught.value)


def test_a_file_past_the_caps_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b'"' + b"x" * 2000 + b'"')
    with pytest.raises(FileMistake, match="larger than 1000 bytes"):
        files.read_json(path, limit=1000)
    lines = tmp_path / "long.jsonl"
    lines.write_bytes(b'{"a": 1}\n{"b": "' + b"x" * 2000 + b'"}\n')
    with pytest.raises(FileMistake, match=r"long.jsonl:2: line longer than 1000 bytes"):
        list(files.read_jsonl(lines, line_limit=1000))
    with pytest.raises(FileMistake, match="cannot read it"):
        files.read_json(tmp_path / "absent.json")


def test_well_formed_files_read_back_exactly(tmp_path):
    (tmp_path / "a.json").write_text('{"a": [1, {"b": null}]}')
    (tmp_path / "a.jsonl").write_text('{"a": 1}\n\n{"b": [2]}\n')
    (tmp_path / "a.toml").write_text('a = 1\n[t]\nb = ["x"]\n')
    assert files.read_json(tmp_path / "a.json") == {"a": [1, {"b": None}]}
    assert list(files.read_jsonl(tmp_path / "a.jsonl")) == [(1, {"a": 1}), (3, {"b": [2]})]
    assert files.read_toml(tmp_path / "a.toml") == {"a": 1, "t": {"b": ["x"]}}
    nested = "[" * files.MAX_DEPTH + "]" * files.MAX_DEPTH
    assert files.parse_json(nested, "x") is not None
