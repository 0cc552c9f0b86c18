"""TrainableModule.score refuses pairs that are not (context, continuation) pairs with a typed error naming
the pair: a 3-tuple raised a bare ValueError while unpacking, and the string "ab" was scored as ("a", "b")."""

from __future__ import annotations

from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModuleConfigError


@pytest.mark.parametrize(
    ("pairs", "named"),
    [([("a", "b", "c")], r"pairs\[0\]"), (["ab"], r"pairs\[0\]"), ("ab", "pairs"), ([("a", "b"), ("c",)], r"pairs\[1\]")],
    ids=["a-triple", "a-string-pair", "a-string", "a-single"],
)
def test_pairs_of_the_wrong_shape_name_the_pair(started_module: Any, pairs: Any, named: str) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match=named + ": expected"):
        started_module.score(pairs)
