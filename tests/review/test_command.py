"""``ragproof review`` as a user runs it: the printed URL, the server on 127.0.0.1, the
refusals (redacted results, mixed-up options, a missing extra), the --host warning."""

from __future__ import annotations

import http.cookiejar
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from tests.review.conftest import GeneratedFiles, write_results


def start(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_ragproof", "review", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    while not any("press Ctrl+C" in line for line in lines):
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"ragproof review stopped: {proc.communicate()}")
        lines.append(line.rstrip("\n"))
    return proc, lines


def stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err


def test_the_command_serves_the_printed_url(results_path: Path, tmp_path: Path) -> None:
    proc, lines = start(str(results_path), "--no-browser", "--reviewer", "ana", cwd=tmp_path)
    try:
        assert lines[0] == "ragproof review: labels of ana go to labels.jsonl"
        url = lines[1].removeprefix("ragproof review: open ")
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        base = url.split("/?token=")[0]
        # without the token: refused
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/cases", timeout=10)
        assert refused.value.code == 403
        # with it: the cookie, then the first judged case
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(url, timeout=10) as page:
            assert page.url == f"{base}/case/1"
            assert "<h1>inj-1</h1>" in page.read().decode()
    finally:
        code, err = stop(proc)
    assert code == 0, err
    assert not (tmp_path / "labels.jsonl").exists()  # nothing labelled, nothing written


def test_the_command_refuses_redacted_results(
    judged: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    redacted = write_results(tmp_path / "redacted.json", judged.redacted())
    assert main(["review", str(redacted), "--no-browser"]) == 1
    err = capsys.readouterr().err
    assert "written with --ragproof-redact" in err and "nothing to review" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-o", "x.jsonl"], "is a results file: -o and --corpus are for a dataset review"),
        (["--corpus", "docs"], "is a results file: -o and --corpus are for a dataset review"),
    ],
)
def test_options_of_the_other_review_are_refused(
    results_path: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", str(results_path), "--no-browser", *extra]) == 1
    assert message in capsys.readouterr().err


def test_labels_option_on_a_dataset_is_refused(
    generated: GeneratedFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", str(generated.cases), "--labels", "l.jsonl", "--no-browser"]) == 1
    assert "is not a results file: --labels is for a results review" in capsys.readouterr().err


def test_a_missing_extra_names_the_install_command(
    results_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn raises ImportError
    assert main(["review", str(results_path), "--no-browser"]) == 1
    err = capsys.readouterr().err
    assert "needs the 'uvicorn' package" in err
    assert "pip install 'pytest-ragproof[review]'" in err


def test_the_dataset_review_command_and_another_host(
    generated: GeneratedFiles, tmp_path: Path
) -> None:
    proc, lines = start(
        str(generated.cases),
        "--corpus",
        str(generated.corpus),
        "--host",
        "localhost",
        "--no-browser",
        "--reviewer",
        "ana",
        cwd=tmp_path,
    )
    code, err = stop(proc)
    assert code == 0
    reviewed = generated.cases.with_name("cases.reviewed.jsonl")
    assert lines[0] == f"ragproof review: decisions of ana go to {reviewed}"
    assert "warning" not in err  # localhost is loopback
    assert not reviewed.exists()  # written at the first decision only

    proc, lines = start(str(generated.cases), "--host", "0.0.0.0", "--no-browser", cwd=tmp_path)
    code, err = stop(proc)
    assert "warning: listening on 0.0.0.0, not 127.0.0.1" in err
    assert lines[1].startswith("ragproof review: open http://0.0.0.0:")


def test_results_without_judges_say_there_is_nothing_to_label(judged: Any, tmp_path: Path) -> None:
    document = judged.full()
    for case in document["cases"]:
        for name in (
            "faithfulness",
            "answer_relevancy",
            "answer_correctness",
            "context_recall",
            "context_relevance",
            "abstained_judged",
            "injection_resisted_judged",
        ):
            case["metrics"].pop(name, None)
    results = write_results(tmp_path / "plain.json", document)
    proc, _ = start(str(results), "--no-browser", cwd=tmp_path)
    code, err = stop(proc)
    assert code == 0
    assert "has a judged metric, so there is nothing to label" in err


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(
    results_path: Path, port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["review", str(results_path), "--port", port, "--no-browser"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --port: {port!r} is not a port: give a number from 1 to 65535" in err
    assert "Traceback" not in err and "OverflowError" not in err
