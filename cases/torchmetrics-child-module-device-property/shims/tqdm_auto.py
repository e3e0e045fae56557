"""Import-compatibility shim: torchmetrics 0.5.1 annotates with ``tqdm.auto.tqdm`` after a bare ``import tqdm``.

``torchmetrics/functional/text/bert.py`` (imported by ``import torchmetrics``) does ``import tqdm`` when tqdm
is installed and then uses ``tqdm.auto.tqdm`` in a function annotation at import time; that attribute
exists only once some other package has imported ``tqdm.auto`` (in 2021, transformers did). Importing the
submodule here makes the name resolvable; nothing in torchmetrics is changed and BERTScore is not used.
"""

import tqdm.auto  # noqa: F401
