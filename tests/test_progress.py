"""A run's progress bar labels the time elapsed and the time left (issue 24: it read "0:02:07 left"
for the time elapsed)."""

from __future__ import annotations

import io

from rich.console import Console

import debatekit.progress as progress_module


def test_the_bar_labels_elapsed_and_left(monkeypatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(progress_module, "stderr", Console(file=screen, force_terminal=True, width=120))
    with progress_module.progress(10, "run") as advance:
        advance(4)
        progress_module.stderr.file.flush()
    text = screen.getvalue()
    assert "4/10" in text and "elapsed," in text and "left" in text
    assert text.index("elapsed,") < text.index("left")
