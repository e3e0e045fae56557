"""How much the simulated GPU was used: a counter the pytest plugin reads around each test.

Kept apart from the simulation's internals, which only bump it (``_placement``); a plain module
attribute so bumping it costs one attribute store per placement.
"""

from __future__ import annotations

# tensors (storages) placed on the simulated GPU since the process started
placements = 0
