"""Errors a user can act on: printed as one clear line, never as a traceback."""


class UserError(Exception):
    """Something the user gave us is wrong; the message says what and where."""
