"""`hwnoise demo` as a new user meets it: a plain install without the extras, run in a checkout."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_demo_names_the_extra_that_brings_the_missing_extractors(monkeypatch):
    from hwnoise.demo import COMPARED, left_out_note

    for name in ("trafilatura", "readability"):
        monkeypatch.setitem(sys.modules, name, None)  # as after a plain `pip install .`
    note = left_out_note()
    assert note is not None
    assert all(m in note for m in COMPARED) and "pip install 'hwnoise[extractors]'" in note


def test_demo_says_nothing_when_the_extractors_are_there():
    from hwnoise.demo import left_out_note
    from hwnoise.extractors.external import available

    if not {"trafilatura", "readability"} <= set(available()):
        pytest.skip("the extractors extra is not installed")
    assert left_out_note() is None


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(),
                    reason="needs a git checkout")
@pytest.mark.parametrize("folder", ["hwnoise-demo", "hwnoise-evaluation"])
def test_default_output_folders_run_in_the_checkout_are_ignored(folder):
    # `hwnoise demo` and `hwnoise evaluate` without --out write these under the working folder
    res = subprocess.run(["git", "check-ignore", "-q", f"{folder}/report.json"], cwd=REPO)
    assert res.returncode == 0, f"{folder}/ would be left untracked in the checkout"


def _serve(*argv: str) -> subprocess.Popen:
    import signal

    # SIGINT as a terminal gives it: a run started in the background (nohup, CI) ignores it, and a
    # child would inherit that and never see the Ctrl-C the test sends
    return subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "demo", "--serve", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_demo_serve_serves_the_site_to_collect_from_until_stopped(stop, tmp_path):
    # a user trying `hwnoise collect --form URL` on the demo site from another shell, with the
    # command it prints: the URL on stdout, the form filled over real HTTP, and Ctrl-C (or kill)
    # ending it cleanly
    import re
    import signal

    import requests

    from hwnoise.cli import main
    from hwnoise.dataset import Dataset

    proc = _serve("--seed", "1")
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read()
        hint = "".join(proc.stderr.readline() for _ in range(3))
        words = re.search(r"printf 'q\\n(.*)\\n' > values.csv", hint).group(1).split("\\n")
        (tmp_path / "values.csv").write_text("q\n" + "\n".join(words) + "\n")
        command = hint.splitlines()[-1].split()
        assert command[:4] == ["hwnoise", "collect", "--form", url]
        assert main([*command[1:-1], str(tmp_path / "crawl"), "--values", str(tmp_path / "values.csv"),
                     "-q"]) == 0
        pages = list(Dataset(tmp_path / "crawl").pages())
        assert len(pages) == len(words) == 3 and all(b"<form" in p.html_path.read_bytes() for p in pages)
        proc.send_signal(getattr(signal, stop))
        assert proc.wait(timeout=60) == 0
        with pytest.raises(requests.ConnectionError):
            requests.get(url, timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in proc.stderr.read()


def test_demo_serve_on_a_port_in_use_says_so_in_one_line():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve("--port", str(port))
        try:
            out, err = proc.communicate(timeout=120)
        finally:  # serving after all (the port not taken): never left running
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 1 and out == ""
    assert f"127.0.0.1:{port}: cannot serve the demo site" in err and "Traceback" not in err


def test_demo_port_without_serve_is_refused():
    from hwnoise.cli import main

    assert main(["demo", "--port", "8080"]) != 0


def test_demo_with_an_unknown_classifier_is_refused_before_it_crawls(tmp_path, capsys):
    """``hwnoise demo --classifier bogus`` crawled the site, walked every page and exported ARFF
    (10 s of the default 100 submissions) before training said the name was unknown, leaving a
    folder of a run that could not end. It is refused first, writing nothing."""
    from hwnoise.cli import main

    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--classifier", "bogus", "--submissions", "4", "-q"]) == 1
    err = capsys.readouterr().err
    assert "unknown classifier 'bogus'" in err and "demo site:" not in err, err
    assert not out.exists() or not any(out.iterdir())
