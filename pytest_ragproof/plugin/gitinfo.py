"""The git commit and branch a run tested, for the results' ``run.git`` section.

CI first: GitHub Actions names the commit (``GITHUB_SHA``) and the branch
(``GITHUB_HEAD_REF`` for a pull request's source branch, else ``GITHUB_REF_NAME``),
since its checkout of a pull request is a detached merge commit. Otherwise
``git rev-parse`` in the project's folder, with a short timeout. What is not known
is absent: no git, not a repository, a detached HEAD has no branch. Never guessed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["git_info"]

_TIMEOUT_S = 2.0


def _rev_parse(folder: Path) -> tuple[str | None, str | None]:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD", "--abbrev-ref", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2:
        return None, None
    commit, branch = lines
    return commit, (None if branch == "HEAD" else branch)


def git_info(folder: Path) -> dict[str, str] | None:
    """``{"commit": sha, "branch": name}`` with what is known; None when nothing is."""
    env = os.environ
    commit = env.get("GITHUB_SHA") or None
    branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or None
    if commit is None or branch is None:
        local_commit, local_branch = _rev_parse(folder)
        commit = commit or local_commit
        branch = branch or local_branch
    out = {k: v for k, v in (("commit", commit), ("branch", branch)) if v}
    return out or None
