"""``harness.sim``, the simulator's old import name, stays an alias of ``cuda_sim`` for one release."""

from __future__ import annotations

import importlib

import cuda_sim
import cuda_sim._crash
import cuda_sim.pytest_plugin


def test_the_old_names_are_the_same_modules():
    old = importlib.import_module("harness.sim")
    assert old.install is cuda_sim.install and old.simulate is cuda_sim.simulate
    assert old.NotSimulatedError is cuda_sim.NotSimulatedError and old.__version__ == cuda_sim.__version__
    # one simulator, not a second copy with its own state
    assert importlib.import_module("harness.sim._crash") is cuda_sim._crash
    assert importlib.import_module("harness.sim.pytest_plugin") is cuda_sim.pytest_plugin
    from harness.sim._startup import PTH_LINE  # the from-import form resolves too

    assert PTH_LINE == importlib.import_module("cuda_sim._startup").PTH_LINE
