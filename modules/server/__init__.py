"""The OpenAI-compatible HTTP server that ``TrainableModule.start(serve=True)`` and ``prompter serve`` run.

One file per part: ``app`` (the routes), ``schema`` (request bodies), ``validation``
(checks beyond the schema), ``sse`` (the stream writer), ``body_limit`` (the ASGI
body limit), ``errors`` (the OpenAI error envelope), ``lifecycle`` (admission and
uvicorn in a thread).
"""
