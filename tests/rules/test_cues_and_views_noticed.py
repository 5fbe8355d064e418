"""Every game: each cue the lights get carries the fields its game's doc lists (none missing, none
empty), and every view the pages get holds the fields its doc lists, through random games of
each option set. Written from the mutation run's survivors (tests/rules/mutation.py): a cue that
lost its tower, or a scoreboard field renamed, changed no other test.

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Match, Rng, load, random_playouts, scale

HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."  # MicroPython gives a bare name from the cwd

# The "Cues" tables of docs/rules/<game>.md: "a b" required fields, "[c]" one that may be absent,
# "d?" one that may be null. A cue not listed here is not documented.
CUES = {
    "medieval-pong": {
        "setup.place": "", "draft.pick": "side character", "setup.ready": "side",
        "turn": "side mode balls bitten", "ball.in": "side tower", "miss": "side",
        "tower.destroyed": "side tower [character]", "crown.exposed": "side tower",
        "crown.captured": "side tower by", "game.won": "side", "dragon.awake": "side tower",
        "dragon.rage": "side", "fire.start": "side kind", "fire.end": "", "ninja.touch": "side",
        "roof.placed": "side tower on", "roof.fell": "side tower on", "roof.slid": "side tower on",
        "guard.stacked": "side tower on", "seer.answered": "side", "trap.set": "side",
        "trap.sprung": "side tower bitten", "hand.healed": "side", "swap": "side",
        "tower.rebuilt": "side tower character", "decide": "side what",
    },
    "medieval-madness": {
        "turn": "player", "dice": "player dice", "move": "player space", "drawbridge": "player wall space",
        "gold.collect": "player amount [source]", "gold.pay": "player amount to", "title": "player title rank",
        "cottage": "player cottages", "pass": "player", "pass.used": "player", "champion.hired": "player",
        "champion": "player", "champion.lost": "player", "joust": "player rivals space",
        "tournament": "player rivals space", "trial": "player rivals space", "contest.win": "kind player loser",
        "contest.tie": "kind", "trial.lost": "player", "dungeon": "player [space]", "dungeon.out": "player [space]",
        "bankrupt": "player", "crown": "player title", "pawn.ok": "player? space [want?]",
        "pawn.misplaced": "player? space [want?]",
    },
    "plingpong": {
        "rack": "cups", "shot": "player side colours ball of", "ball": "cup colour player count",
        "miss": "player", "void": "cup player", "cup.removed": "cup colour height why",
        "cup.add": "cup colour side", "cup.stacked": "cup onto height", "black": "balls result losers",
        "shootoff": "players", "starter": "player", "middle": "player colour", "round": "round starter",
        "out": "side", "back": "side", "win": "side", "draw": "",
    },
    "ringo": {
        "turn": "side", "move": "side from to", "capture": "side from to cell", "castle.entered": "side from count",
        "pass": "side", "game.over": "winner? why", "piece.lifted": "side cell to", "capture.remove": "side cells",
        "move.pending": "side lift place", "move.illegal": "side clear refill", "board.restored": "",
    },
    "battleground": {
        "setup.step": "side check", "power": "side piece disks", "turn": "side actions", "actions": "side left",
        "shot.open": "side weapon crew disks", "shot.over": "side weapon falls", "figure.out": "side piece",
        "figure.revived": "side piece why", "hero.early": "side", "flag.down": "side piece",
        "flags.captured": "side by", "flags.restand": "side", "brick.removed": "side piece", "gate.down": "side",
        "stand": "side piece", "stood": "side piece", "extra.turn": "side", "turn.missed": "side",
        "ram.return": "side piece", "win": "side",
    },
}

# The views' fields (docs/rules/<game>.md, "View"/"Views"): path -> spec; "[x]" only at some
# moments; "*" is each entry of a list or of a dict of sides or players; a part that is null is skipped;
# {kind: spec} for a part whose fields depend on its "k".
VIEWS = {
    "medieval-pong": {
        "": "awaiting crowns_to_win game log over phase pool sides [step] winner",
        "sides.*": "towers discarded bitten trap_hidden ready crowns_captured [picked]",
        "sides.*.towers.*": "status [on] [was] [character] [crown]",
        "step": {  # by the kind of step (k)
            "throw": "k side mode balls entered", "fire": "k origin kind", "choose": "k by mode", "swap": "k by",
            "ask": "k by", "rebuild": "k by", "trap": "k by", "roof": "k by tower", "stack": "k by tower",
            "destroy": "k by why",
        },
    },
    "medieval-madness": {
        "": "awaiting bank_paid board contest cottages_left dice game log over players question treasury turn "
            "turns winner",
        "players.*": "id name gold title rank space space_name wall dungeon cottages champion pass lose_turns",
        "question": "who what text",
        "contest": "kind by rivals round wins",
    },
    "plingpong": {
        "": "awaiting black game log order over phase round seats shooter shootoff shot shots sides starter trays "
            "winner",
        "sides.*": "colours cups players",
        "trays.*.*": "cup colour height balls",
    },
    "ringo": {
        "": "attackers awaiting castle cells defenders game hand last log neutral over picture quiet turn turns "
            "winner",
        "neutral": "attackers limit",
    },
    "battleground": {
        "": "actions_left aiming armies awaiting down fired_this_turn game log over pending phase [setup] shot "
            "stand_up turn turn_number winner",
        "armies.*": "figures warriors_left flags_up bricks_up gate balcony weapons ram_uses power_disks_to_place "
                    "actions_lost_next_turn turns_to_miss extra_turns",
        "setup": "side check",
        "shot": "weapon crew falls",
    },
}

OPTION_SETS = {
    "medieval-pong": [None, {"team": "full-set"}, {"sets": 2}, {"tactical": True, "extra_throw": "both"},
                      {"team": "challenges-galore"}, {"team": "ultimate-defense"}],
    "medieval-madness": [None, {"players": 2}, {"players": 3, "girls": "2"}],
    "plingpong": [None, {"players": 2}, {"players": 3}, {"players": 8}, {"variant": "speed"},
                  {"variant": "high-stack", "rerack": True}],
    "ringo": [None, {"defenders_may_pass": True}, {"attackers": 5, "quiet_draw": 30}],
    "battleground": [None, {"armory": "on", "warriors": 2}],
}


def fields(spec):
    """(required, optional, nullable) field names of a spec like "side tower [character] want?"."""
    need, may, null = [], [], []
    for word in spec.split():
        optional = word.startswith("[")
        word = word.strip("[]")
        if word.endswith("?"):
            word = word[:-1]
            null.append(word)
        (may if optional else need).append(word)
    return need, may, null


def check_cue(game, e):
    spec = CUES[game].get(e["cue"])
    assert spec is not None, "%s: cue %r is not documented: %r" % (game, e["cue"], e)
    need, may, null = fields(spec)
    got = [k for k in e if k not in ("t", "cue")]
    for k in need:
        assert k in got, "%s: cue %s lacks %s: %r" % (game, e["cue"], k, e)
    for k in got:
        assert k in need or k in may, "%s: cue %s has an undocumented field %s: %r" % (game, e["cue"], k, e)
        assert e[k] is not None or k in null, "%s: cue %s has %s empty: %r" % (game, e["cue"], k, e)


def check_keys(where, d, spec):
    need, may, _ = fields(spec)
    for k in need:
        assert k in d, "%s lacks %s: %r" % (where, k, sorted(d))
    for k in d:
        assert k in need or k in may, "%s has an undocumented field %s" % (where, k)


def at_path(v, parts):
    """The dicts found at a path like ["sides", "*", "towers", "*"] (none where it is null)."""
    if v is None:
        return []
    if not parts:
        return [v]
    head, rest = parts[0], parts[1:]
    if head != "*":
        return at_path(v.get(head), rest)
    out = []
    for x in (v[k] for k in sorted(v)) if isinstance(v, dict) else v:
        out.extend(at_path(x, rest))
    return out


def check_view(game, v):
    for path in sorted(VIEWS[game]):
        for d in at_path(v, path.split(".") if path else []):
            spec = VIEWS[game][path]
            if isinstance(spec, dict):
                spec = spec[d["k"]]
            check_keys("%s view %s" % (game, path or "top"), d, spec)


def play_and_check(game):
    seen = {}

    def each(m, inp, fx):
        for e in fx:
            if e["t"] == "cue":
                check_cue(game, e)
                seen[e["cue"]] = True
        check_view(game, m.view(None))

    g = load(game)
    for options in OPTION_SETS[game]:
        random_playouts(g, options, games=scale(6, 2), seed=11, each=each)
    return seen


def sensor_walk(game, options, seed, steps, sensed):
    """A random game where, besides the inputs legal() lists, sensed(m, rng) now and then reports what a
    sensor saw that legal() does not offer (a piece lifted, a pawn on some space); every cue and view checked."""
    m = Match(load(game), options, seed)
    rng = Rng(seed)
    seen = {}
    for _ in range(steps):
        if m.over:
            break
        inp = sensed(m, rng) if rng.below(3) == 0 else None
        if inp is None:
            inp = rng.choice(m.legal())
        for e in m.apply(inp):
            if e["t"] == "cue":
                check_cue(game, e)
                seen[e["cue"]] = True
        check_view(game, m.view(None))
    return seen


def ringo_sensor(m, rng):
    """Lift a piece of the side to play, or put one on an empty cell, while the table matches the game."""
    if m.state["hand"] is not None:
        return None
    cells = m.view()["cells"]
    if rng.below(4) == 0:
        empty = [c for c in sorted(load("ringo").INDEX) if c != "castle" and c not in cells]
        return {"t": "cell", "cell": rng.choice(empty), "occupied": True}
    mine = [c for c in sorted(cells) if cells[c] == m.state["turn"]]
    return {"t": "cell", "cell": rng.choice(mine), "occupied": False}


def madness_pawn(m, rng):
    """A pawn sensed on some space: by a sensor that tells pawns apart, or one that cannot."""
    player = rng.choice([None, "p1", "p2", "p3"])
    return {"t": "pawn", "player": player, "space": rng.below(44)}


def documented(game):
    """The cue names the game's doc lists in its Cues table."""
    with open(HERE + "/../../docs/rules/%s.md" % game) as f:
        doc = f.read()
    out = []
    for name in sorted(CUES[game]):
        if "`%s`" % name in doc:
            out.append(name)
    return out


def test_medieval_pong_cues_and_views_carry_their_documented_fields():
    seen = play_and_check("medieval-pong")
    assert len(seen) >= 15, sorted(seen)
    assert documented("medieval-pong") == sorted(CUES["medieval-pong"])


def test_medieval_madness_cues_and_views_carry_their_documented_fields():
    seen = play_and_check("medieval-madness")
    seen.update(sensor_walk("medieval-madness", {"players": 3}, 1, 300, madness_pawn))
    assert len(seen) >= 20 and "pawn.ok" in seen and "pawn.misplaced" in seen, sorted(seen)
    assert documented("medieval-madness") == sorted(CUES["medieval-madness"])


def test_plingpong_cues_and_views_carry_their_documented_fields():
    seen = play_and_check("plingpong")
    assert len(seen) >= 12, sorted(seen)
    assert documented("plingpong") == sorted(CUES["plingpong"])


def test_ringo_cues_and_views_carry_their_documented_fields():
    seen = play_and_check("ringo")
    for seed in range(scale(4, 1)):
        seen.update(sensor_walk("ringo", None, seed, 300, ringo_sensor))
    assert len(seen) >= 10, sorted(seen)
    assert documented("ringo") == sorted(CUES["ringo"])


def test_battleground_cues_and_views_carry_their_documented_fields():
    seen = play_and_check("battleground")
    assert len(seen) >= 10, sorted(seen)
    assert documented("battleground") == sorted(CUES["battleground"])
