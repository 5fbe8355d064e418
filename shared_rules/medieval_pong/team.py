"""Medieval Pong, the rarely needed team rules: Build Your Team scenarios, custom picks, the
full-set draft and the `unlocked` option (docs/rules/medieval-pong.md).

medieval_pong imports this module only when the options ask for one of these, so a default
game on a small board never loads it. Runs under CPython and MicroPython; pure, no I/O.
"""

from shared_rules.engine import Illegal, cue, say
from shared_rules.medieval_pong.core import ALTERNATIVE, BASE, NOBLES, SIDES, other, roster, side_name, title

SCENARIOS = {
    "base": NOBLES + BASE,
    "ultimate-defense": NOBLES + ("architect", "guard", "blind-magician", "hunter", "seer", "catapult"),
    "challenges-galore": NOBLES + ("ninja", "blacksmith", "two-sword-knight", "catapult", "gunner", "ghost"),
    "elite-marksmen": NOBLES + ("architect", "gunner", "blind-magician", "ghost", "archer", "catapult"),
    "single-target": ("king", "dragon", "seer", "blind-magician", "ninja", "hunter", "guard",
                      "two-sword-knight", "archer"),
    "vanished-dragon": ("princess", "king", "seer", "architect", "gunner", "blacksmith", "ninja",
                        "two-sword-knight", "archer"),
}

def parse_unlocked(text):
    """The alternative characters the option `unlocked` allows (sorted)."""
    text = (text or "").strip()
    if text == "all":
        return list(ALTERNATIVE)
    if text in ("", "none"):
        return []
    out = []
    for name in text.split(","):
        name = name.strip()
        if name not in ALTERNATIVE:
            raise Illegal("option unlocked: %r is not an alternative character (%s)" % (name, ", ".join(ALTERNATIVE)))
        if name not in out:
            out.append(name)
    return sorted(out)


def team_hand(team, sets, unlocked):
    """The characters each side starts with (before custom picks); refuses locked or crownless teams."""
    if sets == 2 and team != "base":
        raise Illegal("with 2 sets each side takes the fixed 18-character roster; leave team=base")
    if sets == 2:
        hand = roster(2)
    elif team in SCENARIOS:
        hand = sorted(SCENARIOS[team])
    else:
        hand = sorted(NOBLES)
    if team != "custom":
        locked = [c for c in hand if c in ALTERNATIVE and c not in unlocked]
        if team == "full-set":
            locked = [c for c in ALTERNATIVE if c not in unlocked]
        if locked:
            raise Illegal("team %s needs %s, still locked by padlocks" % (team, ", ".join(title(c) for c in locked)))
    if sets == 1 and team in SCENARIOS and not [c for c in hand if c in ("princess", "king")]:
        raise Illegal("team %s has no Princess or King to wear a crown" % team)
    return hand


def draft_pool(unlocked):
    """The full-set draft's face-up pool: every base and unlocked alternative character."""
    return [c for c in sorted(BASE + ALTERNATIVE) if c not in ALTERNATIVE or c in unlocked]


def _team_size(state):
    return len(state["sides"]["red"]["towers"])


def pick_choices(state, s):
    if state["options"]["team"] == "full-set":
        return list(state["pool"])
    hand = state["sides"][s]["hand"]
    return sorted(c for c in BASE + ALTERNATIVE if c not in hand and (c in BASE or c in state["unlocked"]))


def team_awaiting(state):
    if state["options"]["team"] == "full-set":
        return [state["draft"]]
    n = _team_size(state)
    return [s for s in SIDES if len(state["sides"][s]["hand"]) < n]


def legal(state):
    return [{"t": "pick", "by": s, "character": c} for s in team_awaiting(state) for c in pick_choices(state, s)]


def on_pick(state, inp, fx):
    s = inp["by"]
    c = inp["character"]
    if c not in pick_choices(state, s):
        raise Illegal("%s cannot pick %r now (choices: %s)" % (s, c, ", ".join(pick_choices(state, s))))
    side = state["sides"][s]
    side["hand"].append(c)
    side["hand"].sort()
    side["picked"] += 1
    if state["options"]["team"] == "full-set":
        state["pool"].remove(c)
        say(fx, "%s drafts the %s." % (side_name(s), title(c)))
        cue(fx, "draft.pick", side=s, character=c)
        state["draft"] = other(s)
        if len(state["sides"][other(s)]["hand"]) >= _team_size(state):
            state["draft"] = s
    else:
        say(fx, "You picked the %s." % title(c), to=s)
    if not team_awaiting(state) or all(len(state["sides"][x]["hand"]) >= _team_size(state) for x in SIDES):
        state["phase"] = "place"
        say(fx, "Both teams are complete. Place your characters in your towers, in secret.")
        cue(fx, "setup.place")
