"""``python -m harness``: the repro-matrix command line."""

from harness._cli import main

raise SystemExit(main())
