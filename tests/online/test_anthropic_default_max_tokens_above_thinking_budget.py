"""With extended thinking on, Anthropic's default ``max_tokens`` stays above the thinking budget.

The API requires ``max_tokens`` (the module sends 4096 when the call gives none) and refuses a
request whose ``thinking.budget_tokens`` is not below it. ``m(q, thinking={"type": "enabled",
"budget_tokens": 8000})`` was sent with ``max_tokens: 4096`` and answered 400 for the module's own
default. A budget of 4096 or more now gets the budget plus 4096; a smaller budget, or a
``max_tokens`` the caller gives, is sent as before.
"""

from __future__ import annotations

from wire.anthropic import KEY, AnthropicServer, bad
from wire.common import Received

from modules import OnlineChatModule
from modules.online.anthropic import DEFAULT_MAX_TOKENS


class BudgetCheckingServer(AnthropicServer):
    """As the API: ``max_tokens`` must be greater than ``thinking.budget_tokens``."""

    def handle(self, request: Received):
        thinking = request.body.get("thinking") if isinstance(request.body, dict) else None
        if isinstance(thinking, dict) and request.body.get("max_tokens", 0) <= thinking.get("budget_tokens", 0):
            raise bad("`max_tokens` must be greater than `thinking.budget_tokens`")
        return super().handle(request)


def test_a_large_thinking_budget_gets_a_default_max_tokens_above_it():
    with BudgetCheckingServer() as server:
        m = OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=KEY)
        thinking = {"type": "enabled", "budget_tokens": 8000}
        assert m("hi", thinking=thinking) == "Hello from Claude."
        assert server.received[-1].body["max_tokens"] == 8000 + DEFAULT_MAX_TOKENS
        assert "".join(m.stream("hi", thinking={"type": "enabled", "budget_tokens": DEFAULT_MAX_TOKENS})) == (
            "Hello from Claude."
        )
        assert server.received[-1].body["max_tokens"] == 2 * DEFAULT_MAX_TOKENS
        assert thinking == {"type": "enabled", "budget_tokens": 8000}


def test_a_small_budget_or_a_given_max_tokens_is_sent_as_before():
    m = OnlineChatModule("anthropic", api_key=KEY)
    assert m.build_request("hi", thinking={"type": "enabled", "budget_tokens": 2048}).body["max_tokens"] == 4096
    given = m.build_request("hi", max_tokens=9000, thinking={"type": "enabled", "budget_tokens": 8000}).body
    assert given["max_tokens"] == 9000
    assert m.build_request("hi").body["max_tokens"] == DEFAULT_MAX_TOKENS
