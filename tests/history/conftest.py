"""Stores for the history tests: a SQLite file, and a database on a real PostgreSQL server.

The PostgreSQL server is started once per test session from Debian's ``postgresql``
package (``/usr/lib/postgresql/*/bin``), in a temporary folder, listening on
127.0.0.1 on a free port with its unix socket in that folder; it is stopped and its
folder removed at the end. PostgreSQL refuses to run as root: as root the server
runs as the ``postgres`` user (``runuser``). Tests of the ``postgresql`` store are
skipped, with the reason, when the server binaries or that user are missing.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


def _as_server_user() -> tuple[list[str], int | None, int | None] | str:
    """The command prefix that runs the server unprivileged, its uid and gid; or why not."""
    if os.geteuid() != 0:
        return [], None, None
    import pwd

    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        return "running as root and there is no 'postgres' user to run the server as"
    runuser = shutil.which("runuser")
    if runuser is None:
        return "running as root and runuser (util-linux) is missing"
    return [runuser, "-u", "postgres", "--"], entry.pw_uid, entry.pw_gid


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(server: PostgresServer, proc: subprocess.Popen[bytes], log: Path) -> None:
    import psycopg

    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"postgres exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            with psycopg.connect(server.url("postgres"), connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test session (skipped when it cannot be started)."""
    bindir = _binaries()
    if bindir is None:
        pytest.skip(
            "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/postgres; "
            "Debian package postgresql)"
        )
    who = _as_server_user()
    if isinstance(who, str):
        pytest.skip(who)
    prefix, uid, gid = who
    folder = Path(tempfile.mkdtemp(prefix="ragproof-pg-", dir="/tmp"))
    if uid is not None and gid is not None:
        os.chown(folder, uid, gid)
    data, log = folder / "data", folder / "server.log"
    user = "ragproof"
    subprocess.run(
        [
            *prefix,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            user,
            "--auth=trust",
            "-E",
            "UTF8",
        ],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    cmd = [
        *prefix,
        str(bindir / "postgres"),
        "-D",
        str(data),
        "-p",
        str(port),
        "-k",
        str(folder),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    server = PostgresServer("127.0.0.1", port, user)
    try:
        _wait_ready(server, proc, log)
        yield server
    finally:
        # pg_ctl signals the server itself (runuser does not pass signals on): fast shutdown.
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "stop", "-D", str(data), "-m", "fast", "-w"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


_DATABASES = iter(range(1, 1_000_000))


@pytest.fixture
def postgres_databases(postgres_server: PostgresServer) -> Iterator[Callable[[], str]]:
    """A maker of new, empty databases on the session's server: each call creates one
    and returns its URL; all are dropped afterwards."""
    import psycopg

    admin = postgres_server.url("postgres")
    made: list[str] = []

    def make() -> str:
        name = f"history_{os.getpid()}_{next(_DATABASES)}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return postgres_server.url(name)

    yield make
    for name in made:
        with contextlib.suppress(psycopg.Error), psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url(postgres_databases: Callable[[], str]) -> str:
    """A new, empty database on the session's server (dropped afterwards)."""
    return postgres_databases()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_value(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A history store as the option and ``--store`` take it: a SQLite file path, or the
    URL of an empty database on the test session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder on a read-only bind mount of ``src`` beside it (skipped where mounting is
    not permitted)."""
    src, ro = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    try:
        subprocess.run(["mount", "--bind", str(src), str(ro)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("cannot bind-mount a folder here (needs root and mount)")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True, capture_output=True)
        yield ro
    finally:
        subprocess.run(["umount", str(ro)], check=False, capture_output=True)
