"""ort_layouts: DirectML buffer tensor descriptors for ONNX layout operations.

Descriptors
    DataType, TensorFlags, BufferTensorDesc, PaddingMode, PaddingOp,
    calc_buffer_tensor_size, calculate_strides
Reference execution and comparison
    IdentityOp, execute, pack, unpack, Comparison, compare, diagnose, verify
Validation engine
    Case, CaseResult, Status, standard_suite, run_cases, build_model, list_providers,
    default_provider, resolve_provider, ProviderConfig, make_session, onnx_node_tests
Reports
    Report, ReportWriter, load_report, write_report, Matrix, merge_reports, write_matrix
Models
    extract, LayoutOp, model_cases, convert_layout, check_conversion, ConversionCheck,
    export_test_dir, write_test_dir, read_test_dir
Errors
    OrtLayoutsError and its leaves (each also a ValueError / LookupError / RuntimeError)
"""

from ._case import Case
from ._compare import Comparison, compare
from ._convert import ConversionCheck, check_conversion, convert_layout
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
from ._extract import LayoutOp, extract, model_cases
from ._graphs import build_model, default_ir_version, default_opset
from ._layout import NAMED_LAYOUTS, calculate_strides
from ._merge import Matrix, merge_reports, write_matrix
from ._onnx_node_tests import NodeTest, onnx_node_tests
from ._oracle import IdentityOp, execute, pack, unpack, verify
from ._padding import PaddingMode, PaddingOp
from ._providers import (
    DeviceInfo,
    ProviderConfig,
    ProviderInfo,
    default_provider,
    list_providers,
    make_session,
    resolve_provider,
)
from ._render import render_svg, render_text
from ._report import Report, ReportWriter, load_report, write_report
from ._result import CaseResult, Status
from ._runner import run_cases
from ._size import calc_buffer_tensor_size
from ._suite import dml_operator, expected_output, make_input, reference_output, standard_suite
from ._testdata import export_test_dir, read_test_dir, write_test_dir

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
    "verify",
    # validation engine
    "Case",
    "CaseResult",
    "DeviceInfo",
    "NodeTest",
    "ProviderConfig",
    "ProviderInfo",
    "Status",
    "build_model",
    "default_ir_version",
    "default_opset",
    "default_provider",
    "dml_operator",
    "expected_output",
    "list_providers",
    "make_input",
    "make_session",
    "onnx_node_tests",
    "reference_output",
    "resolve_provider",
    "run_cases",
    "standard_suite",
    # reports
    "Matrix",
    "Report",
    "ReportWriter",
    "load_report",
    "merge_reports",
    "write_matrix",
    "write_report",
    # models
    "ConversionCheck",
    "LayoutOp",
    "check_conversion",
    "convert_layout",
    "export_test_dir",
    "extract",
    "model_cases",
    "read_test_dir",
    "write_test_dir",
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
