"""Runs inside an AgentScope scratch venv (0.0.6a2 or 0.1.6): reads cases as JSON on stdin,
writes each case's upstream output (or its exception) as JSON on stdout.

Never imported by the project; ``agentscope_corpus.py`` starts it with the venv's python.
Wrappers are built without ``__init__`` (no keys, no network): ``format`` reads only
``model_name``.
"""

import json
import sys
import traceback


def _msgs(case, Msg):
    out = []
    for m in case["msgs"]:
        kw = {"url": m["url"]} if m.get("url") else {}
        out.append(Msg(m["name"], m["content"], role=m["role"], **kw))
    return out


def _run006(case):
    from agentscope import models
    from agentscope.message import Msg

    cls = {
        "openai": models.OpenAIChatWrapper,
        "dashscope": models.DashScopeChatWrapper,
        "dashscope_mm": models.DashScopeMultiModalWrapper,
        "gemini": models.GeminiChatWrapper,
        "ollama": models.OllamaChatWrapper,
        "ollama_generate": models.OllamaGenerationWrapper,
        "zhipu": models.ZhipuAIChatWrapper,
        "litellm": models.LiteLLMChatWrapper,
        "post_api": models.PostAPIChatWrapper,
    }[case["api"]]
    w = object.__new__(cls)
    w.model_name = case.get("model", "gpt-4o")
    return w.format(*_msgs(case, Msg))


def _run016(case):
    from agentscope import formatters
    from agentscope.message import Msg

    cls = {
        "openai": formatters.OpenAIFormatter,
        "anthropic": formatters.AnthropicFormatter,
        "gemini": formatters.GeminiFormatter,
        "dashscope": formatters.DashScopeFormatter,
        "common": formatters.CommonFormatter,
    }[case["api"]]
    fn = getattr(cls, "format_" + case["strategy"])
    msgs = _msgs(case, Msg)
    if case["strategy"] == "auto":  # format_auto takes one list
        return fn(msgs)
    return fn(*msgs, **case.get("kwargs", {}))


def main():
    cases = json.load(sys.stdin)
    run = _run006 if sys.argv[1] == "0.0.6a2" else _run016
    out = {}
    for case in cases:
        try:
            out[case["id"]] = {"ok": run(case)}
        except Exception as exc:  # upstream's own error is the record
            out[case["id"]] = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
            traceback.print_exc(file=sys.stderr)
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
