"""A custom prompter declared in a few lines: retrieval-augmented answers with citations.

Run: python examples/rag_prompter.py
"""

from __future__ import annotations

from typing import Any

from prompter import ModelFormat, PrompterBase


class RagPrompter(PrompterBase):
    """Answers a question from numbered passages and cites them as [n]."""

    template = "{sos}{system}\n{instruction}{tools}{eos}{history}{soh}{user}{input}{eoh}{soa}"
    instruction_template = "{instruction}\n\n{extra_keys}"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            {
                "system": "Answer only from the passages below. Cite every claim as [n]; "
                "say \"I don't know\" when they do not contain the answer.",
                "user": "Question: {question}",
            },
            extra_keys="context",
            system="You are a careful research assistant.",
            **kwargs,
        )

    def preprocess(self, input: Any) -> Any:
        # accept a list of passages and number them; a str context passes as is
        if isinstance(input, dict) and isinstance(input.get("context"), list):
            passages = "\n".join(f"[{i}] {text}" for i, text in enumerate(input["context"], 1))
            return {**input, "context": passages}
        return input


if __name__ == "__main__":
    rag = RagPrompter()
    question = {
        "question": "Why do cats purr?",
        "context": ["Cats purr when content.", "Purring may also aid healing; note {input} stays literal."],
    }
    print(rag.generate_prompt(question))
    print(rag.generate_prompt(question, format="openai"))
    print(rag.generate_prompt(question, model_format=ModelFormat.get("qwen2.5")))
