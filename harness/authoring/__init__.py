"""Authoring: ``new`` drafts a case from a bug report, ``bisect`` runs a case over a package's releases.

``_new`` (the command) -> ``_bugreport`` (parse the pasted report: ``_lines``, ``_traceback``, ``_prose``,
``_exception_line``; ``_envlist`` its environment listing) -> ``_draft`` (what the case should say: ``_owners``,
``_signature``, ``_expect``, ``_title``) -> ``_skeleton`` (the case.yaml and repro.py text). ``_bisect`` is apart.
"""
