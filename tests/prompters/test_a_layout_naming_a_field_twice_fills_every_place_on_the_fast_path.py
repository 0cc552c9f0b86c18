"""A declared layout may name ``{input}`` or ``{history}`` more than once; the general path fills every
place. The compiled fast path kept only the last place of each, so the common call (a str input,
``[q, a]`` history) left the earlier places empty: the two paths gave different text for one prompter.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import PrompterBase


class Echo(PrompterBase):
    template = "{system}{instruction}{tools}{history}{user}{input}|{input}|{history}"


@pytest.mark.parametrize(
    ("input", "history", "expected"),
    [
        ("v", None, "v|v|"),
        ("v", [["q", "a"]], "<|Human|>:q<|Assistant|>:av|v|<|Human|>:q<|Assistant|>:a"),
        ({"input": "v"}, [["q", "a"]], "<|Human|>:q<|Assistant|>:av|v|<|Human|>:q<|Assistant|>:a"),
    ],
    ids=["str", "str-and-pairs", "dict-and-pairs"],
)
def test_every_place_of_a_field_is_filled_on_both_paths(input: Any, history: Any, expected: str) -> None:
    fast = Echo(system="")
    general = Echo(system="")
    general._fast = None
    assert fast._fast is not None
    assert fast.generate_prompt(input, history=history) == expected
    assert general.generate_prompt(input, history=history) == expected


def test_a_dict_filling_every_slot_empties_every_input_place() -> None:
    class Slotted(PrompterBase):
        template = "[{input}]{system}{instruction}{tools}{history}{user}[{input}]"

    assert Slotted("About {topic}.", system="").generate_prompt({"topic": "cats"}) == "[]About cats.[]"
