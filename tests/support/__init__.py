"""Helpers the tests share: a private Mosquitto broker, linked pty pairs, MicroPython runner.

The pytest fixtures in tests/conftest.py wrap these; import them directly when a
test needs more than one broker or pty pair.
"""
