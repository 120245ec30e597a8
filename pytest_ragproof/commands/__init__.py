"""Subcommands of the ``ragproof`` CLI, one module each (see ``pytest_ragproof.cli``)."""
