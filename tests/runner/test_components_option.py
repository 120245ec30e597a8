"""--ragproof-components=on|off reaches RunConfig.components; anything else is refused."""

from __future__ import annotations

import pytest

import pytest_ragproof.plugin.options as options
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import make_config


def test_components_default_on_and_off() -> None:
    assert make_config().components is True
    assert make_config(components="off").components is False
    assert make_config(components=" ON ").components is True
    assert options.BY_NAME["components"].default == "on"


def test_components_bad_value_names_the_choices() -> None:
    with pytest.raises(ConfigError) as info:
        make_config(components="hide")
    assert str(info.value) == "--ragproof-components must be 'on' or 'off'; got 'hide'"
