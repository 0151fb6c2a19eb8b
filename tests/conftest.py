"""Every test runs with its own empty user config folder, so a developer's ~/.eval-skills never leaks in."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_SKILLS_HOME", str(tmp_path_factory.mktemp("user-config")))
