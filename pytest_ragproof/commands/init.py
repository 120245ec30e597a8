"""``ragproof init [DIR] [--no-config]``: a starter project that passes out of the box.

Writes into DIR (default: the current folder, created when missing):

- ``conftest.py``: the ``rag_pipeline`` fixture, with the call convention and output
  shape in comments, answering the sample cases from three built-in documents;
- ``cases.jsonl``: five sample cases (qa, conversational qa, unanswerable, injection);
- ``cases.frozen.json``: the same cases frozen (as ``ragproof freeze cases.jsonl``);
- the pytest configuration: a ``pytest.ini``, or a ``[tool.pytest.ini_options]``
  section appended to an existing ``pyproject.toml`` that has no pytest section. When
  DIR is a subfolder of a project root (the current folder holds ``pyproject.toml``,
  ``setup.py``, ``setup.cfg``, ``tox.ini`` or ``.git``), the configuration goes into the
  root with the dataset path ``DIR/cases.frozen.json``, so a plain ``pytest`` runs it.

It never overwrites or edits: when one of those files exists, or DIR (or a folder
above it, where pytest would find it) already has a pytest configuration, nothing is
written and the exit code is 1 (with the settings
to add yourself; ``--no-config`` then writes everything but the configuration).
Templates are package data under ``pytest_ragproof/templates/init/``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CONFTEST = "conftest.py"
CASES = "cases.jsonl"
FROZEN = "cases.frozen.json"
PYTEST_INI = "pytest.ini"
PYPROJECT = "pyproject.toml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory",
        nargs="?",
        default=".",
        metavar="DIR",
        help="where to write the starter files (default: the current folder)",
    )
    parser.add_argument(
        "--no-config",
        action="store_true",
        help="write no pytest configuration (when DIR already has one: add the printed "
        "settings to it yourself)",
    )


def _template(name: str) -> str:
    from importlib.resources import files

    return (files("pytest_ragproof") / "templates" / "init" / name).read_text(encoding="utf-8")


def settings_to_add(config_file: str, prefix: str = "") -> str:
    """The ragproof settings, in the syntax of ``config_file``.

    ``prefix`` is the starter folder relative to the configuration file's folder
    (``tests/rag/``), so the dataset path is right where the settings go.
    """
    template = "pyproject.toml.tmpl" if config_file == PYPROJECT else "pytest.ini.tmpl"
    return "\n".join(
        line.replace(FROZEN, prefix + FROZEN)
        for line in _template(template).strip().splitlines()
        if not line.startswith("[") and "written by `ragproof init`" not in line
    )


def project_pytest_config(directory: str) -> tuple[Path, str] | None:
    """The pytest configuration that governs DIR: DIR's own, else the nearest ancestor's.

    pytest looks for its configuration in the folders above the paths it is given, so
    a configuration above DIR is the one a run of DIR (or of the project) reads; a
    second one inside DIR would silently become the rootdir.
    """
    from pathlib import Path

    here = Path(directory).resolve()
    while not here.is_dir() and here != here.parent:
        here = here.parent
    for folder in (here, *here.parents):
        found = existing_pytest_config(str(folder))
        if found is not None:
            return folder / found[0], found[1]
    return None


def existing_pytest_config(directory: str) -> tuple[str, str] | None:
    """DIR's pytest configuration as (file name, where in it), or None when it has none.

    The files pytest reads, as pytest decides: ``pytest.ini`` and ``.pytest.ini``
    always count; ``pyproject.toml`` with a ``tool.pytest`` table; ``tox.ini`` with a
    ``[pytest]`` section; ``setup.cfg`` with ``[tool:pytest]``.
    """
    import configparser
    import tomllib

    root = Path(directory)
    for name in (PYTEST_INI, ".pytest.ini"):
        if (root / name).is_file():
            return name, "the whole file"
    pyproject = root / PYPROJECT
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            data = {}  # not pytest's either; appending is refused later
        tool = data.get("tool")
        if isinstance(tool, dict) and "pytest" in tool:
            return PYPROJECT, "[tool.pytest.ini_options]"
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        path = root / name
        if path.is_file():
            parser = configparser.ConfigParser(interpolation=None, strict=False)
            try:
                parser.read(path, encoding="utf-8")
            except (configparser.Error, UnicodeDecodeError):
                continue  # pytest could not read it either
            if parser.has_section(section):
                return name, f"[{section}]"
    return None


def pyproject_addition(current: bytes, prefix: str = "") -> str | None:
    """What to append to a pyproject.toml holding ``current``, or None when the result
    would not be valid TOML (or the file is not UTF-8)."""
    import tomllib

    separator = "" if not current or current.endswith(b"\n") else "\n"
    addition = separator + _template("pyproject.toml.tmpl").replace(FROZEN, prefix + FROZEN)
    try:
        tomllib.loads(current.decode("utf-8") + addition)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return addition


def _project_root(folder: Path) -> bool:
    """Does ``folder`` look like a project's root (where its pytest configuration goes)?"""
    markers = (PYPROJECT, "setup.py", "setup.cfg", "tox.ini", ".git")
    return any((folder / name).exists() for name in markers)


def run(args: argparse.Namespace) -> int:
    import sys

    from pytest_ragproof.dataset.freeze import freeze

    root = Path(args.directory)
    if root.exists() and not root.is_dir():
        print(f"ragproof init: {root} exists and is not a folder", file=sys.stderr)
        return 1

    # The configuration goes where pytest looks for it: a starter written into a
    # subfolder of the current folder is configured from the current folder, so that a
    # plain `pytest` there runs it (a pytest.ini inside DIR would be read only by
    # `pytest DIR`, and would become its rootdir).
    here = Path.cwd().resolve()
    target = (here / root).resolve()
    home, prefix = root, ""
    if target != here and here in target.parents and _project_root(here):
        home, prefix = Path("."), target.relative_to(here).as_posix() + "/"

    # Files first: a second `ragproof init` must name what it would overwrite.
    clashes = [str(root / n) for n in (CONFTEST, CASES, FROZEN) if (root / n).exists()]
    if clashes and not args.no_config and (home / PYTEST_INI).exists():
        clashes.append(str(home / PYTEST_INI))
    if clashes:
        print(
            f"ragproof init: refusing to overwrite {', '.join(clashes)}; wrote nothing. "
            "Move them away, or write the starter elsewhere: ragproof init DIR",
            file=sys.stderr,
        )
        return 1

    config: str | None = None  # the configuration file to write or append to
    addition: str | None = None  # what is appended to an existing pyproject.toml
    if not args.no_config:
        existing = project_pytest_config(str(root))
        if existing is not None:
            found, where = existing
            shown = root / found.name if found.parent == root.resolve() else found
            prefix = ""
            if found.parent != root.resolve():
                prefix = root.resolve().relative_to(found.parent).as_posix() + "/"
            print(
                f"ragproof init: {shown} already configures pytest ({where}); "
                "ragproof init does not edit it and wrote nothing. Add these settings "
                f"there, then run `ragproof init --no-config {args.directory}`:\n",
                file=sys.stderr,
            )
            print(settings_to_add(found.name, prefix), file=sys.stderr)
            return 1
        config = PYPROJECT if (home / PYPROJECT).is_file() else PYTEST_INI
        if config == PYPROJECT:
            addition = pyproject_addition((home / PYPROJECT).read_bytes(), prefix)
            if addition is None:
                print(
                    f"ragproof init: {home / PYPROJECT} is not valid TOML (or cannot take a "
                    "[tool.pytest.ini_options] table); wrote nothing. Fix it, or add these "
                    f"settings yourself and run `ragproof init --no-config {args.directory}`:"
                    "\n",
                    file=sys.stderr,
                )
                print(settings_to_add(PYPROJECT, prefix), file=sys.stderr)
                return 1

    root.mkdir(parents=True, exist_ok=True)
    (root / CONFTEST).write_text(_template("conftest.py.tmpl"), encoding="utf-8")
    (root / CASES).write_text(_template("cases.jsonl.tmpl"), encoding="utf-8")
    freeze(root / CASES, root / FROZEN)
    written = [CONFTEST, CASES, FROZEN]
    where = f" in {root}"
    if config == PYTEST_INI:
        ini = _template("pytest.ini.tmpl").replace(FROZEN, prefix + FROZEN)
        (home / PYTEST_INI).write_text(ini, encoding="utf-8")
        written.append(str(home / PYTEST_INI) if prefix else PYTEST_INI)
    elif addition is not None:
        # Appended, never rewritten: the user's bytes (line endings too) stay as they are.
        with (home / PYPROJECT).open("a", encoding="utf-8", newline="") as f:
            f.write(addition)
        written.append(f"{home / PYPROJECT} (appended [tool.pytest.ini_options])")
    if prefix:
        written[:3] = [str(root / name) for name in written[:3]]
        where = ""

    print(f"ragproof init: wrote {', '.join(written)}{where}")
    run_here = "pytest" if root == Path(".") or prefix else f"pytest {root}"
    print("next:")
    print(f"  {run_here}   # runs the 5 sample cases and prints the ragproof summary")
    print(f"  edit {root / CONFTEST}: make rag_pipeline call your RAG system")
    print(f"  write your cases in {root / CASES}, then: ragproof freeze {root / CASES}")
    if config is None:
        print("  add the ragproof settings to your pytest configuration (--no-config)")
    return 0
