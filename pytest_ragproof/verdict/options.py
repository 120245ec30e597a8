"""What one run option is, and the parsers that validate its values (pytest-free, cheap).

An :class:`Option` declares everything about a setting once: its flag
(``--ragproof-<name>``) and ini key (``ragproof_<name>``), the ini type, its default (from
:mod:`pytest_ragproof.defaults`), its help, the parser that validates a value into what
the run uses, the keyword :func:`~pytest_ragproof.verdict.config.make_config` takes, the
keyword of ``evaluate()`` and the field of
:class:`~pytest_ragproof.verdict.config.RunConfig` (``judges.X``: of the judge settings,
``baseline.X``: of the baseline settings) it fills. The table of every option is
:mod:`pytest_ragproof.verdict.option_table`; the pytest plugin registers it
(:mod:`pytest_ragproof.plugin.options`), ``ragproof merge`` declares its gate options from
it, and ``make_config`` and ``evaluate()`` read their keywords from it.

Imports nothing heavy: the plugin loads it in every pytest run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_ragproof.errors import ConfigError

__all__ = ["IniType", "Option", "Parser"]

IniType = Literal["string", "linelist", "paths", "bool"]
Group = Literal["run", "judges", "baseline"]


def _as_is(opt: Option, value: Any) -> Any:
    return value


Parser = Callable[["Option", Any], Any]


@dataclass(frozen=True)
class Option:
    name: str  # e.g. "case_threshold" -> --ragproof-case-threshold, ini ragproof_case_threshold
    help: str
    ini_type: IniType = "string"
    multiple: bool = False
    flag: bool = False
    default: Any = None  # when neither the command line nor the ini file gives it
    metavar: str | None = None
    #: ``make_config``'s keyword; None: the plugin alone reads it (outputs, endpoint, shard).
    keyword: str | None = None
    #: ``evaluate()``'s keyword (None: pytest only).
    api: str | None = None
    #: The RunConfig field it fills (default: the keyword); ``judges.X`` / ``baseline.X``:
    #: field X of the judge / baseline settings, read only when judges / a baseline run.
    field: str | None = None
    #: Validates a value (as given, or the default) into the field's value; raises
    #: ConfigError naming the flag and the fix.
    parse: Parser = _as_is
    path: bool = False  # a path, resolved against the folder pytest was started in
    negated: bool = False  # the keyword is the flag's opposite (--ragproof-no-cache: cache)

    @property
    def cli(self) -> str:
        return "--ragproof-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "ragproof_" + self.name

    @property
    def dest(self) -> str:
        return "ragproof_" + self.name

    @property
    def target(self) -> str:
        """The field it fills: ``field``, else the keyword."""
        return self.field or self.keyword or self.name

    @property
    def group(self) -> Group:
        head = self.target.split(".", 1)[0]
        return (
            "judges"
            if head == "judges" and "." in self.target
            else ("baseline" if head == "baseline" and "." in self.target else "run")
        )

    @property
    def attribute(self) -> str:
        """The field's name inside its settings object (``judges.model`` -> ``model``)."""
        return self.target.split(".", 1)[-1]

    @property
    def keyword_default(self) -> Any:
        """The keyword's value when not given (a negated flag's opposite; no values for a
        repeatable option)."""
        if self.multiple and self.default is None:
            return ()
        return (not self.default) if self.negated else self.default

    def value(self, given: Any) -> Any:
        """``given`` validated into the field's value."""
        return self.parse(self, given)


# The parsers. Each message names the flag and shows a value that works.


def text(opt: Option, value: Any) -> str:
    return str(value).strip()


def optional_text(opt: Option, value: Any) -> str | None:
    return str(value or "").strip() or None


def path_or_none(opt: Option, value: Any) -> Path | None:
    return Path(value) if value else None


def folder_or_none(opt: Option, value: Any) -> str | None:
    return str(value) if value else None


def flag(opt: Option, value: Any) -> bool:
    return bool(value)


def paths(opt: Option, value: Any) -> tuple[Path, ...]:
    return tuple(Path(p) for p in value)


def strings(opt: Option, value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value)


def split_list(values: Sequence[str]) -> list[str]:
    """Comma-separated and repeated values as one list (``a,b`` ``c`` -> a, b, c)."""
    out: list[str] = []
    for value in values:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def words(opt: Option, value: Any) -> frozenset[str]:
    return frozenset(split_list(list(value)))


def int_of(opt: Option, given: Any, minimum: int) -> int:
    flag_name = opt.cli
    try:
        value = int(str(given).strip())
    except ValueError:
        raise ConfigError(
            f"{flag_name} expects an integer, e.g. {flag_name}={max(minimum, 4)}; got '{given}'"
        ) from None
    if value < minimum:
        raise ConfigError(f"{flag_name} must be at least {minimum}")
    return value


def integer(minimum: int, *, unset: int | None = None, optional: bool = False) -> Parser:
    """An integer of at least ``minimum``; unset (None or ''): ``unset``, or None when
    ``optional``."""

    def parse(opt: Option, value: Any) -> int | None:
        if (optional or unset is not None) and value in (None, ""):
            return unset
        return int_of(opt, value, minimum)

    return parse


def not_negative(*, unset: float | None = None) -> Parser:
    """A number of at least 0; unset (None, '' or 0 when ``unset`` is given): ``unset``."""

    def parse(opt: Option, value: Any) -> float | None:
        if value in (None, ""):
            return unset
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(
                f"{opt.cli} expects a number, e.g. {opt.cli}=2.5; got '{value}'"
            ) from None
        if not number >= 0:
            raise ConfigError(f"{opt.cli} must not be negative; got '{value}'")
        return (number or unset) if unset is not None else number

    return parse


def either(first: str, second: str) -> Parser:
    """One of two words: ``--flag must be 'a' or 'b'``."""

    def parse(opt: Option, value: Any) -> str:
        word = str(value).strip()
        if word not in (first, second):
            raise ConfigError(f"{opt.cli} must be '{first}' or '{second}'; got '{word}'")
        return word

    return parse


def one_of(choices: Sequence[str], *, listed: str | None = None) -> Parser:
    """One of ``choices``: ``--flag takes a, b, c; got 'x'``."""

    def parse(opt: Option, value: Any) -> str:
        word = str(value).strip()
        if word not in choices:
            shown = listed or ", ".join(choices)
            raise ConfigError(f"{opt.cli} takes {shown}; got '{word}'")
        return word

    return parse


def names_of(choices: Sequence[str]) -> Parser:
    """Comma-separated, repeatable names out of ``choices``: ``--ragproof-kind``."""

    def parse(opt: Option, value: Any) -> frozenset[str]:
        chosen = words(opt, value)
        if not chosen <= set(choices):
            bad = ", ".join(sorted(chosen - set(choices)))
            raise ConfigError(f"{opt.cli} takes {', '.join(choices)}; got {bad}")
        return chosen

    return parse


def on_off(opt: Option, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word not in ("on", "off"):
        raise ConfigError(f"{opt.cli} must be 'on' or 'off'; got '{str(value).strip()}'")
    return word == "on"


def cutoffs(opt: Option, value: Any) -> list[int]:
    """``--ragproof-k``: ``1,3,5`` or a sequence of integers (the thresholds add theirs)."""
    k_text = value if isinstance(value, str) else ",".join(str(v) for v in value)
    try:
        return [int(v) for v in split_list([k_text])]
    except ValueError:
        raise ConfigError(
            f"{opt.cli} expects comma-separated integers, e.g. {opt.cli} 1,3,5,10; got '{k_text}'"
        ) from None


def seconds(opt: Option, value: Any) -> float | None:
    """``--ragproof-timeout``: positive seconds; unset, 0 or 'none': no timeout."""
    if value in (None, "", "0", "none", 0):
        return None
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{opt.cli} expects seconds, e.g. {opt.cli}=30; got '{value}'") from None
    if not number > 0:
        raise ConfigError(f"{opt.cli} must be positive")
    return number


def patterns(opt: Option, value: Any) -> tuple[str, ...]:
    import re

    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"{opt.cli} '{pattern}' is not a valid regular expression ({exc.msg})"
            ) from None
    return tuple(value)


def case_thresholds(opt: Option, value: Any) -> tuple[Any, ...]:
    from pytest_ragproof.verdict.thresholds import parse_case_thresholds

    return tuple(parse_case_thresholds(value))


def aggregate_thresholds(opt: Option, value: Any) -> tuple[Any, ...]:
    from pytest_ragproof.verdict.thresholds import parse_aggregate_thresholds

    return tuple(parse_aggregate_thresholds(value))


def share(opt: Option, value: Any) -> float:
    """``--ragproof-min-pass-rate``: above 0 (an all-error case never passes), at most 1."""
    try:
        rate = float(str(value).strip())
    except ValueError:
        raise ConfigError(
            f"{opt.cli} expects a share of the repeats, e.g. {opt.cli}=0.8; got '{value}'"
        ) from None
    if not 0 < rate <= 1:
        raise ConfigError(
            f"{opt.cli} must be above 0 and at most 1 (the share of a case's repeats that "
            f"must pass); got '{value}'"
        )
    return rate
