"""bench/web.py (in `make bench`) says why it measures nothing rather than failing or
printing an empty table: without a built web client, a browser or Playwright."""

from pathlib import Path

import pytest

from bench import web


def test_no_web_client_built_is_said_and_measures_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(web, "DIST", tmp_path / "dist")  # not built
    assert web.measure(runs=1) == []
    assert "web: skipped: no web client built" in capsys.readouterr().err


def test_no_browser_is_said_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "index.html").write_text("<!doctype html>")
    monkeypatch.setattr(web, "DIST", tmp_path / "dist")
    monkeypatch.setattr(web, "BROWSER", tmp_path / "chromium")  # absent
    assert web.measure(runs=1) == []
    assert f"web: skipped: no browser at {tmp_path / 'chromium'}" in capsys.readouterr().err
