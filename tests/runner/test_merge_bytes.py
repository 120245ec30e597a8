"""The bytes ``ragproof merge -o`` writes, pinned (issue 36.1: merge reads the typed models),
and the error for an edited ``run.config``, which merge reads through its model.

Two shards' files of one run (``data/merge_pinned``: written by the run of
:mod:`tests.runner.shard_project` with a baseline, a case and an aggregate threshold, two
wrong sources and an error) are merged as the command does, with the shards' gates and with
other case gates (their cases decided again); the file written is compared byte for byte
with the one today's merge wrote, but for its run id (and so its digest), the versions and
the folder.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.results.document import read_results
from tests.pytester_projects import resigned

DATA = Path(__file__).parent / "data" / "merge_pinned"
GATES = (
    "--ragproof-aggregate-threshold=qa:recall@5>=0.9",
    "--ragproof-case-threshold=qa:hit@5>=1",
    "--ragproof-baseline=base.json",
    "--ragproof-fail-on-case-regression",
)
OTHER_GATES = (
    "--ragproof-aggregate-threshold=qa:mrr.p50>=0.5",
    "--ragproof-case-threshold=qa:mrr>=0.9",
    "--ragproof-baseline=base.json",
)
_MACHINE = re.compile(r'\n  "run_id": "[^"]*",\n|\n  "versions": \{[^}]*\}\n', re.S)
_DIGEST = re.compile(r'("digest": \{\n    "covers": \[[^]]*\],\n    "sha256": ")[0-9a-f]{64}"')


def _stable(text: str, folder: Path) -> str:
    """The written file without what differs per run (its run id) and per machine (the
    versions, the folder it ran in)."""
    stable = _MACHINE.sub("\n", text).replace(str(folder), "<folder>")
    return _DIGEST.sub(r'\1<of the run id>"', stable)


@pytest.mark.parametrize(
    ("gates", "expected"),
    [(GATES, "merged.json"), (OTHER_GATES, "merged-other-gates.json")],
    ids=["shards-gates", "other-gates"],
)
def test_the_merged_file_keeps_its_bytes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    gates: tuple[str, ...],
    expected: str,
) -> None:
    for name in ("base.json", "shard-1.json", "shard-2.json", "cases.frozen.json"):
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    code = main(["merge", "shard-1.json", "shard-2.json", "-o", "out.json", *gates])
    assert code == 1, capsys.readouterr()
    read_results(tmp_path / "out.json", check=True)  # its digest is the one of its bytes
    written = (tmp_path / "out.json").read_text(encoding="utf-8")
    assert _stable(written, tmp_path) == (DATA / expected).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("edit", "field", "problem"),
    [("drop", "worst", "missing"), ("text", "redact", "Input should be a valid boolean")],
    ids=["missing", "wrong-type"],
)
def test_an_edited_run_config_names_the_file_and_field(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    edit: str,
    field: str,
    problem: str,
) -> None:
    """run.config is read through its model: a field a run always writes, missing or of
    another type in every shard, is one error naming the file and the field."""
    for name in ("base.json", "shard-1.json", "shard-2.json", "cases.frozen.json"):
        doc = json.loads((DATA / name).read_text(encoding="utf-8"))
        if name.startswith("shard-"):
            config = doc["run"]["config"]
            if edit == "drop":
                del config[field]
            else:
                config[field] = "yes"
            doc["digest"] = resigned(doc)
        (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["merge", "shard-1.json", "shard-2.json", *GATES])
    err = capsys.readouterr().err
    assert code == 2
    assert f"shard-1.json: field run.config.{field}: {problem}; the file was edited" in err
    assert "Traceback" not in err
