"""Behaviour: ``/v1/completions`` with ``stream_options.include_usage`` sends the usage chunk.

The option was accepted and silently ignored on the completions endpoint (only
chat completions honoured it), although the server promises that an option it
cannot honour is refused, never ignored. OpenAI's completions API sends, after
the last choice chunk, one chunk with ``choices: []`` and the ``usage``.
"""

from __future__ import annotations

import json

import httpx
import openai
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule


def test_completions_stream_include_usage_ends_with_the_usage_chunk(served_module: TrainableModule) -> None:  # noqa: F811
    client = openai.OpenAI(base_url=served_module.url, api_key="unused", max_retries=0, timeout=30)
    whole = client.completions.create(model="tiny", prompt="Once upon a time", max_tokens=5)
    chunks = list(
        client.completions.create(
            model="tiny", prompt="Once upon a time", max_tokens=5, stream=True, stream_options={"include_usage": True}
        )
    )
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert last.usage.model_dump(exclude_none=True) == whole.usage.model_dump(exclude_none=True)
    assert "".join(c.choices[0].text for c in chunks[:-1]) == whole.choices[0].text
    assert all(c.usage is None for c in chunks[:-1])


def test_completions_stream_without_include_usage_has_no_usage_chunk(served_module: TrainableModule) -> None:  # noqa: F811
    with httpx.stream(
        "POST",
        served_module.url + "/completions",
        json={"model": "tiny", "prompt": "Once upon a time", "max_tokens": 3, "stream": True},
        timeout=30,
    ) as response:
        events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    assert all("usage" not in json.loads(e) for e in events[:-1])
