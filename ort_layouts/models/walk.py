"""The one walk over a graph and the graphs its nodes hold (If's branches, Loop's and Scan's
bodies), at any depth, that every reader of a model in this package goes through: extract's
layout nodes, the small external initializers it reads, the layout nodes of model-local
functions, convert's new names and its list of external data files. Convert's renaming of a
boundary tensor goes down through :func:`subgraphs` instead, to stop at a subgraph that declares
a value of that name of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, Generic, TypeVar, overload

import onnx

__all__ = ["Body", "Step", "node_name", "subgraphs", "walk"]

Body = onnx.GraphProto | onnx.FunctionProto  # what holds nodes: a graph, or a model-local function
G = TypeVar("G", onnx.GraphProto, Body)


@dataclasses.dataclass(frozen=True, slots=True)
class Step(Generic[G]):
    """One step of :func:`walk`: a graph entered (``node`` None), or one node of it.

    Attributes:
        graph: the graph entered, or the graph that holds ``node`` (a walk from a function
            meets the function itself here, and graphs below it).
        node: the node; None when ``graph`` is entered, before its first node.
        index: the node's position in ``graph.node`` (-1 when entering).
        path: where ``graph`` is: "" for the graph walked, ``"If_3/then_branch/"`` for a branch
            of the node If_3 of it, ``"Loop_0/body/If_1/else_branch/"`` deeper down.
        outer: the path of the graph that holds ``graph``'s node (None for the graph walked).
    """

    graph: G
    node: onnx.NodeProto | None
    index: int
    path: str
    outer: str | None


def node_name(node: onnx.NodeProto, index: int) -> str:
    """A node's name, or ``"<op_type>_<index>"`` for a node that has none."""
    return node.name or f"{node.op_type}_{index}"


def subgraphs(node: onnx.NodeProto) -> Iterator[tuple[str, onnx.GraphProto]]:
    """The graphs of a node's attributes (If's branches, Loop's and Scan's body), in attribute
    order, each with its attribute name (``body``, ``graphs[1]`` for a list)."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.name, a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            for k, g in enumerate(a.graphs):
                yield f"{a.name}[{k}]", g


@overload
def walk(graph: onnx.GraphProto, *, path: str = "", outer: str | None = None
         ) -> Iterator[Step[onnx.GraphProto]]: ...
@overload
def walk(graph: onnx.FunctionProto, *, path: str = "", outer: str | None = None) -> Iterator[Step[Body]]: ...
def walk(graph: Body, *, path: str = "", outer: str | None = None) -> Iterator[Step[Any]]:
    """Every graph and node under ``graph`` (itself included), depth first: a graph is entered
    before its nodes; each node comes in graph order, followed by the graphs it holds (in
    attribute order, each walked whole) before the next node."""
    yield Step(graph, None, -1, path, outer)
    for index, node in enumerate(graph.node):
        yield Step(graph, node, index, path, outer)
        for attribute, sub in subgraphs(node):
            yield from walk(sub, path=f"{path}{node_name(node, index)}/{attribute}/", outer=path)
