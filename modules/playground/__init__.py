"""The prompt playground: a page that shows exactly what a model receives (``prompter playground``).

:func:`create_playground_app` is the FastAPI app (the page, its static files and ``POST /api/render``);
``prompter serve`` mounts it at ``/playground`` with token counts from the served model's tokenizer.
"""

from __future__ import annotations

from modules.playground.app import create_playground_app, mount_playground

__all__ = ["create_playground_app", "mount_playground"]
