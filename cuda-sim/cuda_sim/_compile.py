"""``torch.compile`` under the simulation: compiled functions and modules run eagerly.

Dynamo cannot trace through the simulation: its dispatch mode is not an "infra" mode, so dynamo
skips every frame ("non-infra torch dispatch mode present"), and with ``fullgraph=True`` that skip
is an error ("found no compiled frames" / "Skip calling torch.compiler.disable()d function") where a
GPU host compiles one graph. While a simulation is active, dynamo's stance is ``force_eager``
(``torch.compiler.set_stance``): every ``torch.compile``d callable, ``fullgraph=True`` included,
runs its Python eagerly, so both simulation modes see each operator and the device checks happen
as in any eager run. The previous stance comes back when the simulation ends.

The simulation never imports ``torch._dynamo`` (seconds): the stance is set when the program
imports it, or at once if it is loaded already.
"""

from __future__ import annotations

import types
from typing import Any

from cuda_sim._imports import AfterImport

STANCE = "force_eager"
_MODULE = "torch._dynamo.eval_frame"


class EagerCompile:
    def __init__(self) -> None:
        self._hook: AfterImport | None = None
        self._prior: Any = None
        self._ours: Any = None

    def activate(self) -> None:
        self._hook = AfterImport(_MODULE, self._set)
        self._hook.install()

    def deactivate(self) -> None:
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        if self._ours is None:
            return
        import torch._dynamo.eval_frame as eval_frame

        if eval_frame._stance is self._ours:  # the program did not choose another stance since
            eval_frame._set_stance(self._prior)
        self._ours = self._prior = None

    def _set(self, eval_frame: types.ModuleType) -> None:
        ours = eval_frame.DynamoStance(STANCE)
        self._prior = eval_frame._set_stance(ours)
        self._ours = ours
