# The rules are in rules.py (see shared_rules/__init__.py); this file stays empty for a board's heap.
