"""Battlement host bridge: transports, router, session, effects."""

__version__ = "0.1.0"
