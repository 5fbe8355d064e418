"""Mutants of shared_rules/ that no player, board or page could ever tell apart from the rules,
for tests/rules/mutation.py (which counts them apart instead of asking tests of them).

(function, the mutated line(s) as mutmut writes them, joined by " / ") -> why it changes nothing.
Keyed by the change itself, not by mutmut's number for it, so an entry goes stale (and the
mutant counts again) as soon as the code it describes changes.
"""

EQUIVALENT = {
    ("shared_rules.engine._esc", "if len(s) <= 25 and len(_ESCAPED) < 256:"):
        "only which escaped strings are remembered changes; every string is escaped the same",
    ("shared_rules.medieval_madness.board._here", 'return f[:i] if (i >= 0) or True else "."'):
        "a module of the shared_rules package always has a folder in its __file__, so i >= 0",
    ("shared_rules.battleground.rules._open_shot", 'name = w.split(".", 2)[1].replace("-", " ")'):
        "a weapon's name has one dot (orcs.castle-catapult), so splitting at two dots cuts the same",
    ("shared_rules.ringo.rules._jumped_cell", "return JUMPED.get(frm + (to << 6), -2)"):
        "its one caller (_why_not) only asks whether the cell is < 0, >= 0 or > 0, alike for -1 and -2",
    ("shared_rules.ringo.opponent._search", "if alpha > beta:"):
        "cutting off on equality or only above it finds the same best move: a reply equal to the best "
        "is never chosen (a later move must score strictly more); only the count of nodes searched differs",
    ("shared_rules.medieval_pong.team.on_pick", 'if len(state["sides"][other(s)]["hand"]) > _team_size(state):'):
        "in the full-set draft both sides start with the same three nobles and take turns, so the other "
        "side is full only after the very last pick, when the draft is over and whose turn it is is never read",
}
