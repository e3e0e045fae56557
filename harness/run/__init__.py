"""A run: plan cells (case x variant x lane), execute them through a backend, judge each outcome against its
expectation, combine per (case, lane), write results.json. ``_workflow`` strings the steps together.

``_child.py`` is the child runner every cell executes; it imports nothing from the harness (a cell's
environment has only the variant's packages), so keep this package's ``__init__`` empty of imports.
"""
