"""The results document (``ragproof.results/1``): the one format every renderer reads.

Renderers (``reporting/``), baselines, merges and calibration read a run through
this package only; they never import the code that executed or decided the run.
"""
