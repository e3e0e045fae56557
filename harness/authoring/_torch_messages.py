"""torch's well-known messages as reports quote them: without their class, with the head cut ("tensors to be on the
same device, but found at least two devices, cuda:0 and cpu!"), or with the reporter's words after them ("... same
device with Random"). Each shape gives torch's wording and class; _exception_line.py finds where a report states them.
"""

from __future__ import annotations

import re

# Well-known torch messages a report quotes without their class, often with the head cut ("tensors to be on the same
# device, but found at least two devices, cuda:0 and cpu!"): (the quoted part's shape, its head, torch's class).
_TORCH_MESSAGES = (
    (re.compile(r"(?:Expected all )?tensors to be on the same device(?:, but found at least two devices(?:, \S+ and "
                r"\S+?!(?: \(when checking argument[^)]{0,200}\))?)?)?"), "Expected all ", "RuntimeError"),
    (re.compile(r"Input type \([\w.]+\) and weight type \([\w.]+\) should be the same"), "Input ", "RuntimeError"),
    (re.compile(r"(?:[Ee]xpected )?scalar type \w+ but found \w+"), "expected ", "RuntimeError"),
    # the same said without "scalar type" ("Something like `expected BFloat16 but found Float`")
    (re.compile(r"[Ee]xpected (?:BFloat16|Half|Float|Double|Long|Int|Short|Bool|Byte|Char|ComplexFloat) but found \w+"),
     "expected ", "RuntimeError"),
    (re.compile(r"(?:[Ee]xpected )?device [\w:]+ but got device [\w:]+"), "expected ", "RuntimeError"),
    (re.compile(r"(?:Attempting to )?deserialize object on a CUDA device but torch\.cuda\.is_available\(\) is "
                r"False\."), "Attempting to ", "RuntimeError"),
    (re.compile(r"(?:mat1 and )?mat2 shapes cannot be multiplied \(\d+x\d+ and \d+x\d+\)"), "mat1 and ",
     "RuntimeError"),
    (re.compile(r"Expected one of [\w, ]{1,200} device type at start of device string: [\w:,-]+"), "Expected one of ",
     "RuntimeError"),
    (re.compile(r"CUDA out of memory\.?(?: Tried to allocate \d+(?:\.\d+)? [KMGT]iB)?"), "CUDA ",
     "torch.OutOfMemoryError"),
    (re.compile(r"Expected object of (?:device |scalar )?type \w+ but got (?:device |scalar )?type \w+ for argument "
                r"#\d+ '\w+'(?: in call to \w+)?"), "Expected ", "RuntimeError"),
    (re.compile(r"Trying to backward through the graph a second time"), "Trying ", "RuntimeError"),
    (re.compile(r"one of the variables needed for gradient computation has been modified by an inplace operation"
                r"(?:: \[[^\]]{1,200}\]\]? is at version \d+; expected version \d+ instead)?"), "one ", "RuntimeError"),
    (re.compile(r"element \d+ of tensors does not require grad and does not have a grad_fn"), "element ",
     "RuntimeError"),
    (re.compile(r"The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) at non-singleton dimension "
                r"\d+"), "The ", "RuntimeError"),
    (re.compile(r"Given groups=\d+, weight of size \[[\d, ]+\], expected input\[[\d, ]+\] to have \d+ channels, but "
                r"got \d+ channels instead"), "Given ", "RuntimeError"),
    (re.compile(r"Torch not compiled with CUDA enabled"), "Torch ", "AssertionError"),
    # the foreach/fused optimizers' grouping of a parameter's state by device and dtype (torch 2.x)
    (re.compile(r"Tensors of the same index must be on the same device and the same dtype(?: except `step` tensors "
                r"that can be CPU and float(?:32|32/64) notwithstanding)?"), "Tensors ", "RuntimeError"),
    # torch 1.12.0's Adam/AdamW `assert` on a loaded optimizer state (pytorch/pytorch#80809)
    (re.compile(r"If capturable=False, state_steps should not be CUDA tensors\.?"), "If ", "AssertionError"),
    (re.compile(r"Expected to have finished reduction in the prior iteration before starting a new one"), "Expected ",
     "RuntimeError"),
    # DataParallel's check of the module's device, indexing by indices on another device, Tensor.numpy() on CUDA
    (re.compile(r"module must have its parameters and buffers on device [\w:]+ \(device_ids\[0\]\) but found one of "
                r"them on device: [\w:]+"), "module ", "RuntimeError"),
    (re.compile(r"indices should be either on cpu or on the same device as the indexed tensor(?: \(\w+\))?"),
     "indices ", "RuntimeError"),
    (re.compile(r"can't convert (?:CUDA|cuda:\d+ device type) tensor to numpy\. Use Tensor\.cpu\(\) to copy the tensor "
                r"to host memory first\.?"), "can't ", "TypeError"),
    # training state: a scheduler or optimizer resumed from a checkpoint, a scaler, a state dict, a random generator
    (re.compile(r"param 'initial_lr' is not specified(?: in param_groups\[\d+\] when resuming an optimizer)?"),
     "param ", "KeyError"),
    (re.compile(r"loaded state dict (?:contains a parameter group that doesn't match the size of optimizer's group|has "
                r"a different number of parameter groups)"), "loaded ", "ValueError"),
    (re.compile(r"Attempting to unscale FP16 gradients\.?"), "Attempting ", "ValueError"),
    (re.compile(r"Error\(s\) in loading state_dict for \w+"), "Error(s) ", "RuntimeError"),
    # the lines of that message a report pastes without its head
    (re.compile(r"size mismatch for [\w.]+: copying a param with shape torch\.Size\(\[[\d, ]*\]\) from checkpoint, the "
                r"shape in current model is torch\.Size\(\[[\d, ]*\]\)\.?"), "size ", "RuntimeError"),
    (re.compile(r"(?:Missing|Unexpected) key\(s\) in state_dict: \"[\w.]+\""), "Missing ", "RuntimeError"),
    (re.compile(r"Weights only load failed\.?"), "Weights ", "_pickle.UnpicklingError"),
    (re.compile(r"Expected a '\w+' device type for generator but found '\w+'"), "Expected ", "RuntimeError"),
    (re.compile(r"Found dtype \w+ but expected \w+"), "Found ", "RuntimeError"),
    (re.compile(r"expected mat1 and mat2 to have the same dtype, but got: [\w:]+ != \w+"), "expected ", "RuntimeError"),
    # more device checks: cuDNN's RNN, a legacy backend check, stft's window, a distributed backend, a forked worker
    (re.compile(r"Input and parameter tensors are not at the same device, found input tensor at [\w:]+ and parameter "
                r"tensor at [\w:]+"), "Input ", "RuntimeError"),
    (re.compile(r"Expected object of backend \w+ but got backend \w+ for argument #\d+ '\w+'"), "Expected ",
     "RuntimeError"),
    (re.compile(r"stft input and window must be on the same device but got self on [\w:]+ and window on [\w:]+"),
     "stft ", "RuntimeError"),
    (re.compile(r"No backend type associated with device type \w+"), "No ", "RuntimeError"),
    (re.compile(r"Cannot re-initialize CUDA in forked subprocess\.?"), "Cannot ", "RuntimeError"),
    (re.compile(r"DataLoader worker \(pid\(s\) [\d, ]+\) exited unexpectedly"), "DataLoader ", "RuntimeError"),
    # pinning a CUDA tensor (a DataLoader's pin_memory over a dataset already on the GPU), a legacy device check
    (re.compile(r"cannot pin '[\w.]+'(?: only dense CPU tensors can be pinned)?"), "cannot ", "RuntimeError"),
    (re.compile(r"Tensor for '\w+' is on \w+, Tensor for argument #\d+ '\w+' is on \w+, but expected them to be on "
                r"\w+(?: \(while checking arguments for \w+\))?"), "Tensor ", "RuntimeError"))
# Messages whose class depends on the torch that raised it (a CUDA error is a RuntimeError before torch 2.8, an
# AcceleratorError after) or that Python raises: only where the message ends, for a title that adds words after it.
_ENDS_ONLY = (re.compile(r"CUDA error: (?:device-side assert triggered|an illegal memory access was encountered|"
                         r"invalid device ordinal|out of memory|no kernel image is available for execution on the "
                         r"device|misaligned address|unspecified launch failure|invalid argument|operation not "
                         r"supported on global/shared address space)"),
              # Python's own, said the same in every version
              re.compile(r"(?:too many|not enough) values to unpack \(expected \d+(?:, got \d+)?\)"),
              re.compile(r"(?:list|tuple|string) index out of range"),
              re.compile(r"maximum recursion depth exceeded(?: while calling a Python object| in comparison)?"),
              re.compile(r"(?:float |integer )?division (?:or modulo )?by zero"))


# What a title or a sentence adds after a library's message in the reporter's words ("... same device with Random,
# ADMMSLIM, and SLIMElastic", "... device string: train in configs/x.yaml"): a context word after the message's end.
_CONTEXT_AFTER = re.compile(r",?\s+(?:with|in|when|while|on|using|after|during|at|from|via|because|if|for|and then)\s",
                            re.IGNORECASE)


def library_words(message: str, sentence: str = "") -> str:
    """The message without the reporter's words after it, where it is one of torch's known messages: cut at the end
    of torch's wording when a context word ("with", "in", "when", ...) follows it; any other message as written.
    ``sentence``: the text the message was cut from, whose known message goes on past the cut (a quote inside it)."""
    for shape in (*(shape for shape, _, _ in _TORCH_MESSAGES), *_ENDS_ONLY):
        if sentence.startswith(message) and (whole := shape.match(sentence)) and whole.end() > len(message):
            message = sentence[:whole.end()]
        match = shape.match(message)
        if match is not None and match.end() < len(message) and _CONTEXT_AFTER.match(message, match.end()):
            return message[:match.end()].rstrip(" ,;:")
    return message


def torch_class(message: str) -> str | None:
    """torch's class for a message that starts as one of its well-known messages, else None."""
    return next((exception for shape, _, exception in _TORCH_MESSAGES if shape.match(message)), None)


def torch_fragment(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The last part of a well-known torch message the report quotes without any class: the message completed to
    torch's wording and torch's class, both said in the note (the report writes neither)."""
    for index in range(len(lines) - 1, -1, -1):
        for shape, head, exception in _TORCH_MESSAGES:
            if (match := shape.search(lines[index])) is not None:
                text = match.group()
                message = text if text.lower().startswith(head.lower()) else head + text
                return (index, exception, message, f"a quoted part of torch's message, completed to torch's wording; "
                        f"its class {exception} is torch's for that message (the report writes no class: check it)")
    return None
