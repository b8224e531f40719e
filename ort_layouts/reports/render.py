"""Pictures of descriptors, drawn the way DirectML's documentation draws them.

A picture has a logical view (one letter per distinct buffer element: ``A B C`` ..., so a
broadcast row repeats its letters; or the values, when a buffer is given) and the buffer as an
Offset / Value table in which bytes that belong to no element show as ``x``. ``render_text`` is
for a terminal, ``render_svg`` for documents.

Both also draw a DirectML operator, chosen by the operator itself (its class, or the
``"operator"`` field of its ``to_dict``: :func:`operator_from_dict`): a :class:`PaddingOp`
(DML_OPERATOR_PADDING1: input, and output with the pad cells marked), and SLICE1, TILE,
DEPTH_TO_SPACE1, SPACE_TO_DEPTH, JOIN and SPLIT as each input tensor (letters; elements no output
reads in lowercase, grey) and each output tensor with the letter of the input element it reads, as the
operator's ``buffer_offsets_in_elements`` says; an ELEMENT_WISE_IDENTITY is drawn as its input
descriptor, as the EP reads it.

>>> print(render_text(BufferTensorDesc("float32", (2, 3), (0, 1))))
FLOAT32 sizes [2, 3] strides [0, 1], 12 bytes, broadcast axes [0]
Logical view:
A B C
A B C
Buffer (elements):
Offset: | 0 | 1 | 2 |
Value:  | A | B | C |
"""

from __future__ import annotations

import colorsys
import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ort_layouts._errors import DataTypeError, DescriptorError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.operators.depth_space import (
    DEPTH_TO_SPACE1,
    SPACE_TO_DEPTH,
    DepthToSpaceOp,
    SpaceToDepthOp,
)
from ort_layouts.operators.identity import IDENTITY, IdentityOp
from ort_layouts.operators.join_split import JOIN, SPLIT, JoinOp, SplitOp
from ort_layouts.operators.padding import PADDING1, PaddingMode, PaddingOp
from ort_layouts.operators.slice import SLICE1, Slice1Op
from ort_layouts.operators.tile import TILE, TileOp

__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "DRAWN_OPERATORS",
    "MAX_DRAWN_ELEMENTS",
    "Drawable",
    "element_labels",
    "operator_from_dict",
    "render_svg",
    "render_text",
]

#: what the pictures draw: a descriptor, or one of the DirectML operators of DRAWN_OPERATORS
Drawable: TypeAlias = (BufferTensorDesc | IdentityOp | PaddingOp | Slice1Op | TileOp | DepthToSpaceOp
                       | SpaceToDepthOp | JoinOp | SplitOp)
_OperatorClass: TypeAlias = (type[IdentityOp] | type[PaddingOp] | type[Slice1Op] | type[TileOp]
                             | type[DepthToSpaceOp] | type[SpaceToDepthOp] | type[JoinOp] | type[SplitOp])

#: the DirectML operators drawn, by the ``"operator"`` field of their ``to_dict``
DRAWN_OPERATORS: dict[str, _OperatorClass] = {
    IDENTITY: IdentityOp, PADDING1: PaddingOp, SLICE1: Slice1Op, TILE: TileOp,
    DEPTH_TO_SPACE1: DepthToSpaceOp, SPACE_TO_DEPTH: SpaceToDepthOp, JOIN: JoinOp, SPLIT: SplitOp,
}

DEFAULT_MAX_ELEMENTS = 512  # logical elements drawn before a picture is refused
#: the largest max_elements a picture takes: 256 x 256 cells (a text picture of about 1 MB, an
#: SVG of about 30 MB, a second to draw); a larger one is refused before any work, so that no
#: picture makes arrays the size of a whole large tensor
MAX_DRAWN_ELEMENTS = 2**16
_COLUMNS_PER_LINE = 16  # buffer table columns per text line

_PADDING = "x"  # a buffer element that belongs to no logical element
_CONSTANT_PAD = "."  # an output cell that holds Pad's constant


@dataclasses.dataclass(frozen=True, slots=True)
class _Cell:
    text: str
    kind: str  # "element", "padding" (buffer byte of no element), "pad" (Pad output cell)
    key: int | None = None  # buffer offset, or input element, that colours the cell


@dataclasses.dataclass(frozen=True, slots=True)
class _Grid:
    label: str  # "" or the leading index, e.g. "[0, 1, :, :]"
    rows: tuple[tuple[_Cell, ...], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class _Panel:
    title: str
    grids: tuple[_Grid, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class _Strip:
    cells: tuple[_Cell, ...]  # cell i is buffer offset i
    hidden: int  # offsets past the last shown


@dataclasses.dataclass(frozen=True, slots=True)
class _Picture:
    header: str
    panels: tuple[_Panel, ...]
    strip: _Strip | None


def element_labels(count: int) -> list[str]:
    """Spreadsheet-style labels: A..Z, AA, AB, ...

    >>> element_labels(3), element_labels(28)[-2:]
    (['A', 'B', 'C'], ['AA', 'AB'])
    """
    out = []
    for i in range(count):
        label, n = "", i + 1
        while n:
            n, r = divmod(n - 1, 26)
            label = chr(ord("A") + r) + label
        out.append(label)
    return out


def _offsets(desc: BufferTensorDesc) -> np.ndarray:
    """Buffer offset (elements) of every logical element, shaped like ``desc.sizes``."""
    out = np.zeros(desc.sizes, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(desc.sizes, desc.effective_strides, strict=True)):
        shape = [1] * desc.dimension_count
        shape[axis] = n
        out = out + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return out


def _check_size(what: str, count: int, max_elements: int) -> None:
    if (isinstance(max_elements, bool) or not isinstance(max_elements, int)
            or not 1 <= max_elements <= MAX_DRAWN_ELEMENTS):
        raise ShapeError(f"max_elements {max_elements!r} is not valid; valid: an integer in "
                         f"1..{MAX_DRAWN_ELEMENTS} (MAX_DRAWN_ELEMENTS, the most a picture draws)")
    if count > MAX_DRAWN_ELEMENTS:
        raise ShapeError(f"{what} has {count} elements, more than a picture draws "
                         f"(MAX_DRAWN_ELEMENTS, {MAX_DRAWN_ELEMENTS}); draw a smaller descriptor")
    if count > max_elements:
        raise ShapeError(
            f"{what} has {count} elements, more than max_elements={max_elements}; pass a larger "
            f"max_elements (up to {MAX_DRAWN_ELEMENTS}) to draw it anyway, or draw a smaller descriptor")


def _format_value(value: np.generic) -> str:
    if isinstance(value, np.floating):
        return np.format_float_positional(value, trim="-") if np.isfinite(value) else str(value)
    return str(value)


def _grids(cells: np.ndarray, leading_labels: bool) -> tuple[_Grid, ...]:
    """Split an array of cells into 2D grids over its leading axes."""
    if cells.ndim == 1:
        return (_Grid("", (tuple(cells.tolist()),)),)
    lead = cells.shape[:-2]
    grids = []
    for index in np.ndindex(*lead):
        label = ""
        if leading_labels and lead:
            label = "[" + ", ".join([*map(str, index), ":", ":"]) + "]"
        block = cells[index]
        grids.append(_Grid(label, tuple(tuple(row) for row in block.tolist())))
    return tuple(grids)


def _typed_buffer(desc: BufferTensorDesc, buffer: Any) -> np.ndarray:
    try:
        dtype = desc.data_type.to_numpy()
    except DataTypeError as e:
        raise DataTypeError(f"cannot draw the values of a {desc.data_type.name} buffer: {e}") from e
    desc.view(buffer)  # checks the buffer size
    raw = np.frombuffer(buffer, dtype=np.uint8) if not isinstance(buffer, np.ndarray) \
        else buffer.reshape(-1).view(np.uint8)
    usable = raw.nbytes - raw.nbytes % dtype.itemsize
    return raw[:usable].view(dtype.newbyteorder("<"))


def _header(desc: BufferTensorDesc) -> str:
    parts = [f"{desc.data_type.name} sizes {list(desc.sizes)} strides {list(desc.effective_strides)}",
             f"{desc.total_tensor_size_in_bytes} bytes"]
    name = desc.layout()
    if name is not None:
        parts.append(f"layout {name}")
    if desc.broadcast_axes:
        parts.append(f"broadcast axes {list(desc.broadcast_axes)}")
    return ", ".join(parts)


def _desc_picture(desc: BufferTensorDesc, buffer: Any, max_elements: int) -> _Picture:
    _check_size(f"descriptor with sizes {list(desc.sizes)}", desc.element_count, max_elements)
    offsets = _offsets(desc)
    first_seen: dict[int, int] = {}
    for off in offsets.ravel().tolist():
        first_seen.setdefault(off, len(first_seen))
    if buffer is None:
        labels = element_labels(len(first_seen))
        text_of = {off: labels[i] for off, i in first_seen.items()}
    else:
        typed = _typed_buffer(desc, buffer)
        text_of = {off: _format_value(typed[off]) for off in first_seen}
    logical = np.empty(offsets.shape, dtype=object)
    for index, off in np.ndenumerate(offsets):
        logical[index] = _Cell(text_of[int(off)], "element", int(off))
    buffer_elements = desc.total_tensor_size_in_bytes * 8 // desc.data_type.bitwidth
    shown = min(buffer_elements, max_elements)
    strip = tuple(_Cell(text_of[i], "element", i) if i in text_of else _Cell(_PADDING, "padding")
                  for i in range(shown))
    return _Picture(_header(desc), (_Panel("Logical view:", _grids(logical, desc.dimension_count > 3)),),
                    _Strip(strip, buffer_elements - shown))


_NUMPY_PAD_MODES: dict[PaddingMode, Literal["edge", "reflect", "symmetric", "wrap"]] = {
    PaddingMode.EDGE: "edge", PaddingMode.REFLECTION: "reflect", PaddingMode.SYMMETRIC: "symmetric",
    PaddingMode.WRAP: "wrap"}


def _padding_picture(op: PaddingOp, max_elements: int) -> _Picture:
    _check_size(f"Pad output with sizes {list(op.output.sizes)}", op.output.element_count, max_elements)
    source = np.arange(op.input.element_count, dtype=np.int64).reshape(op.input.sizes)
    widths = list(zip(op.start_padding, op.end_padding, strict=True))
    inside = np.pad(np.ones(op.input.sizes, dtype=bool), widths, mode="constant")
    if op.mode is PaddingMode.CONSTANT:
        copied = np.pad(source, widths, mode="constant", constant_values=-1)
    else:
        copied = np.pad(source, widths, mode=_NUMPY_PAD_MODES[op.mode])
    labels = element_labels(op.input.element_count)
    in_cells = np.empty(op.input.sizes, dtype=object)
    for index, i in np.ndenumerate(source):
        in_cells[index] = _Cell(labels[int(i)], "element", int(i))
    out_cells = np.empty(op.output.sizes, dtype=object)
    for index, i in np.ndenumerate(copied):
        if inside[index]:
            out_cells[index] = _Cell(labels[int(i)], "element", int(i))
        elif i < 0:
            out_cells[index] = _Cell(_CONSTANT_PAD, "pad")
        else:
            out_cells[index] = _Cell(labels[int(i)].lower(), "pad", int(i))
    value = "" if op.mode is not PaddingMode.CONSTANT else f" value {_format_value(op.padding_value)}"
    header = (f"PADDING1 {op.mode.name}{value} start {list(op.start_padding)} "
              f"end {list(op.end_padding)}, {op.input.data_type.name}")
    legend = ("'.' = the constant" if op.mode is PaddingMode.CONSTANT
              else "lowercase = copied from that input element")
    labelled = op.dimension_count > 3
    return _Picture(header, (
        _Panel(f"Input sizes {list(op.input.sizes)}:", _grids(in_cells, labelled)),
        _Panel(f"Output sizes {list(op.output.sizes)} (pad cells: {legend}):", _grids(out_cells, labelled)),
    ), None)


def operator_from_dict(data: Mapping[str, Any]) -> Drawable:
    """The DirectML operator a ``to_dict`` describes, chosen by its ``"operator"`` field.

    Raises:
        DescriptorError: the field names no operator of :data:`DRAWN_OPERATORS` (the message
            lists them), or the dict does not describe that operator.
    """
    name = data.get("operator")
    cls = DRAWN_OPERATORS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise DescriptorError("operator", name,
                              f"operator {name!r} is not drawn here; valid: {list(DRAWN_OPERATORS)}")
    try:
        return cls.from_dict(dict(data))
    except (KeyError, TypeError, ValueError) as e:
        raise DescriptorError("operator", name, f"{name} dict cannot be read: {e!r}") from None


def _operator_header(op: Drawable) -> str:
    """``SLICE1 input_window_offsets [0, 1], ..., FLOAT32``: the operator's name and its fields
    other than tensors, as its ``to_dict`` gives them."""
    data = op.to_dict()
    tensors = {"input", "output", "InputTensors", "OutputTensors", "InputTensor", "OutputTensor"}
    fields = [f"{k} {v}" for k, v in data.items() if k not in tensors and k != "operator"]
    name = str(data.get("operator", type(op).__name__)).removeprefix("DML_OPERATOR_")
    return " ".join([name, ", ".join(fields)]).strip() + f", {_tensors(op)[0][0].data_type.name}"


def _tensors(op: Drawable) -> tuple[tuple[BufferTensorDesc, ...], tuple[BufferTensorDesc, ...]]:
    if isinstance(op, JoinOp):
        return op.inputs, (op.output,)
    if isinstance(op, SplitOp):
        return (op.input,), op.outputs
    assert not isinstance(op, BufferTensorDesc)
    return (op.input,), (op.output,)


def _reader(op: Drawable) -> Callable[[int, tuple[int, ...]], tuple[int, int | None]]:
    """(output, index) -> (the input it reads, the input buffer offset it reads, or None), for
    the operators :func:`_picture` draws by :func:`_mapped_picture` (an IdentityOp is drawn as
    its input descriptor, a PaddingOp by :func:`_padding_picture`)."""
    if isinstance(op, JoinOp):
        return lambda _o, index: (op.source_of(index)[0], op.buffer_offsets_in_elements(index)[0])
    if isinstance(op, SplitOp):
        return lambda o, index: (0, op.buffer_offsets_in_elements(index, o)[0])
    if isinstance(op, (Slice1Op, TileOp, DepthToSpaceOp, SpaceToDepthOp)):
        return lambda _o, index: (0, op.buffer_offsets_in_elements(index)[0])
    raise ShapeError(f"cannot draw {type(op).__name__}")


def _mapped_picture(op: Drawable, max_elements: int) -> _Picture:
    """Each input with a letter per element (grey where no output reads it), then each output
    with the letter of the input element each of its elements reads."""
    inputs, outputs = _tensors(op)
    count = sum(d.element_count for d in (*inputs, *outputs))
    _check_size(f"{type(op).__name__} tensors", count, max_elements)
    read = _reader(op)
    seen: set[tuple[int, int]] = set()
    reads: list[np.ndarray] = []
    for o, desc in enumerate(outputs):
        sources = np.empty(desc.sizes, dtype=object)
        for index in np.ndindex(*desc.sizes):
            k, offset = read(o, index)
            sources[index] = None if offset is None else (k, offset)
            if offset is not None:
                seen.add((k, offset))
        reads.append(sources)
    labels = element_labels(sum(d.element_count for d in inputs))
    label_of: dict[tuple[int, int], tuple[str, int]] = {}
    in_panels = []
    for k, desc in enumerate(inputs):
        cells = np.empty(desc.sizes, dtype=object)
        for index, offset in np.ndenumerate(_offsets(desc)):
            key = (k, int(offset))
            if key not in label_of:
                label_of[key] = (labels[len(label_of)], len(label_of))
            text, colour = label_of[key]
            cells[index] = _Cell(text, "element", colour) if key in seen else _Cell(text.lower(), "padding")
        name = f"Input {k}" if len(inputs) > 1 else "Input"
        title = (f"{name} sizes {list(desc.sizes)} strides {list(desc.effective_strides)} "
                 "(lowercase, grey: read by no output):")
        in_panels.append(_Panel(title, _grids(cells, desc.dimension_count > 3)))
    out_panels = []
    for o, (desc, sources) in enumerate(zip(outputs, reads, strict=True)):
        cells = np.empty(desc.sizes, dtype=object)
        for index, source in np.ndenumerate(sources):
            found = label_of.get(source) if source is not None else None
            cells[index] = (_Cell(_CONSTANT_PAD, "pad") if found is None
                            else _Cell(found[0], "element", found[1]))
        name = f"Output {o}" if len(outputs) > 1 else "Output"
        out_panels.append(_Panel(f"{name} sizes {list(desc.sizes)} (the input element each reads):",
                                 _grids(cells, desc.dimension_count > 3)))
    return _Picture(_operator_header(op), (*in_panels, *out_panels), None)


def _picture(item: Drawable, buffer: Any, max_elements: int) -> _Picture:
    if isinstance(item, BufferTensorDesc):
        return _desc_picture(item, buffer, max_elements)
    if isinstance(item, IdentityOp):
        return _desc_picture(item.input, buffer, max_elements)
    if buffer is not None:
        raise ShapeError(f"a {type(item).__name__} is drawn with letters only; buffer must be None")
    if isinstance(item, PaddingOp):
        return _padding_picture(item, max_elements)
    if isinstance(item, (Slice1Op, TileOp, DepthToSpaceOp, SpaceToDepthOp, JoinOp, SplitOp)):
        return _mapped_picture(item, max_elements)
    raise ShapeError(f"cannot draw {type(item).__name__}; give a BufferTensorDesc or one of "
                     f"{[c.__name__ for c in DRAWN_OPERATORS.values()]}")


# ---- text ------------------------------------------------------------------------------------
def _text_grid(grid: _Grid, width: int) -> list[str]:
    lines = [grid.label] if grid.label else []
    lines += [" ".join(c.text.rjust(width) for c in row).rstrip() for row in grid.rows]
    return lines


def _text_strip(strip: _Strip) -> list[str]:
    lines = []
    cells = strip.cells
    for start in range(0, len(cells), _COLUMNS_PER_LINE):
        chunk = cells[start:start + _COLUMNS_PER_LINE]
        widths = [max(len(str(start + i)), len(c.text)) for i, c in enumerate(chunk)]
        lines.append("Offset: | " + " | ".join(str(start + i).rjust(w) for i, w in
                                              enumerate(widths)) + " |")
        lines.append("Value:  | " + " | ".join(c.text.rjust(w) for c, w in
                                              zip(chunk, widths, strict=True)) + " |")
    if strip.hidden:
        lines.append(f"... {strip.hidden} more buffer elements not shown (max_elements)")
    return lines


def render_text(
    item: Drawable,
    buffer: bytes | bytearray | memoryview | np.ndarray | None = None,
    *,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> str:
    """Draw a descriptor (or a DirectML operator) as text, as DirectML's documentation does.

    Args:
        item: the descriptor, or a DirectML operator (drawn as its input and output grids; an
            IdentityOp as its input descriptor).
        buffer: raw bytes to show values instead of letters (at least
            ``total_tensor_size_in_bytes``; not for 4-bit types).
        max_elements: pictures of more logical elements are refused (ShapeError); the buffer
            table stops after this many elements and says how many it left out. At most
            :data:`MAX_DRAWN_ELEMENTS` (ShapeError otherwise).

    Returns:
        Lines of text, ending in a newline-free last line.

    >>> print(render_text(BufferTensorDesc("float32", (2, 3), (5, 1), total_tensor_size_in_bytes=40)))
    FLOAT32 sizes [2, 3] strides [5, 1], 40 bytes
    Logical view:
    A B C
    D E F
    Buffer (elements):
    Offset: | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 |
    Value:  | A | B | C | x | x | D | E | F | x | x |
    """
    pic = _picture(item, buffer, max_elements)
    lines = [pic.header]
    for panel in pic.panels:
        lines.append(panel.title)
        width = max((len(c.text) for g in panel.grids for row in g.rows for c in row), default=1)
        for i, grid in enumerate(panel.grids):
            if i:
                lines.append("")
            lines += _text_grid(grid, width)
    if pic.strip is not None:
        lines.append("Buffer (elements):")
        lines += _text_strip(pic.strip)
    return "\n".join(lines)


# ---- SVG -------------------------------------------------------------------------------------
_FONT = "font-family='monospace' font-size='13'"


def _fill(cell: _Cell) -> str:
    if cell.kind == "padding":
        return "#dddddd"
    if cell.key is None:
        return "#ffffff"
    hue = (cell.key * 47) % 360 / 360
    lightness = 0.88 if cell.kind == "element" else 0.95
    red, green, blue = colorsys.hls_to_rgb(hue, lightness, 0.7)
    return f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"


def _svg_cell(x: float, y: float, size: float, cell: _Cell) -> str:
    dash = " stroke-dasharray='3,2'" if cell.kind == "pad" else ""
    return (f"<rect x='{x}' y='{y}' width='{size}' height='{size}' fill='{_fill(cell)}' "
            f"stroke='#444'{dash}/>"
            f"<text x='{x + size / 2}' y='{y + size * 0.65}' text-anchor='middle' {_FONT}>"
            f"{escape(cell.text)}</text>")


def _svg_text(x: float, y: float, text: str, weight: str = "normal") -> str:
    return f"<text x='{x}' y='{y}' font-weight={quoteattr(weight)} {_FONT}>{escape(text)}</text>"


def render_svg(
    item: Drawable,
    buffer: bytes | bytearray | memoryview | np.ndarray | None = None,
    *,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    cell_size: int = 28,
) -> str:
    """Draw a descriptor (or a DirectML operator) as a standalone SVG document.

    Same picture as :func:`render_text`: logical grids, then the buffer strip (padding grey,
    marked ``x``); each buffer element has its own colour, so broadcast repeats share one.

    Returns:
        The SVG text (well-formed XML).
    """
    if isinstance(cell_size, bool) or not isinstance(cell_size, int) or not 8 <= cell_size <= 200:
        raise ShapeError(f"cell_size {cell_size!r} must be an integer in 8..200")
    pic = _picture(item, buffer, max_elements)
    longest = max([len(c.text) for p in pic.panels for g in p.grids for r in g.rows for c in r]
                  + ([len(c.text) for c in pic.strip.cells] if pic.strip else []) + [1])
    size = max(cell_size, 9 * longest + 8)
    margin, line = 10, 20
    parts: list[str] = []
    y = margin + 14
    width = 0.0
    parts.append(_svg_text(margin, y, pic.header, "bold"))
    width = max(width, margin + 8 * len(pic.header))
    for panel in pic.panels:
        y += line
        parts.append(_svg_text(margin, y, panel.title))
        y += 8
        for grid in panel.grids:
            if grid.label:
                y += line - 4
                parts.append(_svg_text(margin, y, grid.label))
                y += 4
            for row in grid.rows:
                for j, cell in enumerate(row):
                    parts.append(_svg_cell(margin + j * size, y, size, cell))
                width = max(width, margin + len(row) * size)
                y += size
            y += 8
    if pic.strip is not None:
        y += line
        parts.append(_svg_text(margin, y, "Buffer (offset in elements):"))
        y += 8
        per_row = max(1, min(len(pic.strip.cells), 32))
        for start in range(0, len(pic.strip.cells), per_row):
            chunk = pic.strip.cells[start:start + per_row]
            y += 14
            for j in range(len(chunk)):
                parts.append(f"<text x='{margin + j * size + size / 2}' y='{y}' text-anchor='middle' "
                             f"font-family='monospace' font-size='10'>{start + j}</text>")
            y += 4
            for j, cell in enumerate(chunk):
                parts.append(_svg_cell(margin + j * size, y, size, cell))
            width = max(width, margin + len(chunk) * size)
            y += size + 4
        if pic.strip.hidden:
            y += line
            parts.append(_svg_text(margin, y, f"... {pic.strip.hidden} more buffer elements not shown"))
    height = y + margin
    width += margin
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{math.ceil(width)}' "
            f"height='{math.ceil(height)}' viewBox='0 0 {math.ceil(width)} {math.ceil(height)}'>"
            f"<rect width='100%' height='100%' fill='white'/>" + "".join(parts) + "</svg>\n")
