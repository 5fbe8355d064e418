"""The table: one table's game, from a board's event to its effects.

maps (which sensor is which game object) -> router (event -> game input) -> session (journal, rules,
undo) -> effects (LEDs, speech, pages), with the journal keeping every input before it is applied.
The adapter is the contract each game's `shared_rules/<game>/table.py` fills in. Knows no transport.
"""
