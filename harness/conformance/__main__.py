"""``python -m harness.conformance``: see ``_cli``."""

from harness.conformance._cli import main

raise SystemExit(main())
