"""The OpenAI-compatible HTTP server that ``TrainableModule.start(serve=True)`` and ``prompter serve`` run."""
