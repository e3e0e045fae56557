"""Import-compatibility shim: DeepSpeed 0.14.x against torch 2.13's elastic agent API (every lane).

``deepspeed/elasticity/elastic_agent.py`` (imported by ``import deepspeed``) does
``from torch.distributed.elastic.agent.server.api import log, _get_socket_with_port`` (0.14.0) or
``... import _get_socket_with_port`` (0.14.1+); torch 2.13 has neither name. The elastic agent is used
only by ``deepspeed --elastic_training`` and never by this repro, so the two names are provided only
for the import: ``log`` is a plain logger, ``_get_socket_with_port`` refuses to be called. Names torch
still has are left alone, and nothing inside DeepSpeed is touched.
"""

import logging

from torch.distributed.elastic.agent.server import api


def _get_socket_with_port() -> None:
    raise NotImplementedError("shim: torch 2.13 removed _get_socket_with_port; the DeepSpeed elastic agent "
                              "is not supported by this case")


if not hasattr(api, "log"):
    api.log = logging.getLogger("torch.distributed.elastic.agent.server.api")
if not hasattr(api, "_get_socket_with_port"):
    api._get_socket_with_port = _get_socket_with_port
