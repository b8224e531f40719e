"""DML_OPERATOR_ELEMENT_WISE_IDENTITY: the DirectML operator behind every pure data movement.

The DML EP runs Transpose as an identity whose input descriptor has permuted strides, Expand as
one whose input has stride-0 broadcast axes (and Reshape, Squeeze, Unsqueeze, Flatten and
Identity as a copy between two packed descriptors of the same buffer size). The reference reads
every element of the input buffer through the input descriptor and writes it through the
output descriptor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ort_layouts._errors import DescriptorError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc, check_cpp_name, cpp_struct
from ort_layouts.operators.desc_fields import check_tensor, read_desc_dict, read_tensor
from ort_layouts.reference.buffers import check_views
from ort_layouts.reference.compare import views_equal
from ort_layouts.reference.copy import strided_copy

__all__ = ["IDENTITY", "IdentityOp", "identity_dict"]

IDENTITY = "DML_OPERATOR_ELEMENT_WISE_IDENTITY"


#: the notes :func:`identity_dict` may add, which :meth:`IdentityOp.from_dict` reads past
IDENTITY_NOTES = ("kernel", "alias", "note")


def identity_dict(inp: BufferTensorDesc, outp: BufferTensorDesc, **notes: Any) -> dict[str, Any]:
    """An identity as ``IdentityOp.to_dict`` writes it, with ``notes`` (keys of
    :data:`IDENTITY_NOTES`), for descriptions whose input and output sizes differ (a reshape
    reads one buffer with two shapes)."""
    unknown = sorted(set(notes) - set(IDENTITY_NOTES))
    if unknown:
        raise DescriptorError("dict-keys", unknown, f"identity notes {unknown} are not known; valid: "
                                                    f"{list(IDENTITY_NOTES)}")
    return {"operator": IDENTITY, "input": inp.to_dict(), "output": outp.to_dict(), **notes}


@dataclasses.dataclass(frozen=True, slots=True)
class IdentityOp:
    """DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC (no scale/bias): copy input to output.

    Attributes:
        input: the descriptor the input buffer is read through.
        output: the descriptor the output buffer is written through (same data type and sizes),
            no two of its elements at one buffer offset. With a broadcast (stride 0) or otherwise
            overlapping output, which element's value lands at a shared offset is undefined:
            DirectML calls overlapping output writes invalid, with no guarantee which write wins
            (``DML_SCATTER_OPERATOR_DESC``), so such an operator is refused when it is made.

    Raises:
        DescriptorError: a field is no BufferTensorDesc ("tensor"), or the output overlaps
            itself ("output-overlap").
        ShapeError: the data types or sizes differ.
    """

    input: BufferTensorDesc
    output: BufferTensorDesc

    def __post_init__(self) -> None:
        check_tensor(self.input, "IdentityOp input")
        check_tensor(self.output, "IdentityOp output")
        if self.input.data_type != self.output.data_type:
            raise ShapeError(
                f"identity input data type {self.input.data_type.name} differs from output "
                f"{self.output.data_type.name}; ELEMENT_WISE_IDENTITY needs the same type")
        if self.input.sizes != self.output.sizes:
            raise ShapeError(
                f"identity input sizes {list(self.input.sizes)} differ from output sizes "
                f"{list(self.output.sizes)}; ELEMENT_WISE_IDENTITY needs the same sizes")
        if self.output.strides is not None:  # packed strides give every element its own offset
            self.output.validate(is_output=True)

    @property
    def dimension_count(self) -> int:
        return self.input.dimension_count

    def to_cpp(self, name: str = "identity") -> str:
        """C++ initializers of the descriptors, of DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC (no
        scale and bias: ScaleBias is null, as the DML EP builds a Transpose, an Expand or a
        Reshape) and of the DML_OPERATOR_DESC that names it."""
        check_cpp_name(name)
        fields = [(f"&{name}InputTensor", "InputTensor"), (f"&{name}OutputTensor", "OutputTensor"),
                  ("nullptr", "ScaleBias")]
        return "\n".join([self.input.to_cpp(f"{name}Input"), self.output.to_cpp(f"{name}Output"),
                          *cpp_struct("DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC", name, fields),
                          f"DML_OPERATOR_DESC {name}Op = {{{IDENTITY}, &{name}}};"])

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        """Copy every element of the input view ``src`` into the output view ``dst``."""
        check_views(dst, src, self.output, self.input, threads, writeable=True)
        strided_copy(dst, src, threads=threads)

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        """Whether ``got`` equals the input view ``src`` bit for bit."""
        check_views(got, src, self.output, self.input, threads, writeable=False, names=("got", "src"))
        return views_equal(src, got, threads=threads)

    def buffer_offsets_in_elements(self, index: Sequence[int]) -> tuple[int | None, int]:
        """(input buffer offset read for output ``index``, output buffer offset), in elements."""
        return self.input.offset_of(index), self.output.offset_of(index)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator": IDENTITY,
            "input": self.input.to_dict(),
            "output": self.output.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IdentityOp:
        """Inverse of :meth:`to_dict` (and of :func:`identity_dict`, whose notes it reads past).

        Raises:
            DescriptorError: ``data`` is no such dict (as ``read_desc_dict`` checks it), a
                descriptor dict in it is bad (as :meth:`BufferTensorDesc.from_dict` checks it),
                or the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, IDENTITY, required=("input", "output"), optional=IDENTITY_NOTES)
        return cls(read_tensor(fields, "input", IDENTITY), read_tensor(fields, "output", IDENTITY))
