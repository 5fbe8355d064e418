"""Mutants of shared_rules/ that no player, board or page could ever tell apart from the rules,
for tests/rules/mutation.py (which counts them apart instead of asking tests of them).

(function, the mutated line(s) as mutmut writes them, joined by " / ") -> why it changes nothing; a
line found twice in its function adds the line after it: "<line> // then: <next line>".
Keyed by the change itself, not by mutmut's number for it, so an entry goes stale (and the
mutant counts again) as soon as the code it describes changes.
"""

# Battleground's legal() counts the tilt reports to come before listing them, to make their list in
# one piece of a board's heap (_room): a wrong count changes only that room (CPython frees it anyway);
# the reports listed are chosen by the same test again, a few lines below.
ROOM = "only the room made up front for the list of tilt reports changes, not the reports listed"
# A team with neither noble is refused in words, but every Build Your Team scenario has the Princess or the
# King (single-target the King, the others both): no option reaches the refusal.
CROWNLESS = "no scenario lacks both the Princess and the King, so this refusal is never given"
# Ringo keeps the effects of each move made once (CPython) only to hand out copies quicker than making them.
SAID = "the effects are made afresh instead of copied from those kept: the same words, cue and progress"
# playout() plays through game.apply, never Match.apply, and its callers read only the match's state.
LOG = "playout never applies an input through the Match, so whether it would keep a log is never read"
# Every piece battleground reads aloud is first checked to be one of the Orcs' or the Knights'.
ARMIES = "every piece read aloud belongs to the Orcs or the Knights (inputs are checked first): the fallback is never used"

EQUIVALENT = {
    ("shared_rules.engine._esc", "if len(s) <= 25 and len(_ESCAPED) < 256:"):
        "only which escaped strings are remembered changes; every string is escaped the same",
    ("shared_rules.medieval_madness.board._here", 'return f[:i] if (i >= 0) or True else "."'):
        "a module of the shared_rules package always has a folder in its __file__, so i >= 0",
    ("shared_rules.medieval_madness.board._here", 'return f[:i] if i >= 0 else "XX.XX"'):
        "a module of the shared_rules package always has a folder in its __file__: the fallback is never used",
    ("shared_rules.medieval_madness.board.parse_board", 'def parse_board(data, where="BOARD"):'):
        "its one caller, load_board, always names the file (\"board <path>\"): the default is never used",
    ("shared_rules.battleground.rules.kind_of", 'k = piece.rsplit(".", 1)[1]'):
        "a piece's name has one dot (orcs.warrior1), so splitting from either end cuts the same",
    ("shared_rules.battleground.rules.legal", "n = len(falls) - 1"): ROOM,
    ("shared_rules.battleground.rules.legal", "n = len(falls) + 2"): ROOM,
    ("shared_rules.battleground.rules.legal", "if p not in down or p not in falls: // then: n += 1"): ROOM,
    ("shared_rules.battleground.rules.legal", "if p in down and p not in falls: // then: n += 1"): ROOM,
    ("shared_rules.battleground.rules.legal", "if p not in down and p in falls: // then: n += 1"): ROOM,
    ("shared_rules.battleground.rules.legal", "n = 1"): ROOM,
    ("shared_rules.battleground.rules.legal", "n -= 1"): ROOM,
    ("shared_rules.battleground.rules.legal", "n += 2"): ROOM,
    ("shared_rules.medieval_pong.rules._announce_throw", "prompt(fx, s, text, )"):
        "prompt's choices default to None, which is what was passed",
    ("shared_rules.medieval_pong.rules.apply", 'raise _refused("not-now", by, " and ".join(awaiting(state)) or "NOBODY")'):
        "a finished game is refused before this line, and a game in play always awaits somebody",
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
    ("shared_rules.battleground.rules._stood_first", "out = _room(len(restand) - room)"):
        "only the room made up front for the list changes (a negative size makes an empty list), not the inputs listed",
    ("shared_rules.battleground.rules.spoken", "army = ARMY.get(side)"): ARMIES,
    ("shared_rules.battleground.rules.spoken", "army = ARMY.get(side, )"): ARMIES,
    ("shared_rules.battleground.rules.spoken", "army = ARMY.get(side, None)"): ARMIES,
    ("shared_rules.engine.playout", "m = Match(game, options, seed, )"): LOG,
    ("shared_rules.engine.playout", "m = Match(game, options, seed, keep_log=True)"): LOG,
    ("shared_rules.engine.playout", "m = Match(game, options, seed, keep_log=None)"): LOG,
    ("shared_rules.medieval_madness.rules._on_roll", '_leave_dungeon(state, p, fx, None) // then: elif p["pass"]:'):
        "leaving on a lucky roll: _leave_dungeon only asks `if with_pass`, and None is as false as False",
    ("shared_rules.medieval_pong.rules.on_choose", '_resolve_hit(state, fx, h["by"], None, k, t)'):
        "a choice between two balls follows only a Blacksmith's or Two-Sword Knight's throw, and _resolve_hit "
        "treats only the Blind Magician's and the Archer's throws apart: None acts as either",
    ("shared_rules.medieval_pong.team.team_hand", "raise Illegal(None) // then: return hand"): CROWNLESS,
    ("shared_rules.medieval_pong.team.team_hand",
     'raise Illegal("team %s has no Princess or King to wear a crown" / team)'): CROWNLESS,
    ("shared_rules.medieval_pong.team.team_hand",
     'raise Illegal("XXteam %s has no Princess or King to wear a crownXX" % team)'): CROWNLESS,
    ("shared_rules.medieval_pong.team.team_hand",
     'raise Illegal("team %s has no princess or king to wear a crown" % team)'): CROWNLESS,
    ("shared_rules.medieval_pong.team.team_hand",
     'raise Illegal("TEAM %S HAS NO PRINCESS OR KING TO WEAR A CROWN" % team)'): CROWNLESS,
    ("shared_rules.ringo.rules.play_move", "said = _SAID[side].get(None)"): SAID,
    ("shared_rules.ringo.rules.play_move", "said = None"): SAID,
    ("shared_rules.ringo.rules.play_move", "_SAID[side][mv] = None"): SAID,
}
