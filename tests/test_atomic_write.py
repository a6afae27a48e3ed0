"""Files written atomically get the mode a plain ``open()`` would give them (mkstemp's 0600
would hide a user's models and reports from the group), and a replaced file keeps its own."""
from __future__ import annotations

import errno
import os
import stat

import pytest

from hwnoise.dataset import _UMASK, atomic_write_text


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    atomic_write_text(tmp_path / "model.json", "{}")
    assert _mode(tmp_path / "model.json") == _mode(plain) == 0o666 & ~_UMASK
    assert (tmp_path / "model.json").read_text() == "{}"


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic_write_text(path, "new")
    assert _mode(path) == 0o640 and path.read_text() == "new"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full (a device whose writes fail: disk full)")
def test_a_full_disk_names_the_file_it_could_not_write(capsys):
    # 'No space left on device' names no file: 'hwnoise collect' on a full disk ended in a traceback
    from hwnoise.dataset import append_jsonl

    with pytest.raises(OSError) as caught:
        append_jsonl("/dev/full", {"submission": "x"})
    assert caught.value.filename == "/dev/full" and caught.value.errno == errno.ENOSPC
    # which the command line says in one line, as it says any OSError naming its file


def test_a_folder_where_the_file_goes_is_named_not_the_temp_file(tmp_path):
    """The rename onto a folder failed naming the temp file ('.report.json.PID@HOST.x.tmp: Is a
    directory'), a file the user never made and that was gone already."""
    (tmp_path / "report.json").mkdir()
    with pytest.raises(OSError) as info:
        atomic_write_text(tmp_path / "report.json", "{}")
    assert info.value.filename == str(tmp_path / "report.json") and info.value.errno == errno.EISDIR
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temp file left
