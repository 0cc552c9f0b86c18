"""The evaluation-harness layer: dataset prompt templates and model meta templates.

An evaluation renders one dataset sample thousands of times, for many models. The
dataset side says what is asked (:class:`PromptTemplate`, with in-context examples
and PPL labels; :class:`MultiTurnPromptTemplate`; :class:`MMPromptTemplate`), and
yields a string or a :class:`PromptList`; the model side says how it is written
(:class:`MetaTemplate`, the harness's view of a :class:`~prompter.ModelFormat`).

>>> from prompter.templates import MetaTemplate, PromptTemplate
>>> t = PromptTemplate(dict(round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt="{a}")]))
>>> meta = MetaTemplate(round=[dict(role="HUMAN", begin="<H>", end="\\n"),
...                            dict(role="BOT", begin="<B>", end="\\n", generate=True)])
>>> meta.parse(t.generate_item({"q": "1+1=?", "a": "2"}, output_field="a"), mode="gen")
'<H>Q: 1+1=?\\n<B>'

Importing this package costs the standard library and prompter's own modules only.
"""

from prompter.templates.meta_template import MetaTemplate, RoleSpec
from prompter.templates.multi_turn import MultiTurnPromptTemplate
from prompter.templates.multimodal import MMPromptTemplate
from prompter.templates.prompt_list import PromptList
from prompter.templates.prompt_template import PromptTemplate

__all__ = [
    "MMPromptTemplate",
    "MetaTemplate",
    "MultiTurnPromptTemplate",
    "PromptList",
    "PromptTemplate",
    "RoleSpec",
]
