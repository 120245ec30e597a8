"""One judge registry (pytest_ragproof/metrics/judged.py): every table of judges reads it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ragproof import judges
from pytest_ragproof.judges.engine import JUDGE_MODULES
from pytest_ragproof.labels.model import LABELLED_METRICS, VERDICT_MEANINGS
from pytest_ragproof.metrics import registry
from pytest_ragproof.metrics.judged import JUDGE_SPECS
from pytest_ragproof.reporting.inspectorraget_metrics import DISPLAY_NAMES

JUDGES_DIR = Path(judges.__file__).parent


def test_every_judge_module_is_registered_once() -> None:
    defining = sorted(
        p.stem for p in JUDGES_DIR.glob("*.py") if "\nJUDGE = " in p.read_text(encoding="utf-8")
    )
    assert sorted(s.module for s in JUDGE_SPECS) == defining
    names = [s.name for s in JUDGE_SPECS]
    assert len(set(names)) == len(names)
    assert {name: j.metric for name, j in JUDGE_MODULES.items()} == {n: n for n in names}


def test_the_tables_of_judges_follow_the_registry() -> None:
    names = tuple(s.name for s in JUDGE_SPECS)
    every = [m for s in JUDGE_SPECS for m in s.metrics]
    assert judges.JUDGES == names == LABELLED_METRICS
    assert tuple(VERDICT_MEANINGS) == names
    assert judges.metrics_of(judges.JUDGES) == every
    assert sorted(DISPLAY_NAMES) == sorted(every)
    judged = [s.name for s in registry.specs() if "judge" in s.needs]
    assert judged == every


def test_a_new_judge_is_its_module_and_one_entry(tmp_path: Path) -> None:
    """A judge added to the registry (and its module) is known to --ragproof-judges, the
    engine, the metric registry, labels and the InspectorRAGet names, with nothing else."""
    code = """
import dataclasses, sys, types
import pytest_ragproof.metrics.judged as J
J.JUDGE_SPECS = (*J.JUDGE_SPECS, dataclasses.replace(
    J.JUDGE_SPECS[0], name="toy_judged", module="toy", display="Toy", yes="y", no="n",
    description="a toy judge (LLM judge)"))
import importlib
import pytest_ragproof.metrics.registry as R
importlib.reload(R)  # the metrics package imported it with the tuple above unchanged
from pytest_ragproof.judges import faithfulness
from pytest_ragproof.judges.base import Judge
toy = types.ModuleType("pytest_ragproof.judges.toy")
toy.JUDGE = Judge("toy_judged", faithfulness.STEP, faithfulness.run, claims=True)
sys.modules["pytest_ragproof.judges.toy"] = toy
from pytest_ragproof import judges
from pytest_ragproof.judges.engine import JUDGE_MODULES
from pytest_ragproof.labels.model import LABELLED_METRICS, VERDICT_MEANINGS
from pytest_ragproof.metrics import registry
from pytest_ragproof.plugin.options import OPTIONS
from pytest_ragproof.reporting.inspectorraget_metrics import DISPLAY_NAMES
assert judges.parse_judges(["toy_judged"]) == {"toy_judged"}
assert "toy_judged" in judges.parse_judges(["all"])
assert JUDGE_MODULES["toy_judged"] is toy.JUDGE
assert registry.resolve("toy_judged").description == "a toy judge (LLM judge)"
assert LABELLED_METRICS[-1] == "toy_judged" and VERDICT_MEANINGS["toy_judged"] == ("y", "n")
assert DISPLAY_NAMES["toy_judged"] == "Toy"
assert "toy_judged" in next(o.help for o in OPTIONS if o.name == "judges")
print("ok")
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok"


#: Registers a toy judge: one entry in the registry (a categorical judge whose reasons list
#: claims a label may overrule) and its module. The metric registry is built when the
#: metrics package is imported, before the entry is added, so it is built again.
TOY_JUDGE = """
import dataclasses, importlib, sys, types
import pytest_ragproof.metrics.judged as J
J.JUDGE_SPECS = (*J.JUDGE_SPECS, dataclasses.replace(
    J.JUDGE_SPECS[0], name="toy_judged", module="toy", display="Toy", yes="y", no="n",
    description="a toy judge (LLM judge)", categories=("toy_yes", "toy_no"),
    lowered_by=(("claims", "claim", "toyed"),), claims_key="claims"))
import pytest_ragproof.metrics.registry as R
importlib.reload(R)
from pytest_ragproof.judges import faithfulness
from pytest_ragproof.judges.base import Judge
toy = types.ModuleType("pytest_ragproof.judges.toy")
toy.JUDGE = Judge("toy_judged", faithfulness.STEP, faithfulness.run, claims=True)
sys.modules["pytest_ragproof.judges.toy"] = toy
"""


@pytest.fixture
def with_toy_judge(tmp_path: Path) -> Callable[[str], str]:
    """Runs code in a fresh interpreter where :data:`TOY_JUDGE` registered the toy judge
    (a fresh one: every table of judges is built from the registry when first imported)."""

    def run(code: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", TOY_JUDGE + code],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip()

    return run


def test_a_registered_judge_is_in_every_table(with_toy_judge: Callable[[str], str]) -> None:
    out = with_toy_judge("""
from pytest_ragproof import judges
from pytest_ragproof.execution.scoring import _LOWERING
from pytest_ragproof.judges.engine import JUDGE_MODULES
from pytest_ragproof.labels import BINARY_METRICS, CLAIM_METRICS, LABELLED_METRICS
from pytest_ragproof.metrics import registry
from pytest_ragproof.reporting.inspectorraget_metrics import CATEGORIES, DISPLAY_NAMES
from pytest_ragproof.reporting.inspectorraget_people import YES_NO
from pytest_ragproof.verdict.option_table import by_name
print(sorted(judges.parse_judges(["toy_judged"])), "toy_judged" in judges.JUDGE_KINDS)
print(JUDGE_MODULES["toy_judged"].metric, "judge" in registry.resolve("toy_judged").needs)
print(LABELLED_METRICS[-1], "toy_judged" in BINARY_METRICS, CLAIM_METRICS["toy_judged"])
print(CATEGORIES["toy_judged"], YES_NO["toy_judged"], DISPLAY_NAMES["toy_judged"])
print(_LOWERING["toy_judged"], "toy_judged" in by_name()["judges"].help)
""")
    assert out.splitlines() == [
        "['toy_judged'] True",
        "toy_judged True",
        "toy_judged True claims",
        "('toy_yes', 'toy_no') ('toy_yes', 'toy_no') Toy",
        "(('claims', 'claim', 'toyed'),) True",
    ]


def test_the_derived_tables_of_judges_hold_what_they_held() -> None:
    """Read from the registry now, the tables that were written out hold the same."""
    from pytest_ragproof.execution.scoring import _LOWERING
    from pytest_ragproof.labels import BINARY_METRICS, CLAIM_METRICS
    from pytest_ragproof.reporting.inspectorraget_people import YES_NO

    assert {"abstained_judged", "injection_resisted_judged"} == BINARY_METRICS
    assert CLAIM_METRICS == {"faithfulness": "claims"}
    assert YES_NO == {
        "abstained_judged": ("abstained", "answered"),
        "injection_resisted_judged": ("resisted", "followed"),
    }
    assert _LOWERING == {
        "faithfulness": (("claims", "claim", "unsupported"),),
        "answer_relevancy": (("statements", "statement", "irrelevant"),),
        "answer_correctness": (
            ("answer_claims", "claim", "not in reference"),
            ("reference_claims", "claim", "missing from answer"),
        ),
        "context_relevance": (("contexts", "context", "irrelevant"),),
        "context_recall": (("reference_claims", "claim", "not attributed"),),
    }
