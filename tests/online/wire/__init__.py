"""Loopback servers speaking each provider's native wire protocol, written from its public documentation.

Each one validates what it receives and rejects what the real API would reject
(a wrong or missing header, a bad key, a missing required field, roles out of
order, an unknown part type), so a test against it fails when the module sends
something the provider would refuse.
"""
