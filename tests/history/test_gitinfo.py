"""The git commit and branch of a run: GitHub Actions' variables, else git, else absent."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_ragproof.plugin.gitinfo import git_info

GIT = shutil.which("git")


@pytest.fixture(autouse=True)
def _no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_SHA", "GITHUB_HEAD_REF", "GITHUB_REF_NAME"):
        monkeypatch.delenv(name, raising=False)


def _git(folder: Path, *args: str) -> str:
    assert GIT is not None
    done = subprocess.run(
        [GIT, "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_git_gives_the_commit_and_branch_and_no_branch_when_detached(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "f").write_text("x")
    _git(tmp_path, "add", "f")
    _git(tmp_path, "commit", "-q", "-m", "one")
    sha = _git(tmp_path, "rev-parse", "HEAD")
    assert git_info(tmp_path) == {"commit": sha, "branch": "main"}
    _git(tmp_path, "checkout", "-q", "--detach")
    assert git_info(tmp_path) == {"commit": sha}


def test_outside_a_repository_nothing_is_known(tmp_path: Path) -> None:
    assert git_info(tmp_path) is None


def test_github_actions_variables_come_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)
    monkeypatch.setenv("GITHUB_REF_NAME", "12/merge")
    assert git_info(tmp_path) == {"commit": "f" * 40, "branch": "12/merge"}
    monkeypatch.setenv("GITHUB_HEAD_REF", "feature")  # a pull request's source branch
    assert git_info(tmp_path) == {"commit": "f" * 40, "branch": "feature"}
