"""The pytest runner's library half: configuration, pipeline calls, scoring, gates, reports.

Nothing here is imported until a ragproof option or marker is in use.
"""
