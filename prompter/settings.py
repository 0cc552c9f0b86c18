"""The one setting prompter reads from the environment: the default system prompt.

``PROMPTER_DEFAULT_SYSTEM`` replaces the library's default system prompt
(``You are a helpful assistant.``) for prompters constructed afterwards. An
explicit ``system=`` argument and a bound model's own default both take
precedence over it; ``enable_system=False`` leaves the system prompt out.
"""

from __future__ import annotations

import os

__all__ = ["DEFAULT_SYSTEM_ENV", "LIBRARY_DEFAULT_SYSTEM", "default_system_prompt"]

LIBRARY_DEFAULT_SYSTEM = "You are a helpful assistant."
DEFAULT_SYSTEM_ENV = "PROMPTER_DEFAULT_SYSTEM"


def default_system_prompt() -> str:
    """The library default system prompt, as the environment sets it now."""
    return os.environ.get(DEFAULT_SYSTEM_ENV, LIBRARY_DEFAULT_SYSTEM)
