"""The field report of an import: what mapped where, what was dropped and why, counts.

Every importer notes into one :class:`FieldReport`; ``lines()`` is what
``ragproof import`` prints. The report holds field names, counts and line
numbers only, never a value from the file (questions and answers are sensitive).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pytest_ragproof.dataset.values import printable_name

MAX_LINES_LISTED = 20  # line numbers shown per reason; the count is always complete


def _where(lines: list[int | None]) -> str:
    known = sorted({n for n in lines if n is not None})
    if not known:
        return ""
    shown = ", ".join(str(n) for n in known[:MAX_LINES_LISTED])
    if len(known) > MAX_LINES_LISTED:
        shown += f", … ({len(known) - MAX_LINES_LISTED} more)"
    return f" (line{'s' if len(known) > 1 else ''} {shown})"


@dataclass
class FieldReport:
    """Counts of one import, filled by the importer and the builder."""

    tool: str
    source: str
    n_read: int = 0
    mapped: Counter[tuple[str, str]] = field(default_factory=Counter)
    dropped_fields: dict[str, tuple[str, int]] = field(default_factory=dict)
    dropped_records: dict[str, list[int | None]] = field(default_factory=dict)
    source_ids: Counter[str] = field(default_factory=Counter)
    unresolved: list[int | None] = field(default_factory=list)
    ambiguous: list[int | None] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    origin_notes: dict[str, str] = field(default_factory=dict)  # shown when that origin was used
    kinds: Counter[str] = field(default_factory=Counter)
    output: str | None = None
    unit: str = "record(s)"  # what n_read counts
    summary: list[str] = field(default_factory=list)  # an importer's own counts, after 'wrote'

    def map(self, source_field: str, target: str) -> None:
        """One record's ``source_field`` went into ``target`` (a case field, or a description)."""
        self.mapped[(printable_name(source_field), printable_name(target))] += 1

    def drop_field(self, source_field: str, reason: str) -> None:
        """One record's ``source_field`` was left out, for ``reason``."""
        source_field = printable_name(source_field)
        old = self.dropped_fields.get(source_field)
        self.dropped_fields[source_field] = (reason, (old[1] if old else 0) + 1)

    def drop_record(self, reason: str, line: int | None) -> None:
        reason = printable_name(reason, limit=200)
        self.dropped_records.setdefault(reason, []).append(line)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    @property
    def n_written(self) -> int:
        return sum(self.kinds.values())

    @property
    def n_dropped(self) -> int:
        return sum(len(lines) for lines in self.dropped_records.values())

    def lines(self) -> list[str]:
        """The report as printed, in a fixed order."""
        out = [f"read {self.n_read} {self.unit} from {self.source} ({self.tool})"]
        if self.output is not None:
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.kinds.items()))
            out.append(f"wrote {self.n_written} case(s) to {self.output}: {kinds or 'none'}")
        out.extend(self.summary)
        if self.mapped:
            out.append("mapped:")
            width = max(len(src) for src, _ in self.mapped)
            for (src, dst), n in self.mapped.items():
                out.append(f"  {src.ljust(width)} -> {dst}: {n}")
        if self.dropped_fields:
            out.append("dropped fields:")
            width = max(len(name) for name in self.dropped_fields)
            for name, (reason, n) in self.dropped_fields.items():
                out.append(f"  {name.ljust(width)} {n}: {reason}")
        if self.dropped_records:
            out.append(f"dropped records: {self.n_dropped}")
            for reason, where in self.dropped_records.items():
                out.append(f"  {len(where)}: {reason}{_where(where)}")
        if self.source_ids:
            parts = ", ".join(f"{n} from {origin}" for origin, n in self.source_ids.items())
            out.append(f"expected_source_ids: {parts}")
        if self.unresolved:
            out.append(
                f"  {len(self.unresolved)} reference context(s) not found in the corpus"
                f"{_where(self.unresolved)}"
            )
        if self.ambiguous:
            out.append(
                f"  {len(self.ambiguous)} reference context(s) found in more than one document "
                f"(every such document is expected){_where(self.ambiguous)}"
            )
        notes = [text for origin, text in self.origin_notes.items() if self.source_ids[origin]]
        out.extend(f"note: {text}" for text in [*notes, *self.notes])
        return out
