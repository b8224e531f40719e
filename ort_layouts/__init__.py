"""ort_layouts: DirectML buffer tensor descriptors for ONNX layout operations.

Descriptors
    MAX_DIMENSION_COUNT, MAX_ELEMENT_COUNT, MINIMUM_BUFFER_ALIGNMENT_IN_BYTES, NAMED_LAYOUTS,
    BufferTensorDesc, DataType, TensorFlags, calc_buffer_tensor_size, calculate_strides
DirectML operators
    IdentityOp, PaddingMode, PaddingOp, Slice1Op, JoinOp, SplitOp, TileOp, DepthToSpaceOp,
    SpaceToDepthOp
Pictures
    render_svg, render_text
Reference execution and comparison
    Comparison, compare, execute, execute_all, pack, unpack, verify, verify_all
Diagnosis
    Diagnosis, Recovery, diagnose, explain
Validation engine
    Case, CaseResult, DeviceInfo, NodeTest, ProviderConfig, ProviderInfo, Status, build_model,
    default_ir_version, default_opset, default_provider, dml_operator, expected_output,
    list_providers, make_input, make_session, onnx_node_tests, reference_output,
    resolve_provider, run_cases, standard_suite
Reports
    Matrix, Report, ReportWriter, load_report, merge_reports, merge_shards, write_matrix,
    write_report
Models
    ConversionCheck, LayoutOp, check_conversion, convert_layout, export_test_dir, extract,
    model_cases, model_coverage, read_test_dir, write_test_dir
Errors
    ArgumentError, DataTypeError, DescriptorError, LayoutError, ModelError, NotExpressibleError,
    OrtLayoutsError, ProviderError, ProviderUnavailableError, ReportError, ShapeError (each also
    a ValueError, or RuntimeError; ArgumentError also a TypeError)
"""

# first: where this interpreter starts the command line, a Ctrl-C while the rest imports is one line
from ort_layouts import _startup  # noqa: F401
from ort_layouts._errors import (
    ArgumentError,
    DataTypeError,
    DescriptorError,
    LayoutError,
    ModelError,
    NotExpressibleError,
    OrtLayoutsError,
    ProviderError,
    ProviderUnavailableError,
    ReportError,
    ShapeError,
)
from ort_layouts.descriptors.buffer_tensor import (
    MAX_DIMENSION_COUNT,
    MAX_ELEMENT_COUNT,
    MINIMUM_BUFFER_ALIGNMENT_IN_BYTES,
    BufferTensorDesc,
)
from ort_layouts.descriptors.dtypes import DataType, TensorFlags
from ort_layouts.descriptors.layout import NAMED_LAYOUTS, calculate_strides
from ort_layouts.descriptors.size import calc_buffer_tensor_size
from ort_layouts.engine.diagnose import Diagnosis, diagnose, explain
from ort_layouts.engine.graphs import build_model, default_ir_version, default_opset
from ort_layouts.engine.onnx_node_tests import NodeTest, onnx_node_tests
from ort_layouts.engine.providers import (
    DeviceInfo,
    ProviderConfig,
    ProviderInfo,
    default_provider,
    list_providers,
    make_session,
    resolve_provider,
)
from ort_layouts.engine.recover import Recovery
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import standard_suite
from ort_layouts.models.convert import ConversionCheck, check_conversion, convert_layout
from ort_layouts.models.extract import LayoutOp, extract, model_cases, model_coverage
from ort_layouts.models.testdata import export_test_dir, read_test_dir, write_test_dir
from ort_layouts.operators.case import Case
from ort_layouts.operators.depth_space import DepthToSpaceOp, SpaceToDepthOp
from ort_layouts.operators.expected import dml_operator, expected_output, reference_output
from ort_layouts.operators.identity import IdentityOp
from ort_layouts.operators.join_split import JoinOp, SplitOp
from ort_layouts.operators.padding import PaddingMode, PaddingOp
from ort_layouts.operators.slice import Slice1Op
from ort_layouts.operators.tile import TileOp
from ort_layouts.operators.values import make_input
from ort_layouts.reference.buffers import pack, unpack
from ort_layouts.reference.compare import Comparison, compare
from ort_layouts.reference.execute import execute, execute_all, verify, verify_all
from ort_layouts.reports.merge import Matrix, merge_reports, merge_shards, write_matrix
from ort_layouts.reports.render import render_svg, render_text
from ort_layouts.reports.report import Report, load_report
from ort_layouts.reports.writer import ReportWriter, write_report

__version__ = "0.1.0"

__all__ = [
    # descriptors
    "MAX_DIMENSION_COUNT",
    "MAX_ELEMENT_COUNT",
    "MINIMUM_BUFFER_ALIGNMENT_IN_BYTES",
    "NAMED_LAYOUTS",
    "BufferTensorDesc",
    "DataType",
    "TensorFlags",
    "calc_buffer_tensor_size",
    "calculate_strides",
    # DirectML operators
    "DepthToSpaceOp",
    "IdentityOp",
    "JoinOp",
    "PaddingMode",
    "PaddingOp",
    "Slice1Op",
    "SpaceToDepthOp",
    "SplitOp",
    "TileOp",
    # pictures
    "render_svg",
    "render_text",
    # reference execution and comparison
    "Comparison",
    "compare",
    "execute",
    "execute_all",
    "pack",
    "unpack",
    "verify",
    "verify_all",
    # diagnosis
    "Diagnosis",
    "Recovery",
    "diagnose",
    "explain",
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
    "merge_shards",
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
    "model_coverage",
    "read_test_dir",
    "write_test_dir",
    # errors
    "ArgumentError",
    "DataTypeError",
    "DescriptorError",
    "LayoutError",
    "ModelError",
    "NotExpressibleError",
    "OrtLayoutsError",
    "ProviderError",
    "ProviderUnavailableError",
    "ReportError",
    "ShapeError",
]
