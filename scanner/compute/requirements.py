"""The GPU fact of instance types chosen by attributes (EC2 attribute-based instance type
selection, ``InstanceRequirements``): which accelerators the requirement admits.

The attributes are a conjunction: a type matches only when it matches every attribute that is
set. So the requirement asks for GPU (or Neuron) compute when an attribute that admits only
accelerated types (``AcceleratorTypes``, ``AcceleratorManufacturers``, ``AcceleratorNames``,
or ``AllowedInstanceTypes`` naming only GPU families) admits only GPU or Neuron accelerators;
it excludes them with ``AcceleratorCount.Max`` 0 or with allowed types that name no GPU family
(a wildcard such as ``t*`` that would also match ``trn1`` does not ask for it).
``AcceleratorCount.Min`` >= 1 alone asks for accelerators of any kind (GPU, Neuron, FPGA or
media), and an attribute that admits both GPU and FPGA values does too: whether that is GPU
compute is not known. A requirement that names no accelerator attribute does not ask for GPUs
(EC2 may still pick any type; it is judged as what it asks for, CPU compute).
"""

from __future__ import annotations

from typing import Any

from scanner.catalog import is_gpu_type
from scanner.compute.values import as_list, to_int
from scanner.compute.view import GpuRequirement
from scanner.model import Ref, Unknown

# Accelerator values that are GPU or Neuron (AWS Inferentia / Trainium) compute, per attribute.
GPU_TYPES = frozenset({"gpu", "inference"})
OTHER_TYPES = frozenset({"fpga", "media"})
GPU_MANUFACTURERS = frozenset({"nvidia", "amd", "amazon-web-services", "habana"})
OTHER_MANUFACTURERS = frozenset({"xilinx"})
OTHER_NAMES = frozenset({"vu9p"})  # the Xilinx FPGA of f1; every other name is a GPU or Neuron
# A pattern naming a whole letter family: every p*, g*, dl*, inf*, trn* type is GPU compute.
_GPU_LETTERS = ("p", "g", "gr", "dl", "inf", "trn")


def gpu_requirement(value: Any, path: str) -> GpuRequirement | None:
    """The GPU fact of an ``InstanceRequirements`` value (None when there is none)."""
    if value is None or value == {} or value == []:
        return None
    if isinstance(value, Unknown | Ref):
        return GpuRequirement(Unknown(f"{path} is not known"), path)
    if not isinstance(value, dict):
        return GpuRequirement(Unknown(f"{path} is not an object"), path)
    count = value.get("AcceleratorCount")
    high = to_int(count.get("Max")) if isinstance(count, dict) else None
    low = to_int(count.get("Min")) if isinstance(count, dict) else None
    if isinstance(count, Unknown):
        high = low = count
    if high == 0:
        return GpuRequirement(False, f"{path}.AcceleratorCount.Max", "AcceleratorCount max 0")
    verdicts: list[tuple[bool | Unknown, str]] = []
    for key, gpu, other in (("AcceleratorTypes", GPU_TYPES, OTHER_TYPES),
                            ("AcceleratorManufacturers", GPU_MANUFACTURERS, OTHER_MANUFACTURERS),
                            ("AcceleratorNames", None, OTHER_NAMES)):
        verdict = _admits_gpu_only(value.get(key), gpu, other, f"{path}.{key}")
        if verdict is not None:
            verdicts.append((verdict, f"{key} {_shown(value.get(key))}"))
    allowed = _allowed_types(value.get("AllowedInstanceTypes"), f"{path}.AllowedInstanceTypes")
    if allowed is not None:
        shown = _shown(value.get("AllowedInstanceTypes"))
        verdicts.append((allowed, f"AllowedInstanceTypes {shown}"))
    detail = ", ".join(text for _v, text in verdicts)
    if any(v is False for v, _t in verdicts):
        return GpuRequirement(False, path, detail)
    if any(v is True for v, _t in verdicts):
        return GpuRequirement(True, path, detail)
    unknown = next((v for v, _t in verdicts if isinstance(v, Unknown)), None)
    if unknown is not None:
        return GpuRequirement(unknown, path, detail)
    if isinstance(low, Unknown) or isinstance(high, Unknown):
        return GpuRequirement(Unknown(f"{path}.AcceleratorCount is not known"), path)
    if isinstance(low, int) and low >= 1:
        return GpuRequirement(Unknown(
            f"{path} asks for at least {low} accelerator(s) of any kind (GPU, Neuron, FPGA or "
            "media): whether they are GPUs is not known"), path, f"AcceleratorCount min {low}")
    return GpuRequirement(False, path, "no accelerator attribute")


def _shown(value: Any) -> str:
    items = as_list(value)
    return "[" + ", ".join(str(i) for i in items[:6]) + (", …" if len(items) > 6 else "") + "]"


def _admits_gpu_only(value: Any, gpu: frozenset[str] | None, other: frozenset[str],
                     path: str) -> bool | Unknown | None:
    """True: every value is a GPU/Neuron one; False: none is (only other accelerators);
    Unknown: some of both, or a value not known; None: the attribute is not set."""
    if value is None or value == []:
        return None
    if isinstance(value, Unknown | Ref):
        return Unknown(f"{path} is not known")
    values = [v for v in as_list(value) if v is not None]
    if any(not isinstance(v, str) for v in values):
        return Unknown(f"{path}: a value is not known")
    names = {v.strip().lower() for v in values}
    gpus = {n for n in names if (n in gpu if gpu is not None else n not in other)}
    if gpus == names:
        return True
    if not gpus:
        return False
    return Unknown(f"{path} admits GPU and other accelerators ({', '.join(sorted(names))})")


def _allowed_types(value: Any, path: str) -> bool | Unknown | None:
    if value is None or value == []:
        return None
    if isinstance(value, Unknown | Ref):
        return Unknown(f"{path} is not known")
    items = as_list(value)
    if any(not isinstance(p, str) for p in items):
        return Unknown(f"{path}: a type is not known")
    verdicts = {_pattern_is_gpu(p) for p in items}
    if verdicts == {True}:
        return True
    if verdicts == {False}:
        return False
    return Unknown(f"{path} names GPU and CPU types")


def _pattern_is_gpu(pattern: str) -> bool:
    """Does the pattern name GPU (or Neuron) types? ``g5.*``, ``p4d.24xlarge``, ``g*`` -> True;
    ``m5.*`` -> False; ``t*`` or ``*`` -> False: they may match trn1 or g5 too, but they do not
    ask for them (as a requirement without accelerator attributes does not)."""
    text = pattern.strip().lower()
    prefix = text.split("*", 1)[0].split("?", 1)[0]
    if is_gpu_type(prefix):
        return True
    return ("*" in text or "?" in text) and prefix in _GPU_LETTERS
