"""Environments: one venv per requirement set (uv, cached by content hash), a host's own torch linked in,
wheelhouses for offline hosts, the package index settings, release lookups, and pruning (``clean``).

``_index`` must stay standard-library only: ``harness/__init__`` and the noxfile import it.
"""
