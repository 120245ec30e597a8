"""Where a ragproof setting came from, and the usage checks that relate options.

Runs in every pytest run (:func:`check_usage` from ``pytest_configure``), so it stays
cheap: the option table (:mod:`~pytest_ragproof.plugin.options`) and pytest only.
Settings that would silently do nothing are usage errors, each naming the fix.
"""

from __future__ import annotations

import pytest

from pytest_ragproof.plugin.options import OPTIONS, datasets_configured, get
from pytest_ragproof.verdict.option_table import by_name

# Options that only mean something next to --ragproof-endpoint.
ENDPOINT_DEPENDENT = tuple(o.name for o in OPTIONS if o.name.startswith("endpoint_"))

# Options that only mean something next to --ragproof-baseline.
BASELINE_DEPENDENT = (
    "baseline_update",
    "regression_tolerance",
    "regression_alpha",
    "fail_on_case_regression",
    "baseline_allow_dataset_change",
)


def ini_keys(config: pytest.Config) -> frozenset[str]:
    """The keys the ini file (and ``-o``) set.

    pytest 9 deprecates ``config.inicfg`` (reading it warns in every run); its keys are
    in ``config._inicfg`` there, and in ``config.inicfg`` on pytest 8.
    """
    raw = getattr(config, "_inicfg", None)
    if raw is None:
        raw = getattr(config, "inicfg", None)
    return frozenset(raw) if raw is not None else frozenset()


def given(config: pytest.Config, name: str) -> str | None:
    """How the user set an option: its flag, its ini key, or None when left at its default."""
    opt = by_name()[name]
    if config.getoption(opt.dest, default=None) not in (None, False, []):
        return opt.cli
    return opt.ini if opt.ini in ini_keys(config) else None


def ini_file_name(config: pytest.Config, default: str = "the ini file") -> str:
    """The name of the file pytest read its configuration from, for messages."""
    return config.inipath.name if config.inipath is not None else default


def origin(config: pytest.Config, name: str) -> str:
    """`` (from ragproof_x in pytest.ini)`` when the value came from the ini file (``(from -o
    ragproof_x)`` when from the command line's ``-o``), else ''."""
    ini = by_name()[name].ini
    if given(config, name) != ini:
        return ""
    if ini in overridden_keys(config):
        return f" (from -o {ini} on the command line)"
    return f" (from {ini} in {ini_file_name(config)})"


def overridden_keys(config: pytest.Config) -> set[str]:
    """The ini keys given with ``-o`` (pytest 9 also puts them in ``config._inicfg``)."""
    return {o.split("=", 1)[0].strip() for o in config.getoption("override_ini") or ()}


def origin_of(config: pytest.Config, error: Exception) -> str:
    """:func:`origin` of the option an error message names by its flag, if any."""
    import re

    match = re.search(r"--ragproof-([a-z-]+)", str(error))
    name = match.group(1).replace("-", "_") if match else None
    return origin(config, name) if name in by_name() else ""


def check_usage(config: pytest.Config) -> None:
    """Settings that would silently do nothing are usage errors (every run, cheap)."""
    overridden = overridden_keys(config)  # pytest 8 keeps them out of config.inicfg
    known = {o.ini for o in by_name().values()}
    for key in sorted(ini_keys(config) | overridden):
        if key.startswith("ragproof_") and key not in known:
            import difflib

            close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
            hint = (
                f"did you mean {close[0]}?" if close else "see pytest --help for the ragproof keys"
            )
            where = (
                "given with -o on the command line"
                if key in overridden
                else f"in {ini_file_name(config)}"
            )
            raise pytest.UsageError(f"ragproof: unknown ini key {key} {where}; {hint}")
    _check_endpoint(config)
    if not get(config, "baseline"):
        for name in BASELINE_DEPENDENT:
            how = given(config, name)
            if how is not None:
                raise pytest.UsageError(
                    f"ragproof: {how} has no effect without a baseline; add "
                    f"--ragproof-baseline=PATH (ini key ragproof_baseline), e.g. "
                    f"--ragproof-baseline=baseline.json"
                )


def _check_endpoint(config: pytest.Config) -> None:
    """The endpoint options need the endpoint; the endpoint needs a dataset and no fixture name."""
    endpoint = given(config, "endpoint")
    if endpoint is not None and not get(config, "endpoint"):
        return  # set empty (-o ragproof_endpoint=): switched off, its other keys at rest
    if endpoint is None:
        for name in ENDPOINT_DEPENDENT:
            how = given(config, name)
            if how is not None:
                raise pytest.UsageError(
                    f"ragproof: {how} has no effect without an endpoint; add "
                    f"--ragproof-endpoint=URL (ini key ragproof_endpoint), e.g. "
                    f"--ragproof-endpoint=https://rag.example.com/ask"
                )
        return
    fixture = given(config, "pipeline_fixture")
    if fixture is not None:
        raise pytest.UsageError(
            f"ragproof: {endpoint} and {fixture} both say what to test; the endpoint is the "
            f"pipeline, so leave out {fixture} (or {endpoint} to test the fixture)"
        )
    if not datasets_configured(config):
        raise pytest.UsageError(
            f"ragproof: {endpoint} has no effect without a dataset; add "
            "--ragproof-dataset=PATH (ini key ragproof_dataset), e.g. "
            "--ragproof-dataset=cases.frozen.json"
        )
