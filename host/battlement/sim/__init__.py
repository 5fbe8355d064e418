"""Simulated boards: the protocol's boards in Python (simulator) and the real firmware under MicroPython (firmware)."""
