"""scripts/check_pins.py: the pinned onnxruntime-directml wheels against a PEP 503 index, served
here from a folder (no network)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ort_layouts.engine.dml.stack import ORT_DIRECTML_VERSION, WHEEL_SHA256

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_pins.py"


def _load():
    spec = importlib.util.spec_from_file_location("check_pins", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_pins = _load()


def _page(digests: dict[str, str]) -> str:
    links = "\n".join(f'<a href="https://files.example/packages/ab/{name}#sha256={digest}" '
                      f'data-requires-python="&gt;=3.10">{name}</a><br/>' for name, digest in digests.items())
    return f"<!DOCTYPE html><html><body><h1>Links for onnxruntime-directml</h1>\n{links}\n</body></html>"


def test_the_wheel_names_are_the_win_amd64_wheels_setup_downloads() -> None:
    # install.py's table: cp312 for the newest wheel, cp310 for the older ones
    assert check_pins.wheel_name("1.13.1") == "onnxruntime_directml-1.13.1-cp310-cp310-win_amd64.whl"
    assert (check_pins.wheel_name(ORT_DIRECTML_VERSION)
            == f"onnxruntime_directml-{ORT_DIRECTML_VERSION}-cp312-cp312-win_amd64.whl")


def test_a_page_gives_each_linked_file_its_digest_and_skips_links_without_one() -> None:
    page = ('<a href="../../p/onnxruntime_directml-1.0-cp310-cp310-win_amd64.whl#sha256=ABC">x</a>'
            '<a href="https://f/onnxruntime_directml-1.0.tar.gz#md5=123">y</a>'
            '<a href="https://f/onnxruntime%5Fdirectml-2.0-py3-none-any.whl#sha256=def">z</a><a>no href</a>')
    assert check_pins.published_sha256(page) == {
        "onnxruntime_directml-1.0-cp310-cp310-win_amd64.whl": "abc",
        "onnxruntime_directml-2.0-py3-none-any.whl": "def",
    }


def test_each_pin_is_ok_mismatched_or_missing() -> None:
    pins = {"1.13.1": "a" * 64, "1.14.1": "b" * 64, "1.15.1": "c" * 64}
    published = {check_pins.wheel_name("1.13.1"): "a" * 64, check_pins.wheel_name("1.14.1"): "d" * 64,
                 # the right release for another Python is not the wheel setup takes
                 "onnxruntime_directml-1.15.1-cp311-cp311-win_amd64.whl": "c" * 64}
    verdicts = [(verdict, name) for verdict, name, _ in check_pins.check(pins, published)]
    name = check_pins.wheel_name
    assert verdicts == [("ok", name("1.13.1")), ("MISMATCH", name("1.14.1")), ("MISSING", name("1.15.1"))]


@contextlib.contextmanager
def _index(root: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()


def _serve(tmp_path: Path, digests: dict[str, str]) -> Path:
    folder = tmp_path / "simple" / "onnxruntime-directml"
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(_page(digests), encoding="utf-8")
    return tmp_path


def test_main_exits_0_when_every_pin_is_published(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    digests = {check_pins.wheel_name(v): d for v, d in WHEEL_SHA256.items()}
    with _index(_serve(tmp_path, digests)) as url:
        assert check_pins.main(["--index", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(WHEEL_SHA256) and all(line.startswith("ok ") for line in lines)


def test_main_exits_1_and_names_a_wrong_pin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    digests = {check_pins.wheel_name(v): d for v, d in WHEEL_SHA256.items()}
    wrong = check_pins.wheel_name("1.16.3")
    other = hashlib.sha256(b"another file").hexdigest()
    digests[wrong] = other
    with _index(_serve(tmp_path, digests)) as url:
        assert check_pins.main(["--index", url]) == 1
    (line,) = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("ok ")]
    assert line.startswith("MISMATCH") and wrong in line and other in line and WHEEL_SHA256["1.16.3"] in line


def test_main_exits_2_when_the_index_cannot_be_read(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with _index(tmp_path) as url:  # no project page: 404
        assert check_pins.main(["--index", url]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "onnxruntime-directml" in err and len(err.splitlines()) == 1


def test_main_exits_2_when_the_index_breaks_off(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A reply cut short (http.client.IncompleteRead, no OSError) is an unreadable index, not a
    wrong pin."""
    import http.client
    import urllib.request

    def cut(*args: object, **kwargs: object) -> None:
        raise http.client.IncompleteRead(b"<a href", 1000)

    monkeypatch.setattr(urllib.request, "urlopen", cut)
    assert check_pins.main(["--index", "https://index.example/simple"]) == 2
    assert "cannot read" in capsys.readouterr().err
