"""Case.id is computed once per case and kept beside the fields: it takes no part in
equality, hashing, the fields, to_dict or pickling, and a changed case gets its own id."""

from __future__ import annotations

import copy
import copyreg
import dataclasses
import io
import pickle

import pytest

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case


def test_the_id_is_kept_and_is_the_id_of_the_fields() -> None:
    case = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1), seed=1)
    assert case.id == "Transpose-float32-2x3x4-perm2.0.1-random-s1"
    assert case.id is case.id  # computed once, then kept
    fresh = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1), seed=1)
    assert fresh == case and hash(fresh) == hash(case)  # whether or not the id was asked for


def test_a_replaced_or_copied_case_has_its_own_fields_id() -> None:
    case = Case("Pad", "uint8", (3, 4), pads=(1, 2, 0, 1), mode="edge", seed=4)
    assert case.id.endswith("-s4")
    other = dataclasses.replace(case, seed=5)
    assert other.id.endswith("-s5") and other.id.replace("-s5", "-s4") == case.id
    for clone in (copy.copy(case), copy.deepcopy(case), pickle.loads(pickle.dumps(case))):
        assert clone == case and clone.id == case.id


def test_the_kept_id_is_no_field() -> None:
    case = Case("Expand", DataType.INT64, (3, 1), target_shape=(2, 3, 4))
    _ = case.id
    names = [f.name for f in dataclasses.fields(case)]
    assert "_id" not in names and names[0] == "op" and names[-1] == "origin"
    assert "_id" not in case.to_dict() and "_id" not in dataclasses.asdict(case)
    assert Case.from_dict(case.to_dict()) == case
    assert "_id" not in repr(case)
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.seed = 3  # type: ignore[misc]


def test_the_kept_shapes_are_the_operators_shapes_and_no_field() -> None:
    from ort_layouts.operators.registry import operator_for_type

    case = Case("Pad", "float32", (2, 3), pads=(1, 0, 0, 2))
    pad = operator_for_type("Pad")
    inputs, outputs = pad.tensor_shapes(case)
    assert inputs == ((2, 3),) and outputs == ((3, 5),)  # 2 + 1 + 0, 3 + 0 + 2, by hand
    assert pad.tensor_shapes(case) is pad.tensor_shapes(case)  # computed once, then kept
    assert "_shapes" not in [f.name for f in dataclasses.fields(case)]
    assert "_shapes" not in case.to_dict() and "_shapes" not in repr(case)
    wider = dataclasses.replace(case, pads=(0, 0, 0, 4))
    assert pad.tensor_shapes(wider) == (((2, 3),), ((2, 7),))  # a replaced case computes its own
    for clone in (copy.copy(case), copy.deepcopy(case), pickle.loads(pickle.dumps(case))):
        assert clone == case and pad.tensor_shapes(clone) == (inputs, outputs)
    split = Case("Split", "int8", (6, 2), axis=0, parts=(1, 5))
    assert operator_for_type("Split").tensor_shapes(split) == (((6, 2),), ((1, 2), (5, 2)))


def test_a_pickled_case_is_the_case_with_its_id_when_made_and_reads_no_checks() -> None:
    """A run pickles every case for its workers: the fields come back as they were, the id the
    case had made with them (none where it had not made one), and a case pickled as the
    dataclass's own state (``__getstate__``: an earlier pickle) loads too."""
    made = Case("Pad", "uint16", (2, 3), pads=(0, 1, 1, 0), mode="reflect", seed=7)
    expected_id = "Pad-uint16-2x3-reflect-pads0.1.1.0-random-s7"
    fresh = Case("Pad", "uint16", (2, 3), pads=(0, 1, 1, 0), mode="reflect", seed=7)
    assert made.id == expected_id
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        for case in (made, fresh):
            clone = pickle.loads(pickle.dumps(case, protocol=protocol))
            assert clone == case and hash(clone) == hash(case) and type(clone) is Case
            assert [getattr(clone, f.name) for f in dataclasses.fields(Case)] == \
                [getattr(case, f.name) for f in dataclasses.fields(Case)]
    assert pickle.loads(pickle.dumps(made))._id == expected_id  # kept, not made again
    unmade = pickle.loads(pickle.dumps(fresh))
    assert not hasattr(unmade, "_id") and unmade.id == expected_id
    with pytest.MonkeyPatch.context() as patch:  # the fields are a made case's: not checked again
        def checked(self: Case) -> None:
            raise AssertionError("a case was checked when unpickled")

        patch.setattr(Case, "__post_init__", checked)
        assert pickle.loads(pickle.dumps(made)) == made
    # the dataclass's own state, as Python pickles a slotted dataclass without a __reduce__
    class StatePickler(pickle.Pickler):
        def reducer_override(self, obj):
            if type(obj) is Case:
                return copyreg.__newobj__, (Case,), obj.__getstate__()
            return NotImplemented

    out = io.BytesIO()
    StatePickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(made)
    assert b"_unpickled_case" not in out.getvalue() and pickle.loads(out.getvalue()) == made
