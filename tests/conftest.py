"""Shared test set-up: ``tests/`` is on ``sys.path`` so that every subfolder imports the helpers
kept here (``fault_server``, ``tiny_model_fixture``) by their plain names."""
