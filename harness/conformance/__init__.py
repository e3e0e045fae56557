"""Conformance of cuda-sim on real libraries' own test suites (issue 12 section 3).

Each library of ``suites.yaml`` is taken from its pinned PyPI sdist; its selected tests run once plainly on
the CPU and once under ``pytest --cuda-sim``; every test that the simulated pass fails although the plain pass
passed (or skipped) it must have an entry in ``triage.yaml``. ``python -m harness.conformance`` (or
``nox -s conformance``) runs it; docs/conformance.md has the numbers. Not imported by cuda_sim.
"""
