"""The registry of known model families: a literal mapping, looked up by family or model id.

Each entry holds the family's fixed strings (the fields of ``ModelFormat``),
its tokens, and the file name of its chat template, shipped in
``prompter/formats/chat_templates/`` exactly as the model ships it.  Where fixed strings
reproduce the template they were derived from it (a test keeps them in step); for the
others they are the family's usual delimiters, and rendering goes through the template.

What several families share is written once, as a module constant: token tuples
(``CHATML_TOKENS``, ``DEEPSEEK_TOOL_TOKENS``, ...) and base entries (``CHATML``,
``LLAMA_3``, ``MISTRAL``, ...).  A family that varies on one is written as
``{**BASE, "file": ..., <what it changes>}``; the bases name no template file.

``special_tokens`` are the delimiters the family's real tokenizer has as tokens of its own (its
added tokens, as its ``tokenizer.json`` lists them), never a tag its template writes as plain text
(Llama 2's ``[INST]``, Zephyr's ``<|user|>``, Qwen 2.5's ``<tools>``): a list is what tells markup
a tokenizer parses as control tokens from text (the playground marks them).

Models that ship a separate ``tool_use`` template (Hermes 2 Pro, Command R) name it as
``tool_file``: it renders the conversations given tools, and the ``default`` template
(``file``, or ``template`` given inline) the others, as transformers picks between them.

A name is resolved, case-insensitively, as a family name, an alias or a known model
id, then by the first matching pattern over the model id (``Qwen/Qwen2.5-7B-Instruct``
-> ``qwen2.5``).

Why this file is long: it is data — 40 families, their shared pieces and aliases, in one literal.
"""

from __future__ import annotations

import difflib
import re
from functools import cache
from pathlib import Path
from typing import Any

from prompter.errors import UnknownModelFormatError

__all__ = ["ALIASES", "CONFIG_STOPS", "FAMILIES", "PATTERNS", "family_fields", "family_of"]

_TEMPLATES = Path(__file__).parent / "chat_templates"


HERMES_2_PRO_DEFAULT = (
    "{{bos_token}}{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] "
    "+ '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""The ``default`` chat template of NousResearch/Hermes-2-Pro-Llama-3-8B: ChatML after the BOS token.

The model ships two named templates; transformers renders with ``tool_use`` when given
``tools`` and with ``default`` otherwise, and so does the ``hermes-2-pro`` format (the
``tool_use`` one fails on a conversation without tools)."""

# -- shared pieces: tokens and delimiters several families have in common, written once ---------------

CHATML_TOKENS = ("<|im_end|>", "<|im_start|>")
QWEN_TOOL_TOKENS = (*CHATML_TOKENS, "<tool_call>", "</tool_call>")
"""ChatML's tokens and the tool-call tags, as Qwen 2.5's tokenizer has them (its added tokens, ids
151643-151664: ``<tools>`` and ``<tool_response>`` are plain text to it, though its template writes them)."""

HERMES_TOOL_TOKENS = (*QWEN_TOOL_TOKENS, "<tools>", "</tools>", "<tool_response>", "</tool_response>")
"""ChatML's tokens and every Hermes tool tag: Hermes 2 Pro made ``<tools>``, ``<tool_call>``,
``<tool_response>`` and their closing tags single tokens."""

LLAMA_3_TOKENS = ("<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>")

INST_TOKENS = ("<s>", "</s>", "[INST]", "[/INST]")
"""The ``[INST]`` control tokens of Mistral's later tokenizers (to Llama 2's and Mistral v0.1's, plain text)."""

MISTRAL_SYSTEM_TOKENS = (*INST_TOKENS, "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]")
MISTRAL_TOOL_TOKENS = (
    "<s>",
    "</s>",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[INST]",
    "[/INST]",
    "[TOOL_CALLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
)

DEEPSEEK_BOS = "<｜begin▁of▁sentence｜>"
DEEPSEEK_EOS = "<｜end▁of▁sentence｜>"
DEEPSEEK_TOOL_TOKENS = (
    DEEPSEEK_BOS,
    DEEPSEEK_EOS,
    "<｜User｜>",
    "<｜Assistant｜>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁outputs▁end｜>",
    "<｜tool▁outputs▁begin｜>",
    "<｜tool▁output▁begin｜>",
    "<｜tool▁output▁end｜>",
)
"""DeepSeek V2.5 / V3 / R1 (written with full-width bars and ``▁``, as the tokenizer has them)."""


GLM_TURN_STOPS = ("<|user|>", "<|observation|>")
"""What ChatGLM3 and GLM-4 stop at besides the eos token: the tokens that open the next turn.

Their templates write nothing after an answer; the models end one by opening the next turn, and
their generation configs stop there (GLM-4's ``eos_token_id``: 151329, 151336, 151338 -- ``<|endoftext|>``,
``<|user|>``, ``<|observation|>``; ChatGLM3's ``chat``: ``</s>`` and these two). The eos token stays the
first stop word: fine-tuning appends it after an answer (ChatGLM3's own fine-tuning does too; GLM-4's
appends ``<|user|>``, which stops the model as well)."""


CHATML: dict[str, Any] = {
    "bos_token": None,
    "eos_token": "<|im_end|>",
    "sos": "<|im_start|>system\n",
    "eos": "<|im_end|>\n",
    "soh": "<|im_start|>user\n",
    "eoh": "<|im_end|>\n",
    "soa": "<|im_start|>assistant\n",
    "eoa": "<|im_end|>\n",
    "generation_prompt": "<|im_start|>assistant\n",
    "stop_words": ("<|im_end|>",),
    "special_tokens": CHATML_TOKENS,
}
"""ChatML turns: ``chatml`` itself and the base of Qwen, Yi, InternLM2 and Hermes 2 Pro."""

QWEN_STOPS = ("<|im_end|>", "<|endoftext|>")
"""Qwen's chat models stop at ``<|im_end|>`` and at ``<|endoftext|>`` (``eos_token_id`` 151645, 151643 in
the ``generation_config.json`` of Qwen 1.5 Chat, Qwen 2 and 2.5 Instruct and Qwen 3)."""

CHATML_TOOLS: dict[str, Any] = {
    **CHATML,
    "soe": "<|im_start|>user\n<tool_response>\n",
    "eoe": "\n</tool_response><|im_end|>\n",
    "tool_call_start": "<tool_call>\n",
    "tool_call_end": "\n</tool_call>",
    "special_tokens": QWEN_TOOL_TOKENS,
}
"""ChatML with Hermes-style tool calls and tool results in a user turn, as Qwen 2.5 and 3 write them."""

LLAMA_3: dict[str, Any] = {
    "bos_token": "<|begin_of_text|>",
    "eos_token": "<|eot_id|>",
    "sos": "<|start_header_id|>system<|end_header_id|>\n\n",
    "eos": "<|eot_id|>",
    "soh": "<|start_header_id|>user<|end_header_id|>\n\n",
    "eoh": "<|eot_id|>",
    "soa": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "eoa": "<|eot_id|>",
    "generation_prompt": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "bos": "<|begin_of_text|>",
    "stop_words": ("<|eot_id|>", "<|end_of_text|>"),
    "special_tokens": LLAMA_3_TOKENS,
}
"""Llama 3 headers; 3.1 and 3.2 add the ``ipython`` turn. Llama 3 Instruct stops at ``<|eot_id|>`` and
``<|end_of_text|>`` (its ``generation_config.json``: ``eos_token_id`` 128001, 128009)."""

LLAMA_3_1_STOPS = ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>")
"""Llama 3.1 and 3.2 Instruct also stop at ``<|eom_id|>``, the end of a built-in tool call
(``eos_token_id`` 128001, 128008, 128009)."""

MISTRAL: dict[str, Any] = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "bos": "<s>",
    "stop_words": ("</s>",),
    "special_tokens": ("<s>", "</s>"),
}
"""Mistral's tokens; each version spaces its ``[INST]`` delimiters its own way, so each entry spells them out.
``[INST]`` is plain text to the first tokenizer (Mistral 7B v0.1 and v0.2, Mixtral 8x7B); the later ones
have it, and their other control tokens, as tokens of their own."""

GEMMA: dict[str, Any] = {
    "bos_token": "<bos>",
    "eos_token": "<eos>",
    "soh": "<start_of_turn>user\n",
    "eoh": "<end_of_turn>\n",
    "soa": "<start_of_turn>model\n",
    "eoa": "<end_of_turn>\n",
    "generation_prompt": "<start_of_turn>model\n",
    "bos": "<bos>",
    "stop_words": ("<end_of_turn>", "<eos>"),
    "special_tokens": ("<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"),
}

PHI_3: dict[str, Any] = {
    "bos_token": "<s>",
    "eos_token": "<|endoftext|>",
    "sos": "<|system|>\n",
    "eos": "<|end|>\n",
    "soh": "<|user|>\n",
    "eoh": "<|end|>\n",
    "soa": "<|assistant|>\n",
    "eoa": "<|end|>\n",
    "generation_prompt": "<|assistant|>\n",
    "stop_words": ("<|end|>", "<|endoftext|>", "<|assistant|>"),
    "special_tokens": ("<s>", "<|endoftext|>", "<|system|>", "<|end|>", "<|user|>", "<|assistant|>"),
}
"""Phi-3 and Phi-3.5 mini: their ``generation_config.json`` stops at ``<|end|>``, ``<|endoftext|>`` and
``<|assistant|>`` (``eos_token_id`` 32007, 32000, 32001)."""

DEEPSEEK_V3: dict[str, Any] = {
    "bos_token": DEEPSEEK_BOS,
    "eos_token": DEEPSEEK_EOS,
    "soh": "<｜User｜>",
    "soa": "<｜Assistant｜>",
    "eoa": DEEPSEEK_EOS,
    "soe": "<｜tool▁output▁begin｜>",
    "eoe": "<｜tool▁output▁end｜>",
    "generation_prompt": "<｜Assistant｜>",
    "bos": DEEPSEEK_BOS,
    "tool_call_start": "<｜tool▁call▁begin｜>",
    "tool_call_end": "<｜tool▁call▁end｜>",
    "stop_words": (DEEPSEEK_EOS,),
    "special_tokens": DEEPSEEK_TOOL_TOKENS,
}
"""DeepSeek V2.5, V3 and R1."""

COMMAND_R: dict[str, Any] = {
    "bos_token": "<BOS_TOKEN>",
    "eos_token": "<|END_OF_TURN_TOKEN|>",
    "sos": "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>",
    "eos": "<|END_OF_TURN_TOKEN|>",
    "soh": "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>",
    "eoh": "<|END_OF_TURN_TOKEN|>",
    "soa": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "eoa": "<|END_OF_TURN_TOKEN|>",
    "generation_prompt": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "bos": "<BOS_TOKEN>",
    "stop_words": ("<|END_OF_TURN_TOKEN|>",),
    "special_tokens": (
        "<BOS_TOKEN>",
        "<|END_OF_TURN_TOKEN|>",
        "<|START_OF_TURN_TOKEN|>",
        "<|SYSTEM_TOKEN|>",
        "<|USER_TOKEN|>",
        "<|CHATBOT_TOKEN|>",
    ),
}


# -- the registry: a variant is its base spread, then its file and what it changes ---------------------

FAMILIES: dict[str, dict[str, Any]] = {
    "chatml": {**CHATML, "file": "chatml.jinja"},
    "qwen1.5": {
        **CHATML,
        "file": "qwen1.5.jinja",
        "default_system": "You are a helpful assistant",
        "stop_words": QWEN_STOPS,
    },
    "qwen2": {
        **CHATML,
        "file": "qwen2.jinja",
        "default_system": "You are a helpful assistant.",
        "stop_words": QWEN_STOPS,
    },
    "qwen2.5": {
        **CHATML_TOOLS,
        "file": "qwen2.5.jinja",
        "default_system": "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
        "stop_words": QWEN_STOPS,
    },
    "qwen3": {
        **CHATML_TOOLS,
        "file": "qwen3.jinja",
        "stop_words": QWEN_STOPS,
        "special_tokens": (*QWEN_TOOL_TOKENS, "<tool_response>", "</tool_response>", "</think>", "<think>"),
    },
    "llama-2": {
        "file": "llama-2.jinja",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "soh": "<s>[INST] ",
        "eoh": " [/INST]",
        "soa": " ",
        "eoa": " </s>",
        "stop_words": ("</s>",),
        "special_tokens": ("<s>", "</s>"),  # [INST] and <<SYS>> are plain text to Llama 2's tokenizer
    },
    "llama-3": {**LLAMA_3, "file": "llama-3.jinja"},
    "llama-3.1": {
        **LLAMA_3,
        "file": "llama-3.1.jinja",
        "sos": (
            "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
            "Today Date: 26 Jul 2024\n\n"
        ),
        "soe": "<|start_header_id|>ipython<|end_header_id|>\n\n",
        "eoe": "<|eot_id|>",
        "default_system": "",
        "tool_call_start": "<|python_tag|>",
        "tool_call_end": "<|eom_id|>",
        "stop_words": LLAMA_3_1_STOPS,
        "special_tokens": (*LLAMA_3_TOKENS, "<|python_tag|>", "<|eom_id|>"),
    },
    "llama-3.2": {
        **LLAMA_3,
        "file": "llama-3.2.jinja",
        "soe": "<|start_header_id|>ipython<|end_header_id|>\n\n",
        "eoe": "<|eot_id|>",
        "stop_words": LLAMA_3_1_STOPS,
    },
    "mistral-v0.1": {**MISTRAL, "file": "mistral-v0.1.jinja", "soh": "[INST] ", "eoh": " [/INST]", "eoa": "</s> "},
    "mixtral": {**MISTRAL, "file": "mixtral.jinja", "soh": " [INST] ", "eoh": " [/INST]", "soa": " ", "eoa": "</s>"},
    "mistral-v0.3-tools": {
        **MISTRAL,
        "file": "mistral-v0.3-tools.jinja",
        "soh": " [INST] ",
        "eoh": " [/INST]",
        "soa": " ",
        "eoa": " </s>",
        "soe": "[TOOL_RESULTS] ",
        "eoe": "[/TOOL_RESULTS]",
        "tool_call_start": "[TOOL_CALLS] ",
        "special_tokens": MISTRAL_TOOL_TOKENS,
    },
    "mistral-nemo": {
        **MISTRAL,
        "file": "mistral-nemo.jinja",
        "soh": "[INST]",
        "eoh": "[/INST]",
        "eoa": "</s>",
        "soe": "[TOOL_RESULTS]",
        "eoe": "[/TOOL_RESULTS]",
        "tool_call_start": "[TOOL_CALLS]",
        "special_tokens": MISTRAL_TOOL_TOKENS,
    },
    "mistral-large-2411": {
        **MISTRAL,
        "file": "mistral-large-2411.jinja",
        "sos": "[SYSTEM_PROMPT] ",
        "eos": "[/SYSTEM_PROMPT]",
        "soh": "[INST] ",
        "eoh": "[/INST]",
        "soa": " ",
        "eoa": "</s>",
        "special_tokens": MISTRAL_SYSTEM_TOKENS,
    },
    "mistral-small-3": {
        **MISTRAL,
        "file": "mistral-small-3.jinja",
        "sos": "[SYSTEM_PROMPT]",
        "eos": "[/SYSTEM_PROMPT]",
        "soh": "[INST]",
        "eoh": "[/INST]",
        "eoa": "</s>",
        "special_tokens": MISTRAL_SYSTEM_TOKENS,
    },
    "gemma-2": {**GEMMA, "file": "gemma-2.jinja"},
    "gemma-3": {
        **GEMMA,
        "file": "gemma-3.jinja",
        "special_tokens": ("<bos>", "<eos>", "<start_of_turn>", "<start_of_image>", "<end_of_turn>"),
    },
    "phi-3": {**PHI_3, "file": "phi-3.jinja"},
    "phi-3.5": {**PHI_3, "file": "phi-3.5.jinja"},
    "phi-4": {
        "file": "phi-4.jinja",
        "bos_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
        "sos": "<|im_start|>system<|im_sep|>",
        "eos": "<|im_end|>",
        "soh": "<|im_start|>user<|im_sep|>",
        "eoh": "<|im_end|><|im_start|>assistant<|im_sep|>",
        "eoa": "<|im_end|>",
        "stop_words": ("<|im_end|>",),
        "special_tokens": ("<|endoftext|>", "<|im_end|>", "<|im_start|>", "<|im_sep|>"),
    },
    "phi-4-mini": {
        "file": "phi-4-mini.jinja",
        "bos_token": "<|endoftext|>",
        "eos_token": "<|endoftext|>",
        "sos": "<|system|>",
        "eos": "<|end|>",
        "soh": "<|user|>",
        "eoh": "<|end|>",
        "soa": "<|assistant|>",
        "eoa": "<|end|>",
        "generation_prompt": "<|assistant|>",
        "tool_call_start": "<|tool_call|>",
        "tool_call_end": "<|/tool_call|>",
        "stop_words": ("<|end|>", "<|endoftext|>"),
        "special_tokens": (
            "<|endoftext|>",
            "<|tool|>",
            "<|/tool|>",
            "<|end|>",
            "<|assistant|>",
            "<|system|>",
            "<|user|>",
        ),
    },
    "internlm2": {
        **CHATML,
        "file": "internlm2.jinja",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "bos": "<s>",
        "stop_words": ("<|im_end|>", "</s>"),
        "special_tokens": ("<s>", "</s>", "<|im_start|>", "<|im_end|>"),
    },
    "chatglm3": {
        "file": "chatglm3.jinja",
        "bos_token": None,
        "eos_token": "</s>",
        "bos": "[gMASK]sop",
        "sos": "<|system|>\n ",
        "soh": "<|user|>\n ",
        "soa": "<|assistant|>\n ",
        "generation_prompt": "<|assistant|>",
        "stop_words": ("</s>", *GLM_TURN_STOPS),
        "special_tokens": (
            "</s>",
            "<|assistant|>",
            "[gMASK]",
            "sop",
            "<|system|>",
            "<|user|>",
            "<|observation|>",
        ),
    },
    "glm-4": {
        "file": "glm-4.jinja",
        "bos_token": None,
        "eos_token": "<|endoftext|>",
        "bos": "[gMASK]<sop>",
        "sos": "<|system|>\n",
        "soh": "<|user|>\n",
        "soa": "<|assistant|>\n",
        "soe": "<|observation|>\n",
        "generation_prompt": "<|assistant|>",
        "stop_words": ("<|endoftext|>", *GLM_TURN_STOPS),
        "special_tokens": (
            "<|endoftext|>",
            "<|system|>",
            "<|assistant|>",
            "[gMASK]",
            "<sop>",
            "<|user|>",
            "<|observation|>",
        ),
    },
    "deepseek-v2": {
        "file": "deepseek-v2.jinja",
        "bos_token": DEEPSEEK_BOS,
        "eos_token": DEEPSEEK_EOS,
        "eos": "\n\n",
        "soh": "User: ",
        "eoh": "\n\n",
        "soa": "Assistant: ",
        "eoa": DEEPSEEK_EOS,
        "generation_prompt": "Assistant:",
        "bos": DEEPSEEK_BOS,
        "stop_words": (DEEPSEEK_EOS,),
        "special_tokens": (DEEPSEEK_BOS, DEEPSEEK_EOS),
    },
    "deepseek-v2.5": {**DEEPSEEK_V3, "file": "deepseek-v2.5.jinja"},
    "deepseek-v3": {**DEEPSEEK_V3, "file": "deepseek-v3.jinja"},
    "deepseek-r1": {**DEEPSEEK_V3, "file": "deepseek-r1.jinja", "special_tokens": (*DEEPSEEK_TOOL_TOKENS, "</think>")},
    "deepseek-coder": {
        "file": "deepseek-coder.jinja",
        "bos_token": DEEPSEEK_BOS,
        "eos_token": "<|EOT|>",
        "soh": "### Instruction:\n",
        "eoh": "\n",
        "soa": "### Response:\n",
        "eoa": "\n<|EOT|>\n",
        "generation_prompt": "### Response:\n",
        "bos": DEEPSEEK_BOS,
        "default_system": (
            "You are an AI programming assistant, utilizing the Deepseek Coder model, developed by "
            "Deepseek Company, and you only answer questions related to computer science. For politically "
            "sensitive questions, security and privacy issues, and other non-computer science questions, "
            "you will refuse to answer\n"
        ),
        "stop_words": ("<|EOT|>",),
        "special_tokens": (DEEPSEEK_BOS, "<|EOT|>"),
    },
    "yi": {
        **CHATML,
        "file": "yi.jinja",
        "bos_token": "<|startoftext|>",
        "eos_token": "<|endoftext|>",
        "stop_words": ("<|im_end|>", "<|endoftext|>"),
        "special_tokens": ("<|startoftext|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"),
    },
    "yi-1.5": {
        "file": "yi-1.5.jinja",
        "bos_token": "<|startoftext|>",
        "eos_token": "<|im_end|>",
        "soh": "<|im_start|>user\n",
        "eoh": "<|im_end|>\n<|im_start|>assistant\n",
        "eoa": "<|im_end|>\n",
        "stop_words": ("<|im_end|>",),
        "special_tokens": ("<|startoftext|>", "<|im_end|>", "<|im_start|>"),
    },
    "baichuan2": {
        "file": "baichuan2.jinja",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "soh": "<reserved_106>",
        "soa": "<reserved_107>",
        "generation_prompt": "<reserved_107>",
        "stop_words": ("</s>",),
        "special_tokens": ("<s>", "</s>", "<reserved_106>", "<reserved_107>"),
    },
    "zephyr": {
        "file": "zephyr.jinja",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "sos": "<|system|>\n",
        "eos": "</s>\n",
        "soh": "<|user|>\n",
        "eoh": "</s>\n",
        "soa": "<|assistant|>\n",
        "eoa": "</s>\n",
        "generation_prompt": "<|assistant|>\n",
        "stop_words": ("</s>",),
        "special_tokens": ("<s>", "</s>"),  # <|user|> and the other role tags are plain text to Zephyr's tokenizer
    },
    "vicuna": {
        "file": "vicuna.jinja",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "eos": "\n\n",
        "soh": "USER: ",
        "eoh": "\n",
        "soa": "ASSISTANT: ",
        "eoa": "</s>\n",
        "generation_prompt": "ASSISTANT:",
        "stop_words": ("</s>",),
        "special_tokens": ("<s>", "</s>"),
    },
    "alpaca": {
        "file": "alpaca.jinja",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "soh": "### Instruction:\n",
        "eoh": "\n\n",
        "soa": "### Response:\n",
        "eoa": "\n\n",
        "generation_prompt": "### Response:\n",
        "stop_words": ("</s>",),
        "special_tokens": ("<s>", "</s>"),
    },
    "command-r": {**COMMAND_R, "file": "command-r.jinja"},
    "command-r-tool-use": {**COMMAND_R, "file": "command-r.jinja", "tool_file": "command-r-tool-use.jinja"},
    "granite-3.0": {
        "file": "granite-3.0.jinja",
        "bos_token": "<|end_of_text|>",
        "eos_token": "<|end_of_text|>",
        "sos": "<|start_of_role|>system<|end_of_role|>",
        "eos": "<|end_of_text|>\n",
        "soh": "<|start_of_role|>user<|end_of_role|>",
        "eoh": "<|end_of_text|>\n",
        "soa": "<|start_of_role|>assistant<|end_of_role|>",
        "eoa": "<|end_of_text|>\n",
        "soe": "<|start_of_role|>tool_response<|end_of_role|>",
        "eoe": "<|end_of_text|>\n",
        "generation_prompt": "<|start_of_role|>assistant<|end_of_role|>",
        "tool_call_start": "<|tool_call|>",
        "stop_words": ("<|end_of_text|>",),
        "special_tokens": ("<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>", "<|tool_call|>"),
    },
    "hermes-2-pro": {
        **CHATML_TOOLS,
        "template": HERMES_2_PRO_DEFAULT,
        "tool_file": "hermes-2-pro.jinja",
        "bos_token": "<|begin_of_text|>",
        "bos": "<|begin_of_text|>",
        "soe": "<|im_start|>tool\n<tool_response>\n",
        "eoe": "\n</tool_response>\n<|im_end|>\n",
        "special_tokens": ("<|begin_of_text|>", *HERMES_TOOL_TOKENS),
    },
    "openchat": {
        "file": "openchat.jinja",
        "bos_token": "<s>",
        "eos_token": "<|end_of_turn|>",
        "sos": "GPT4 Correct System: ",
        "eos": "<|end_of_turn|>",
        "soh": "GPT4 Correct User: ",
        "eoh": "<|end_of_turn|>",
        "soa": "GPT4 Correct Assistant: ",
        "eoa": "<|end_of_turn|>",
        "generation_prompt": "GPT4 Correct Assistant:",
        "bos": "<s>",
        "stop_words": ("<|end_of_turn|>",),
        "special_tokens": ("<s>", "<|end_of_turn|>"),
    },
}

CONFIG_STOPS: dict[str, tuple[str, ...]] = {
    "qwen1.5": ("<|endoftext|>",),
    "qwen2": ("<|endoftext|>",),
    "qwen2.5": ("<|endoftext|>",),
    "qwen3": ("<|endoftext|>",),
    "llama-3": ("<|end_of_text|>",),
    "llama-3.1": ("<|eom_id|>", "<|end_of_text|>"),
    "llama-3.2": ("<|eom_id|>", "<|end_of_text|>"),
    "phi-3": ("<|assistant|>",),
    "phi-3.5": ("<|assistant|>",),
}
"""The stop words of a family that its template alone does not show (none closes an answer there, and
no turn opens right after one): the model's ``generation_config.json`` lists them. Every other stop
word of a family is what ``ModelFormat.from_chat_template`` derives from its template."""

ALIASES: dict[str, str] = {
    "qwen": "qwen2.5",
    "qwen2.5-instruct": "qwen2.5",
    "llama3": "llama-3",
    "llama3.1": "llama-3.1",
    "llama3.2": "llama-3.2",
    "llama2": "llama-2",
    "mistral": "mistral-v0.3-tools",
    "gemma": "gemma-2",
    "gemma2": "gemma-2",
    "gemma3": "gemma-3",
    "phi3": "phi-3",
    "phi4": "phi-4",
    "glm4": "glm-4",
    "deepseek": "deepseek-v3",
    "openhermes": "chatml",
    "teknium/openhermes-2.5-mistral-7b": "chatml",
    "01-ai/yi-34b-chat": "yi",
    "01-ai/yi-6b-chat": "yi",
    "thudm/chatglm3-6b": "chatglm3",
    "mistralai/mistral-7b-instruct-v0.2": "mixtral",
    "cohereforai/c4ai-command-r-v01": "command-r",
    "cohereforai/c4ai-command-r-plus": "command-r",
    "nousresearch/hermes-2-pro-llama-3-8b": "hermes-2-pro",
    "lmsys/vicuna-13b-v1.5": "vicuna",
    "lmsys/vicuna-7b-v1.5": "vicuna",
    "tatsu-lab/alpaca-7b": "alpaca",
    "huggingfaceh4/zephyr-7b-beta": "zephyr",
}
"""Other names for a family, and model ids that no pattern below would place right."""

PATTERNS: tuple[tuple[str, str], ...] = (
    (r"qwen3", "qwen3"),
    (r"qwen2\.5|qwq", "qwen2.5"),
    (r"qwen2", "qwen2"),
    (r"qwen1\.5", "qwen1.5"),
    (r"hermes-2-pro|hermes-3", "hermes-2-pro"),
    (r"openhermes", "chatml"),
    (r"llama-?3\.2", "llama-3.2"),
    (r"llama-?3\.[13]", "llama-3.1"),
    (r"llama-?3", "llama-3"),
    (r"llama-?2", "llama-2"),
    (r"mistral-nemo", "mistral-nemo"),
    (r"mistral-large", "mistral-large-2411"),
    (r"mistral-small", "mistral-small-3"),
    (r"mistral-7b-instruct-v0\.1", "mistral-v0.1"),
    (r"mistral-7b-instruct-v0\.2", "mixtral"),  # as the alias of mistralai's own id: its quantised copies too
    (r"mixtral", "mixtral"),
    (r"mistral", "mistral-v0.3-tools"),
    (r"gemma-3", "gemma-3"),
    (r"gemma(?!-?(?:[3-9]|\d\d)(?:\.\d+)?(?![\d.]*[bm]))", "gemma-2"),  # not gemma-4: sizes (gemma-7b) are fine
    (r"phi-3\.5", "phi-3.5"),
    (r"phi-3", "phi-3"),
    (r"phi-4-mini", "phi-4-mini"),
    (r"phi-4", "phi-4"),
    (r"internlm2", "internlm2"),
    (r"chatglm3", "chatglm3"),
    (r"glm-4", "glm-4"),
    (r"deepseek-r1", "deepseek-r1"),
    (r"deepseek-v3", "deepseek-v3"),
    (r"deepseek-v2\.5", "deepseek-v2.5"),
    (r"deepseek-coder-v2|deepseek-v2|deepseek-llm", "deepseek-v2"),
    (r"deepseek-coder", "deepseek-coder"),
    (r"yi-1\.5", "yi-1.5"),
    (r"(^|/)yi-", "yi"),
    (r"baichuan2", "baichuan2"),
    (r"zephyr", "zephyr"),
    (r"vicuna", "vicuna"),
    (r"alpaca", "alpaca"),
    (r"command-r", "command-r"),
    (r"granite-3(?:\.0)?", "granite-3.0"),
    (r"openchat", "openchat"),
)
"""Regular expressions over a lower-cased model id, tried in order."""


_COMPILED = tuple((re.compile(pattern), family) for pattern, family in PATTERNS)


def _another_version(key: str, match: re.Match[str]) -> bool:
    """Whether the version a pattern matched goes on in *key* (``qwen2`` in ``qwen25``, ``glm-4`` in
    ``glm-4.5``, ``llama-3`` in ``llama31``): another model, whose template may differ, so that
    family is not it (an unknown name is an error naming close matches, never another model's format)."""
    rest = key[match.end() :]
    return match.group()[-1:].isdigit() and (rest[:1].isdigit() or (rest[:1] == "." and rest[1:2].isdigit()))


def family_of(name: str) -> str:
    """The family a family name, alias or Hugging Face model id belongs to."""
    if not isinstance(name, str) or not name.strip():
        raise UnknownModelFormatError(f"model format: expected a family or model name, got {name!r}")
    key = name.strip().lower()
    if key in FAMILIES:
        return key
    if key in ALIASES:
        return ALIASES[key]
    for pattern, family in _COMPILED:
        if any(not _another_version(key, match) for match in pattern.finditer(key)):
            return family
    candidates = [*FAMILIES, *ALIASES]
    close = difflib.get_close_matches(key, candidates, n=5, cutoff=0.5)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise UnknownModelFormatError(
        f"unknown model format {name!r}{hint}. Known families: {', '.join(FAMILIES)}; "
        "or build one with ModelFormat.from_chat_template(tokenizer.chat_template)"
    )


@cache
def _fields(family: str) -> tuple[tuple[str, Any], ...]:
    entry = dict(FAMILIES[family])
    source = entry.pop("template") if "template" in entry else _read(entry.pop("file"))
    tool_source = _read(entry.pop("tool_file")) if "tool_file" in entry else None
    return (("name", family), ("chat_template", source), ("tool_chat_template", tool_source), *entry.items())


def _read(file: str) -> str:
    return (_TEMPLATES / file).read_text(encoding="utf-8")


def family_fields(family: str) -> dict[str, Any]:
    """The ``ModelFormat`` fields of a registered family (its name as :func:`family_of` gives it),
    templates read from their files: plain data that ``ModelFormat.get`` builds the format from."""
    return dict(_fields(family))


@cache
def shipped_sources() -> frozenset[str]:
    """The text of every chat template prompter ships: reviewed, the files of ``chat_templates/`` and the
    ones written here. A source equal to one of them is ours, whatever format object carries it."""
    files = (path.read_text(encoding="utf-8") for path in _TEMPLATES.glob("*.jinja"))
    return frozenset([*files, HERMES_2_PRO_DEFAULT])
