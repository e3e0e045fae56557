"""Conformance of cuda-sim on real libraries' own test suites (issue 12 section 3).

Each library is one file under ``libraries/`` (or a maintainer's own file, ``--library-file``): its pinned
PyPI sdist, pins, selection and how its suite picks CUDA. Its selected tests run once plainly on the CPU and
once under ``pytest --cuda-sim``; every test that the simulated pass fails although the plain pass passed (or
skipped) it must have an entry in that file's ``triage:``. ``python -m harness.conformance`` (or
``nox -s conformance``) runs it; docs/conformance.md has the numbers. Not imported by cuda_sim.
"""
