"""ort_layouts: DirectML buffer tensor descriptors for ONNX layout operations.

Descriptors
    DataType, TensorFlags, BufferTensorDesc, PaddingMode, PaddingOp,
    calc_buffer_tensor_size, calculate_strides
Reference execution and comparison
    IdentityOp, execute, pack, unpack, Comparison, compare, diagnose
Errors
    OrtLayoutsError and its leaves (each also a ValueError / LookupError / RuntimeError)
"""

from ._compare import Comparison, compare
from ._descriptor import (
    MAX_DIMENSION_COUNT,
    MAX_ELEMENT_COUNT,
    MINIMUM_BUFFER_ALIGNMENT_IN_BYTES,
    BufferTensorDesc,
)
from ._diagnose import diagnose
from ._dtypes import DataType, TensorFlags
from ._errors import (
    DataTypeError,
    DescriptorError,
    LayoutError,
    ModelError,
    NotExpressibleError,
    OrtLayoutsError,
    ProviderError,
    ReportError,
    ShapeError,
)
from ._layout import NAMED_LAYOUTS, calculate_strides
from ._oracle import IdentityOp, execute, pack, unpack
from ._padding import PaddingMode, PaddingOp
from ._render import render_svg, render_text
from ._size import calc_buffer_tensor_size

__version__ = "0.1.0"

__all__ = [
    # descriptors
    "MAX_DIMENSION_COUNT",
    "MAX_ELEMENT_COUNT",
    "MINIMUM_BUFFER_ALIGNMENT_IN_BYTES",
    "NAMED_LAYOUTS",
    "BufferTensorDesc",
    "DataType",
    "PaddingMode",
    "PaddingOp",
    "TensorFlags",
    "calc_buffer_tensor_size",
    "calculate_strides",
    # pictures
    "render_svg",
    "render_text",
    # reference execution and comparison
    "Comparison",
    "IdentityOp",
    "compare",
    "diagnose",
    "execute",
    "pack",
    "unpack",
    # errors
    "DataTypeError",
    "DescriptorError",
    "LayoutError",
    "ModelError",
    "NotExpressibleError",
    "OrtLayoutsError",
    "ProviderError",
    "ReportError",
    "ShapeError",
]
