"""ort_layouts._errors: the article a message puts before a value's type."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from ort_layouts._errors import a_type


@pytest.mark.parametrize(("value", "said"), [
    ("x", "a str"), (1, "an int"), (None, "a NoneType"), ([], "a list"), (np.zeros(1), "an ndarray"),
    (np.uint32(1), "a uint32"), (np.uint8(1), "a uint8"), (np.int64(1), "an int64"), (1.5, "a float"),
    (object(), "an object"), (np.ulonglong(1), f"a {type(np.ulonglong(1)).__name__}"),
    (collections.UserDict(), "a UserDict"),
])
def test_a_type_puts_the_article_the_name_is_said_with(value: object, said: str) -> None:
    assert a_type(value) == said
