"""Cases: find ``cases/<id>/case.yaml``, validate it (schema, placeholders, soundness), build :class:`Case`.

Nothing here runs anything; the run pipeline (harness.run) takes the cases from here.
"""
