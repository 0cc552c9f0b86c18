"""Chat templates run in a sandbox: named after the threats they stop.

A template from a model repository is code written by someone else. It must not
reach Python internals (SSTI), hang the process (jinja bombs), or exhaust memory.
"""

from __future__ import annotations

import pytest

from prompter.errors import PromptError, TemplateError, TemplateTimeoutError
from prompter.formats.model_format import ModelFormat
from prompter.formats.sandbox import compile_template, render_template

USER = [{"role": "user", "content": "hi"}]


def render(source: str, **context: object) -> str:
    return render_template(compile_template(source), {"messages": USER, **context})


SSTI = {
    "str-class-subclasses": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "cycler-globals": "{{ cycler.__init__.__globals__ }}",
    "joiner-globals": "{{ joiner.__init__.__globals__['os'] }}",
    "template-reference-context": "{{ self._TemplateReference__context }}",
    "flask-config": "{{ config }}",
    "config-items": "{{ config.items() }}",
    "lipsum-globals": "{{ lipsum.__globals__ }}",
    "lipsum-os-popen": "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "request-application": "{{ request.application.__globals__ }}",
    "attr-filter-class": "{{ ''|attr('__class__') }}",
    "namespace-dunder": "{% set ns = namespace(__init__=1) %}{{ ns }}",
    "dict-type-escape": "{{ dict.__class__ }}",
    "messages-class": "{{ messages.__class__.__base__.__subclasses__() }}",
    "format-attribute-walk": "{{ '{0.__class__.__mro__}'.format('') }}",
    "list-append-mutation": "{% set x = [] %}{{ x.append(1) }}",
    "dict-update-mutation": "{{ messages[0].update({'role': 'system'}) }}",
}


@pytest.mark.parametrize("payload", SSTI.values(), ids=SSTI.keys())
def test_ssti_payload_reaches_no_python_object(payload: str) -> None:
    try:
        out = render(payload)
    except TemplateError:
        return
    for leak in ("<class", "<built-in", "<module", "<function", "uid=", "__builtins__", "subprocess"):
        assert leak not in out, out


def test_messages_are_not_mutated_by_the_template() -> None:
    fmt = ModelFormat.from_chat_template("{% set _ = messages[0].update({'content': 'x'}) %}{{ messages[0].content }}")
    msgs = [{"role": "user", "content": "hi"}]
    with pytest.raises(TemplateError):
        fmt.render(msgs)
    assert msgs == [{"role": "user", "content": "hi"}]


BOMBS = {
    "range-1e9": "{% for i in range(10**9) %}x{% endfor %}",
    "nested-ranges-silent": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "nested-ranges-output": "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
    "triple-nested": (
        "{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}"
        "{% endfor %}{% endfor %}{% endfor %}"
    ),
    "string-repeat": "{{ 'a' * 10**10 }}",
    "list-repeat": "{{ ([1] * 10**9)|length }}",
    "huge-power": "{{ 7 ** 999999 }}",
    "doubling-concat": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
        "{{ ns.s|length }}"
    ),
    "doubling-plus": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"
        "{{ ns.s|length }}"
    ),
    "percent-width": "{{ '%999999999d' % 1 }}",
    "format-width": "{{ '{:>999999999}'.format(1) }}",
    "center-filter": "{{ 'x'|center(999999999) }}",
    "format-filter": "{{ '%999999999s'|format('x') }}",
    "str-ljust": "{{ 'x'.ljust(999999999) }}",
    "percent-star-width": "{{ '%*d' % (999999999, 1) }}",
    "format-nested-width": "{{ '{:{}}'.format(1, 999999999) }}",
    "indent-filter": "{{ 'a\nb'|indent(999999999) }}",
    "tojson-indent": "{{ messages|tojson(indent=999999999) }}",
    "recursive-macro": "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "branching-macro": "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
    "recursive-loop": (
        "{% for x in [[1,[1,[1]]]] recursive %}{% for i in range(100000) %}{{ loop(x) }}{% endfor %}{% endfor %}"
    ),
}


@pytest.mark.parametrize("payload", BOMBS.values(), ids=BOMBS.keys())
def test_jinja_bomb_is_stopped_quickly_with_a_prompt_error(payload: str) -> None:
    fmt = ModelFormat(chat_template=payload, time_budget=0.2)
    with pytest.raises(PromptError):
        fmt.render(USER)


def test_jinja_bomb_is_stopped_with_the_default_budget() -> None:
    # how fast: benchmarks/bench_sandbox_bombs.py (speed is measured there, never asserted in a test)
    with pytest.raises(PromptError):
        ModelFormat.from_chat_template(BOMBS["nested-ranges-output"]).render(USER)


def test_time_budget_is_configurable() -> None:
    fmt = ModelFormat.from_chat_template(BOMBS["nested-ranges-silent"])
    with pytest.raises(TemplateTimeoutError):
        fmt.render(USER)
    import dataclasses

    quick = dataclasses.replace(fmt, time_budget=0.05)
    with pytest.raises(TemplateTimeoutError, match="0.05"):
        quick.render(USER)


def test_timeout_is_a_template_error_and_a_value_error() -> None:
    assert issubclass(TemplateTimeoutError, TemplateError)
    assert issubclass(TemplateTimeoutError, ValueError)


def test_raise_exception_carries_the_template_message() -> None:
    with pytest.raises(TemplateError, match="Conversation roles must alternate"):
        render("{{ raise_exception('Conversation roles must alternate') }}")


def test_syntax_error_names_the_line() -> None:
    with pytest.raises(TemplateError, match="line 2"):
        ModelFormat.from_chat_template("ok\n{% if %}")


def test_undefined_attribute_is_a_template_error() -> None:
    with pytest.raises(TemplateError):
        render("{{ messages[0].content.nope.deeper }}")


def test_tojson_does_not_escape_html_and_keeps_unicode() -> None:
    assert render("{{ {'a': '<b>&é'}|tojson }}") == '{"a": "<b>&é"}'
    assert render("{{ {'b': 1, 'a': 2}|tojson(indent=2, sort_keys=true) }}") == '{\n  "a": 2,\n  "b": 1\n}'
    assert render("{{ [1, 2]|tojson(separators=(',', ':')) }}") == "[1,2]"


def test_transformers_globals_are_available() -> None:
    assert render("{{ strftime_now('%Y') | length }}") == "4"
    assert render("{{ dict(a=1)['a'] }}") == "1"
    assert render("{% set ns = namespace(n=1) %}{% set ns.n = ns.n + 1 %}{{ ns.n }}") == "2"
    assert render("{% for i in range(5) %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}") == "01"
    assert render("{% generation %}kept{% endgeneration %}") == "kept"


def test_namespace_refuses_underscore_names() -> None:
    with pytest.raises(TemplateError):
        render("{% set ns = namespace(n=1) %}{% set ns._secret = 1 %}")


def test_output_is_capped() -> None:
    with pytest.raises(TemplateError):
        render_template(compile_template("{% for i in range(100000) %}xxxxxxxxxx{% endfor %}"), {}, max_chars=10_000)


def test_a_compiled_template_is_cached_by_source() -> None:
    assert compile_template("{{ 1 }}") is compile_template("{{ 1 }}")
