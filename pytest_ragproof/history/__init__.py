"""Run history: every run's results in a database, for trends and comparisons.

``--ragproof-history`` records each pytest run, ``ragproof history add`` loads results
files (CI artifacts, merged shard results); ``ragproof history list|show|trend|compare``
read the store. One SQL layer (SQLAlchemy Core) serves an embedded SQLite file and a
PostgreSQL server shared by a team (docs/history.md).

Modules: :mod:`.target` (which store a value names; cheap), :mod:`.schema` (tables,
version, migrations), :mod:`.store` (opening, migrating, adding a run), :mod:`.rows`
(a results document as rows and back), :mod:`.queries` (the runs list, trends, one
run's cases, two runs compared: plain data for the CLI and the review app).
SQLAlchemy is imported only when a store is opened.
"""
