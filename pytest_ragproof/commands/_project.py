"""The ``ragproof_*`` ini values of the project a command runs in, found as pytest finds them.

``ragproof merge`` decides a verdict with the gates of the configuration it runs in,
not with the ones a results file says it was run with.
pytest looks for its configuration file from the invocation folder upwards and takes
the first of ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml`` (with a
``[tool.pytest.ini_options]`` or ``[tool.pytest]`` table), ``tox.ini`` (with ``[pytest]``)
and ``setup.cfg`` (with ``[tool:pytest]``) in each folder; ``-c FILE`` names it. The ini
files are read with ``iniconfig`` (pytest's own reader), pyproject with ``tomllib``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError

if TYPE_CHECKING:
    import argparse

    from pytest_ragproof.verdict.merge import Gates
    from pytest_ragproof.verdict.options import Option

__all__ = ["ProjectIni", "add_gate_arguments", "find_project_ini", "gates_of"]

_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


@dataclass(frozen=True)
class ProjectIni:
    """The configuration file found (None: none) and its values by ini key."""

    path: Path | None
    values: dict[str, Any] = field(default_factory=dict)

    def linelist(self, key: str) -> list[str] | None:
        """A ``linelist`` value as pytest's ``getini`` gives it (None: not set)."""
        value = self.values.get(key)
        if value is None:
            return None
        if isinstance(value, list):
            return [str(v) for v in value]
        return [line.strip() for line in str(value).splitlines() if line.strip()]

    def string(self, key: str) -> str | None:
        value = self.values.get(key)
        return None if value is None else str(value)

    def flag(self, key: str) -> bool | None:
        value = self.values.get(key)
        if value is None or isinstance(value, bool):
            return value
        return str(value).strip().lower() in ("1", "true", "yes", "on")


def _toml(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        why = str(exc) if isinstance(exc, tomllib.TOMLDecodeError) else type(exc).__name__
        raise ConfigError(
            f"{path}: not readable as TOML ({why}); fix the file pytest reads its "
            "configuration from"
        ) from None
    tool = data.get("tool")
    pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(pytest_table, dict):
        return None
    legacy = pytest_table.get("ini_options")
    if isinstance(legacy, dict):
        return dict(legacy)
    return {k: v for k, v in pytest_table.items() if k != "ini_options"}


def _ini(path: Path, section: str | None) -> dict[str, Any] | None:
    import iniconfig

    try:
        parsed = iniconfig.IniConfig(str(path))
    except iniconfig.ParseError as exc:
        # "path:line: what", as pytest itself reports it.
        raise ConfigError(f"{exc}; fix the file pytest reads its configuration from") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not readable as an ini file ({type(exc).__name__})") from None
    name = section or "pytest"
    if name in parsed:
        return dict(parsed[name].items())
    # pytest.ini and .pytest.ini are the configuration file even without a [pytest] section.
    return {} if section is None else None


def _read(path: Path) -> dict[str, Any] | None:
    name = path.name
    if name == "pyproject.toml":
        return _toml(path)
    if name == "tox.ini":
        return _ini(path, "pytest")
    if name == "setup.cfg":
        return _ini(path, "tool:pytest")
    return _ini(path, None)


def find_project_ini(start: Path, given: Path | None = None) -> ProjectIni:
    """The configuration pytest would read when run in ``start`` (``-c``: ``given``)."""
    if given is not None:
        if not given.is_file():
            raise ConfigError(
                f"-c {given}: no such file; give the project's pytest.ini, "
                "pyproject.toml, tox.ini or setup.cfg"
            )
        return ProjectIni(given, _read(given) or {})
    for folder in (start, *start.parents):
        for name in _NAMES:
            path = folder / name
            if path.is_file():
                values = _read(path)
                if values is not None:
                    return ProjectIni(path, values)
    return ProjectIni(None)


# The options a verdict depends on (docs/ci.md), declared in the option table
# (pytest_ragproof.verdict.option_table): flag, ini key, repeatable or a flag, metavar, help.
_GATE_NAMES = (
    "case_threshold",
    "aggregate_threshold",
    "xfail_tag",
    "min_pass_rate",
    "baseline",
    "baseline_allow_dataset_change",
    "regression_tolerance",
    "regression_alpha",
    "fail_on_case_regression",
)


def _gate_options() -> list[Option]:
    from pytest_ragproof.verdict.option_table import by_name

    table = by_name()
    return [table[name] for name in _GATE_NAMES]


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The gating options of a pytest run, for a command that decides a verdict again."""
    group = parser.add_argument_group(
        "gates (default: the project's ragproof_* ini keys, as pytest reads them)"
    )
    group.add_argument(
        "-c",
        "--config-file",
        metavar="FILE",
        help="the pytest configuration file to read (default: found as pytest finds it)",
    )
    for o in _gate_options():
        text = o.help.replace("%", "%%")  # argparse formats help texts with %
        if o.flag:
            group.add_argument(o.cli, dest=o.name, action="store_true", default=None, help=text)
        else:
            action = "append" if o.multiple else "store"
            group.add_argument(o.cli, dest=o.name, action=action, metavar=o.metavar, help=text)


def gates_of(args: argparse.Namespace, start: Path) -> Gates:
    """The gates of the configuration the command runs in: its command line over the
    project's ini keys (a repeatable option given on the command line replaces the ini's
    list, as in pytest), else the defaults."""
    from pytest_ragproof import defaults
    from pytest_ragproof.verdict.merge import Gates

    given = Path(args.config_file) if args.config_file else None
    ini = find_project_ini(start, given)
    used_cli = False
    used_ini = False

    def value(name: str, multiple: bool, flag: bool) -> Any:
        nonlocal used_cli, used_ini
        cli = getattr(args, name)
        if cli is not None:
            used_cli = True
            return list(cli) if multiple else cli
        key = by_name[name].ini
        found = ini.linelist(key) if multiple else ini.flag(key) if flag else ini.string(key)
        if found is not None:
            used_ini = True
        return found

    gate_options = _gate_options()
    by_name = {o.name: o for o in gate_options}
    got = {o.name: value(o.name, o.multiple, o.flag) for o in gate_options}
    where = [str(ini.path.name)] if used_ini and ini.path is not None else []
    if used_cli:
        where.append("the command line")
    return Gates(
        case_thresholds=got["case_threshold"] or [],
        aggregate_thresholds=got["aggregate_threshold"] or [],
        xfail_tags=got["xfail_tag"] or [],
        min_pass_rate=got["min_pass_rate"] or defaults.MIN_PASS_RATE,
        baseline=got["baseline"] or None,
        allow_dataset_change=bool(got["baseline_allow_dataset_change"]),
        tolerances=got["regression_tolerance"] or [],
        alpha=got["regression_alpha"] or defaults.REGRESSION_ALPHA,
        fail_on_case_regression=bool(got["fail_on_case_regression"]),
        xfail_strict=bool(ini.flag("xfail_strict")),
        source=" and ".join(where) or "the defaults (no ragproof_* ini key or option given)",
    )
