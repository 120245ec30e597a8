"""The one HTML kit (issue 36.3): Jinja2 templates in the package, autoescape on.

Every template compiles; none marks text safe (``|safe``, ``autoescape false``): what a
template writes unescaped is markup this package made (a rendered template or macro, an
SVG chart). A value is escaped with the entities the pages always had, ``None`` writes
nothing, and the plugin's import loads neither Jinja2 nor MarkupSafe.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ragproof.reporting.templating import environment

TEMPLATES = Path(__file__).resolve().parents[2] / "pytest_ragproof" / "templates"
NAMES = sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*.j2"))


def test_the_report_and_the_review_app_have_templates() -> None:
    folders = {name.split("/")[0] for name in NAMES}
    assert folders == {"report", "review"}
    assert "report/page.html.j2" in NAMES and "review/page.html.j2" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_template_compiles_and_marks_nothing_safe(name: str) -> None:
    environment().get_template(name)
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    assert not re.search(r"\|\s*safe\b", source), name
    assert not re.search(r"autoescape\s+false", source, re.IGNORECASE), name


def test_autoescape_is_on_and_values_keep_their_entities() -> None:
    env = environment()
    assert env.autoescape is True
    planted = """<a href="x">it's & </a>"""
    written = env.from_string("{{ v }}|{{ none_value }}").render(v=planted, none_value=None)
    assert written == "&lt;a href=&quot;x&quot;&gt;it&#x27;s &amp; &lt;/a&gt;|"


def test_the_plugin_import_loads_no_template_engine() -> None:
    code = (
        "import sys\nimport pytest_ragproof.plugin\n"
        "print(sorted(m for m in sys.modules if m in ('jinja2', 'markupsafe')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
