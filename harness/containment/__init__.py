"""Containment: every process the harness starts runs under ``_supervise.py`` (its own timeout, its tree
killed at the end and with the harness), bounded logs, the sandbox for builds and the seal for cells
(docs/security.md), and the one cached GPU probe.
"""
