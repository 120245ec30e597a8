"""Human labels of judged metrics (``ragproof.label/1``): the file, its state, agreement.

A labels file is JSONL a team commits: one person's verdict on one judged metric of
one case a line, appended (never rewritten), tied by a digest to exactly the answer
and contexts the judge read. ``ragproof review`` writes it; ``ragproof judge-check
--results --labels`` measures the judges against it; ``ragproof labels merge`` joins
reviewers' files; the InspectorRAGet export shows each reviewer as an annotator.

Importing this package is cheap (standard library only); ``krippendorff`` is
imported when agreement between more than two people is measured.
"""

from __future__ import annotations

from pytest_ragproof.labels.agreement import (
    AgreementReport,
    ClaimFigures,
    Disagreement,
    JudgeFigures,
    MetricAgreement,
    agreement,
)
from pytest_ragproof.labels.cases import (
    BINARY_METRICS,
    JudgedClaim,
    case_dataset_sha256,
    case_digest,
    find_case,
    judged_claims,
    judged_metrics,
    label_for,
)
from pytest_ragproof.labels.io import (
    append_label,
    is_labels_file,
    parse_labels,
    read_labels,
    write_labels,
)
from pytest_ragproof.labels.model import (
    CLAIM_METRICS,
    LABEL_FORMAT,
    LABELLED_METRICS,
    VERDICT_MEANINGS,
    ClaimVerdict,
    Label,
    LabelKey,
    now,
)
from pytest_ragproof.labels.people import PeopleAgreement, people_agreement
from pytest_ragproof.labels.state import (
    STALE_REASONS,
    LabelState,
    StaleLabel,
    current_labels,
    latest,
)

__all__ = [
    "BINARY_METRICS",
    "CLAIM_METRICS",
    "LABELLED_METRICS",
    "LABEL_FORMAT",
    "STALE_REASONS",
    "VERDICT_MEANINGS",
    "AgreementReport",
    "ClaimFigures",
    "ClaimVerdict",
    "Disagreement",
    "JudgeFigures",
    "JudgedClaim",
    "Label",
    "LabelKey",
    "LabelState",
    "MetricAgreement",
    "PeopleAgreement",
    "StaleLabel",
    "agreement",
    "append_label",
    "case_dataset_sha256",
    "case_digest",
    "current_labels",
    "find_case",
    "is_labels_file",
    "judged_claims",
    "judged_metrics",
    "label_for",
    "latest",
    "now",
    "parse_labels",
    "people_agreement",
    "read_labels",
    "write_labels",
]
