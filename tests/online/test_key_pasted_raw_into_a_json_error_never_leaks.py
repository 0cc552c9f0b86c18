"""Threat: a server builds its JSON error text by pasting the key in raw (``'"bad key ' + key + '"'``).

A key holding a backslash or a double quote then decodes to another string: ``abc\\\\def`` reads back as
``abc\\def``, ``abc\\"def`` as ``abc"def`` (all of the key but one character), which no search for the key
itself finds, and whose ``repr`` in an exception is the key again. That read-back form is masked too,
in an error answer and in a stream's error event, in every text the caller can see.
"""

from __future__ import annotations

import json
import traceback

import pytest
from fault_server import FaultServer, Reply, Stream

from modules import OnlineChatModule
from modules.errors import ModuleError
from modules.online.retry import RetryPolicy

KEYS = ["sk-0000000000\\\\tail", 'sk-0000000000\\"tail', "sk-00\\/00\\u0041-tail"]


def shown(exc: BaseException) -> str:
    return "\n".join([str(exc), repr(exc), repr(vars(exc)), "".join(traceback.format_exception(exc))])


@pytest.mark.parametrize("key", KEYS, ids=["backslash", "quote", "unicode-escape"])
@pytest.mark.parametrize("streamed", [False, True], ids=["error-answer", "stream-error-event"])
def test_a_key_pasted_raw_into_json_never_reaches_the_caller(key: str, streamed: bool):
    read_back = json.loads(f'"{key}"')
    assert read_back != key  # the case is what it says: pasted raw, the key reads back as another string
    pasted = b'{"error": {"message": "bad key ' + key.encode() + b'"}}'
    with FaultServer() as server:
        server.script[:] = [Stream([b"data: " + pasted + b"\n\n"]) if streamed else Reply(400, pasted)]
        m = OnlineChatModule(base_url=server.base_url, model="m", api_key=key, retry=RetryPolicy(max_retries=0))
        with pytest.raises(ModuleError) as caught:
            if streamed:
                list(m.stream("hi"))
            else:
                m("hi")
        m.close()
    text = shown(caught.value)
    assert "***" in text
    for form in (key, read_back, repr(read_back)[1:-1], json.dumps(read_back)[1:-1]):
        assert form not in text
