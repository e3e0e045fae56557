"""Printing a tensor under the simulation gives the text a GPU host prints.

``Tensor.__repr__`` is served by cuda_sim/_methods.py ``_repr``: values formatted with the
simulation off, the rest of the text (``device='cuda:0'``, ``dtype=``, ``grad_fn=``) by torch's
own ``_str_intern`` with the placement mode on. The reference here is torch's formatter run
entirely under the placement mode (``torch._tensor_str._str`` called directly: every small op of
it answered by the simulation, as before the shortcut), plus literal texts a CUDA host prints
(torch/_tensor_str.py: ``device='cuda:0'`` is the first suffix, wrapped like the others).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from cuda_sim import simulate

MAKERS: dict[str, Callable[[], torch.Tensor]] = {
    "cuda float": lambda: torch.randn(3, 4, device="cuda"),
    "cuda scalar": lambda: torch.tensor(1.5, device="cuda"),
    "cuda empty": lambda: torch.zeros(0, device="cuda"),
    "cuda empty 2-d": lambda: torch.zeros(0, 3, device="cuda", dtype=torch.int32),
    "cuda float64": lambda: torch.randn(3, dtype=torch.float64, device="cuda"),
    "cuda half, summarized": lambda: torch.randn(100, 100, device="cuda").half(),
    "cuda long, summarized": lambda: torch.arange(3000, device="cuda"),
    "cuda bool": lambda: torch.tensor([True, False], device="cuda"),
    "cuda complex": lambda: torch.randn(2, dtype=torch.complex64, device="cuda"),
    "cuda conj of neg": lambda: torch.ones(2, 2, dtype=torch.complex64, device="cuda").neg().conj(),
    "cuda grad_fn": lambda: torch.randn(2, 2, device="cuda", requires_grad=True) * 2,
    "cuda leaf requiring grad": lambda: torch.randn(2, device="cuda", requires_grad=True),
    "cuda parameter": lambda: torch.nn.Parameter(torch.randn(2, device="cuda")),
    "cuda wide row (suffix wraps)": lambda: torch.arange(15, device="cuda", dtype=torch.float64) * 1e6,
    "cuda sparse": lambda: torch.eye(3, device="cuda").to_sparse(),
    "cuda view": lambda: torch.randn(4, 4, device="cuda")[1:3, ::2],
    "cpu float": lambda: torch.randn(2, 3),
    "cpu rng state": torch.get_rng_state,
    "cpu grad_fn": lambda: torch.randn(2, requires_grad=True) * 3,
    "cpu parameter": lambda: torch.nn.Parameter(torch.randn(2)),
    "meta": lambda: torch.empty(2, 3, device="meta"),
    "cpu after .cpu()": lambda: torch.randn(3, device="cuda").cpu(),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_repr_is_the_text_of_torchs_formatter_run_under_the_simulation(name: str):
    torch.manual_seed(0)
    with simulate():
        t = MAKERS[name]()
        reference = torch._tensor_str._str(t)  # the whole formatter under the placement mode
        if isinstance(t, torch.nn.Parameter):
            reference = "Parameter containing:\n" + reference
        assert repr(t) == reference
        assert str(t) == reference
        if t.dim():
            assert f"{t}" == reference  # Tensor.__format__ -> object.__format__ -> str
        else:
            assert f"{t:.2f}" == f"{t.item():.2f}"


def test_repr_names_the_simulated_gpu_as_a_cuda_host_prints_it(capsys: pytest.CaptureFixture[str]):
    with simulate():
        print(torch.arange(3.0, device="cuda"))
        print(torch.arange(3.0, device="cuda", requires_grad=True) * 2)
        print(torch.nn.Parameter(torch.zeros(2, device="cuda")))
        print(torch.ones(2, dtype=torch.float64, device="cuda"))
        print(torch.arange(3.0))
        print(torch.zeros(0, device="cuda"))
        print(torch.arange(15, device="cuda", dtype=torch.float64) * 1e6)
    assert capsys.readouterr().out.splitlines() == [
        "tensor([0., 1., 2.], device='cuda:0')",
        "tensor([0., 2., 4.], device='cuda:0', grad_fn=<MulBackward0>)",
        "Parameter containing:",
        "tensor([0., 0.], device='cuda:0', requires_grad=True)",
        "tensor([1., 1.], device='cuda:0', dtype=torch.float64)",
        "tensor([0., 1., 2.])",
        "tensor([], device='cuda:0')",
        "tensor([       0.,  1000000.,  2000000.,  3000000.,  4000000.,  5000000.,",
        "         6000000.,  7000000.,  8000000.,  9000000., 10000000., 11000000.,",
        "        12000000., 13000000., 14000000.], device='cuda:0', dtype=torch.float64)",
    ]


def test_repr_follows_print_options():
    with simulate():
        t = (torch.arange(10.0, device="cuda") + 0.5) / 3
        torch.set_printoptions(precision=2, threshold=5, edgeitems=1)
        try:
            text = repr(t)
        finally:
            torch.set_printoptions(profile="default")
    assert text == "tensor([0.17,  ..., 3.17], device='cuda:0')"  # torch's own spacing
