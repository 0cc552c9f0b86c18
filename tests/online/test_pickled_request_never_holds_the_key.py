"""Pickle threat: the scrubber a request carries (to mask its repr) holds the API key and credential
headers in clear. A ``ChatRequest`` whose headers had become a plain dict (``dataclasses.replace``) pickled
with the key written out; a scrubber now refuses pickling, as the module and its ``Secret`` do."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from modules import OnlineChatModule

KEY = "sk-pickle-canary-0123456789"
HEADER = "hdr-pickle-canary-9876543210"


def test_a_request_made_picklable_by_hand_still_refuses_to_write_the_key() -> None:
    m = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY, headers={"X-Api-Key": HEADER})
    request = replace(m.build_request("hi"), headers={"Content-Type": "application/json"})
    with pytest.raises(TypeError, match="cannot be pickled") as info:
        pickle.dumps(request)
    assert KEY not in str(info.value) and HEADER not in str(info.value)


def test_the_module_scrubber_itself_cannot_be_pickled() -> None:
    m = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(m._scrubber)


def test_a_request_without_a_scrubber_still_pickles() -> None:
    m = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY)
    request = replace(m.build_request("hi"), headers={"Content-Type": "application/json"}, scrubber=None)
    data = pickle.dumps(request)
    assert KEY.encode() not in data
    assert pickle.loads(data).body == request.body
