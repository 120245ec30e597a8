"""Datasets: the case model, loaders, canonical form, freezing and splits.

Importing this package imports pydantic; the plugin only does so once a
ragproof option is in use.
"""
