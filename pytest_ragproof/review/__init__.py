"""``ragproof review``: a local web app where people review results and generated cases.

The app is a Starlette application made by :func:`pytest_ragproof.review.app.create_app`.
Each area of it is one router module that returns its routes: ``cases.py`` (one page
per case and pipeline of a results file, human verdicts written as labels),
``agreement.py`` (the judge against people, the figures ``judge-check`` prints) and
``dataset.py`` (approving, rejecting and editing generated cases). ``layout.py`` is
the page every area draws into, ``html.py`` the escaping every value goes through,
``security.py`` the token and origin checks in front of every route.

Nothing here is imported by the pytest plugin; starlette and uvicorn (the ``review``
extra) are imported only by the ``ragproof review`` command path.
"""
