"""The page as served: a link's state is already rendered into ``#output`` (escaped), before any script runs."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter import ChatPrompter


class Elements(HTMLParser):
    """The text of every element with an id, and every tag seen (inline markup is what an attack would add)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: dict[str, str] = {}
        self.hidden: dict[str, bool] = {}
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self._open: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag in ("input", "meta", "link", "br", "img"):
            return
        ident = attributes.get("id")
        if ident:
            self.text[ident] = ""
            self.hidden[ident] = "hidden" in attributes
        self._open.append((tag, ident))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        for _, ident in self._open:
            if ident:
                self.text[ident] += data


def page(base: str, state: dict[str, str]) -> Elements:
    response = requests.get(base, params=state, timeout=10)
    assert response.status_code == 200
    parsed = Elements()
    parsed.feed(response.text)
    return parsed


def test_the_state_in_the_link_is_rendered_into_output_as_served(playground_url: str) -> None:
    state = {"instruction": "About {topic}.", "input": '{"topic": "cats"}', "model_format": "llama-3.1"}
    served = page(playground_url, state)
    assert served.text["output"] == ChatPrompter("About {topic}.").generate_prompt(
        {"topic": "cats"}, model_format="llama-3.1"
    )


def test_a_dialect_is_served_as_the_formatted_body(playground_url: str) -> None:
    served = page(playground_url, {"input": "hi", "format": "anthropic"})
    body = ChatPrompter().generate_prompt("hi", format="anthropic")
    assert served.text["output"] == json.dumps(body, indent=2, ensure_ascii=False)


def test_a_mistake_is_served_next_to_its_field(playground_url: str) -> None:
    served = page(playground_url, {"input": "hi", "history": "[1]"})
    assert served.hidden["history-error"] is False
    assert served.text["history-error"].startswith("HistoryError: history[0]")
    assert served.hidden["input-error"] is True


def test_without_a_state_the_page_is_the_empty_form(playground_url: str) -> None:
    assert page(playground_url, {}).text["output"] == ""


hostile = st.sampled_from(
    [
        '"><script>alert(1)</script>',
        "<img src=x onerror=alert(1)>",
        "</pre><b>x</b>",
        "&lt;",
        "<!--",
        "]]>",
        "<|im_end|>",
        "' onmouseover='x",
    ]
)
words = st.one_of(st.text(max_size=20), hostile, st.builds(str.__add__, st.text(max_size=5), hostile))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    state=st.dictionaries(
        st.sampled_from(
            ["instruction", "input", "history", "tools", "model_format", "format", "extra_keys", "prompter"]
        )
        | words,
        words,
        max_size=5,
    )
)
def test_user_text_in_the_link_never_becomes_markup_in_the_served_page(
    playground_url: str, state: dict[str, Any]
) -> None:
    # every key and every value of the query is generated, hostile ones included
    clean = page(playground_url, {})
    served = page(playground_url, state)
    at = next(i for i, (tag, attrs) in enumerate(served.tags) if attrs.get("id") == "output") + 1
    end = at
    while end < len(served.tags) and served.tags[end][0] == "span":
        end += 1
    segments = [attrs for _, attrs in served.tags[at:end]]  # what was rendered into #output: spans, nothing else
    assert all(set(a) == {"class"} and a["class"] in ("seg-user", "seg-special", "seg-template") for a in segments)
    elements = served.tags[:at] + served.tags[end:]
    assert [t for t, _ in elements] == [t for t, _ in clean.tags]  # no element added, removed or renamed
    for (_, attrs), (_, before) in zip(elements, clean.tags, strict=True):
        # only #output gains its kind or error class, and an error box loses `hidden`
        assert set(attrs) <= set(before) | {"data-kind", "class", "data-error-type"}, attrs
        kept = set(attrs) & set(before) - {"class"}
        assert {k: attrs[k] for k in kept} == {k: before[k] for k in kept}


def test_the_page_keeps_scripts_and_styles_to_its_own_origin(playground_url: str) -> None:
    policy = requests.get(playground_url, timeout=10).headers["content-security-policy"]
    assert policy.startswith("default-src 'self'")  # covers scripts, styles, fonts and fetches
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy and "*" not in policy
