"""Battleground: why an input is refused, in words (docs/rules/battleground.md).

Only needed when an input is refused, so battleground loads this then: a board refereeing a
game of listed inputs never holds the text. Pure; CPython and MicroPython.

One block of text, a reason per line: loaded on a board it is one string, where a table of 36
strings costs about 100 bytes each besides their text (5.5 KB against 2.6 KB).
"""

# key: reason, formatted with the arguments battleground._refused() is given.
REASONS = """
over: the game is over
by: %s needs 'by': orcs or knights, got %r
turn: it is not the %s' move: waiting for the %s
shot-open: %s's shot is still open: say the shot is over first
crew-first: first say who fires the %s: {'t': 'crew', 'piece': ...}
own-figure: %r is not one of the %s' warriors or hero (like %s.warrior1, %s.hero)
power-first: power disks are placed first, at the start of the set-up
no-disks: the %s have no power disks left to place
balcony-after: the balcony figure is chosen after the power disks are placed
setting-up: the %s are still setting up: %s
confirm: the set-up step to confirm is %r, not %r
fired: %s has already fired this turn
ram-used: the %s has been used twice this game
ram-actions: the %s takes two actions and only one is left
gate-down: the %s castle gate is down, so the castle catapult cannot be used
no-balcony: nobody is on the %s castle balcony to work the castle catapult
weapon: %r is not one of the %s' weapons (%s)
no-crew: none of the %s' figures stands by the %s to fire it
not-action: %s is not an action; the %s may fire, move or end their turn
castle-crew: only the figure on the castle balcony, %s, works the castle catapult
crew: firing needs one of your warriors or the hero within 5 centimetres as 'crew', got %r
crew-out: %s is out of the game and cannot fire
crew-balcony: %s is up on the castle balcony, not beside the %s
to: a move goes 'to' field or balcony, not %r
move-out: %s is out of the game and cannot move
on-balcony: %s is already on the castle balcony
no-climb: the %s castle gate is down: nobody can climb to the balcony
balcony-taken: %s already mans the castle balcony
no-leave: the %s castle gate is down: nobody can leave the tower
castle-moves: the castle stays put: it only turns to aim, which is free
move-what: %r is not one of the %s' figures or weapons
piece: unknown piece %r in a %s report (tilt pieces are like orcs.warrior1, orcs.hero, orcs.flag1, orcs.brick1, orcs.gate)
reward: first choose the three-flag reward: {'t': 'reward', 'choice': 'revive' or 'extra'}
revive-first: first choose a warrior to bring back to life: {'t': 'revive', 'piece': ...}
revive-who: %r is not one of the %s' warriors (the hero never leaves the field early)
revive-up: %s is still standing; bring back a warrior that is out
place-first: first say where %s stands again: {'t': 'place', 'to': 'balcony' or 'field'}
place-to: a revived figure stands on the 'balcony' or the 'field', not %r
"""


def reason(key, args):
    """The reason `key` in words, formatted with args (a tuple)."""
    start = REASONS.find("\n" + key + ": ")
    if start < 0:
        raise KeyError(key)
    start += len(key) + 3
    return REASONS[start : REASONS.find("\n", start)] % args
