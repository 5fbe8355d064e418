"""The host's new-game form in a real browser: one control per option of the game with its help beside
it, starting from the current game's values (the table map's own options as defaults); a new game starts
with what is chosen, and a value the rules or the table refuse is said clearly with the game left as it was."""

from playwright.sync_api import expect  # the page's CSP forbids Playwright's eval'd predicates
from support.bridgeproc import Ws

from web.test_scoreboards import LAUNCH, stat


def set_up_pong(b, codes):
    """Both sides place their characters and say ready, through their private websockets (not what this
    test is about: the side pages' own set-up is tested in test_pages)."""
    for side in sorted(codes):
        for _ in range(30):
            ws = Ws(b.url, role="side", side=side, code=codes[side])  # a new socket starts with the state
            mine = ws.state()["decisions"]
            step = [i for i in mine if i["t"] == "ready"] or [i for i in mine if i["t"] == "place"]
            assert ws.act(action="input", input=step[0])["ok"]
            ws.close()
            if step[0]["t"] == "ready":
                break


def state_of(b, pred=lambda s: True, **query):
    """A page's state once `pred` holds, on a socket of its own (one left open unread fills up);
    the host's unless `query` names another role."""
    ws = Ws(b.url, **(query or {"role": "host", "code": b.host_code}))
    try:
        return ws.state(pred)
    finally:
        ws.close()


def open_form(host):
    host.wait_for_selector("#opt-first", state="attached")  # built with the first state, folded away
    host.locator("#new-options > summary").click()
    host.locator("#opt-first").wait_for(state="visible")


def chosen(host, key):
    """The text of the choice a select shows (yes/no for booleans), or a text field's value."""
    return host.eval_on_selector("#opt-" + key, "c => c.tagName === 'SELECT' ? c.selectedOptions[0].textContent : c.value")


def test_new_pong_game_with_a_scenario_and_blue_first(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    ctx = browser.new_context(**LAUNCH)
    public, host = ctx.new_page(), ctx.new_page()
    public.goto(b.url + "/")
    host.goto(b.url + "/host?code=" + b.host_code)
    open_form(host)

    # one control per option, the current game's value chosen, its help readable without hovering
    assert [lab.inner_text() for lab in host.locator("#option-form label").all()] == [
        "team", "sets", "tactical", "extra throw", "first", "unlocked"]
    assert chosen(host, "first") == "red" and chosen(host, "sets") == "1" and chosen(host, "tactical") == "no"
    assert host.locator("#opt-tactical option").all_inner_texts() == ["no", "yes"]
    assert host.locator("#opt-unlocked").get_attribute("type") == "text"
    help_first = host.locator("#opt-first-help")
    assert help_first.is_visible() and help_first.inner_text() == "the side that throws first"
    assert "swap two of its towers" in host.locator("#opt-tactical-help").inner_text()
    assert "(this game: the table's defaults)" in host.locator("#options-now").inner_text()

    host.select_option("#opt-team", label="ultimate-defense")
    host.fill("#opt-unlocked", "all")  # the scenario's alternative characters: padlocked before the first game
    host.select_option("#opt-first", label="blue")
    host.select_option("#opt-tactical", label="yes")
    before = state_of(b)["codes"]
    shots(host, "options-form-chosen")
    host.locator("#new").click()
    host.locator("#new-yes").click()  # the page asks first
    host.wait_for_selector("#new-result >> text=New game started.")
    public.wait_for_selector("#notices >> text=New game of Medieval Pong.")

    # the new game has what was chosen: new private codes, the scenario's characters, blue throws first
    st = state_of(b, lambda s: s["codes"] != before)
    assert st["options"]["team"] == "ultimate-defense" and st["options"]["first"] == "blue"
    blue = state_of(b, role="side", side="blue", code=st["codes"]["blue"])
    assert "hunter" in blue["view"]["sides"]["blue"]["to_place"]  # not a base character: the scenario's
    set_up_pong(b, st["codes"])
    public.wait_for_selector("#asked >> text=Blue, your turn: throw at the other kingdom.")
    assert stat(public, "throwing").inner_text() == "Blue"
    # the form now starts from the new game's values, and says which differ from the table's
    expect(host.locator("#options-now")).to_contain_text("first blue")
    assert chosen(host, "team") == "ultimate-defense" and chosen(host, "first") == "blue"
    assert chosen(host, "tactical") == "yes"
    assert "(default: red)" in host.locator("#opt-first-help").inner_text()
    shots(host, "options-form-after-new-game")

    # two sets with this scenario: the rules' own refusal, said beside the form and in the toast
    codes = st["codes"]
    host.select_option("#opt-sets", label="2")
    host.locator("#new").click()
    host.locator("#new-yes").click()  # the page asks first
    refused = host.locator("#new-result.refused")
    refused.filter(has_text="with 2 sets each side takes the fixed 18-character roster").wait_for()
    assert "The current game is unchanged." in refused.inner_text()
    assert "18-character roster" in host.locator("#toast").inner_text()
    # two sets of towers on this one-set table: refused, naming the map and what it is built for
    host.select_option("#opt-team", label="base")
    host.locator("#new").click()
    host.locator("#new-yes").click()  # the page asks first
    refused.filter(has_text="no sensor for").wait_for()
    text = refused.inner_text()
    assert "sets=2 needs 18 object(s) table medieval-pong has no sensor for" in text
    assert "medieval-pong.toml is built for Medieval Pong, one set" in text
    assert "The current game is unchanged." in text
    shots(host, "options-form-refused")
    # a name the rules do not know, typed where there is no list: the rules' own words
    host.select_option("#opt-sets", label="1")
    host.fill("#opt-unlocked", "wizard")
    host.locator("#opt-unlocked").press("Enter")
    host.locator("#new-yes").click()  # Enter in the form asks first too
    host.wait_for_selector("#new-result >> text='wizard' is not an alternative character")

    # the game in progress is the same game, blue still to throw, nothing abandoned
    st = state_of(b)
    assert st["codes"] == codes and st["view"]["step"]["side"] == "blue" and st["options"]["sets"] == 1
    assert stat(public, "throwing").inner_text() == "Blue" and stat(public, "crowns to win").inner_text() == "1"
    assert public.locator("#notices li", has_text="New game of").count() == 1
    assert chosen(host, "unlocked") == "wizard"  # the host's choice stays to be corrected
    ctx.close()


def test_two_set_table_form_starts_from_the_table_map(bridge_process, browser):
    b = bridge_process("--simulate", "--table", "hardware/tables/medieval-pong-2sets.toml")
    host = browser.new_page(**LAUNCH)
    host.goto(b.url + "/host?code=" + b.host_code)
    open_form(host)
    assert chosen(host, "sets") == "2"  # the table map's own option, not the rules' default of 1
    assert "18 towers" in host.locator("#opt-sets-help").inner_text()
    # one set on a two-set table: its sensors cover the 9 towers, so the game starts
    host.select_option("#opt-sets", label="1")
    host.locator("#new").click()
    host.locator("#new-yes").click()  # the page asks first
    host.wait_for_selector("#new-result >> text=New game started.")
    expect(host.locator("#options-now")).to_contain_text("sets 1")
    assert chosen(host, "sets") == "1" and "(default: 2)" in host.locator("#opt-sets-help").inner_text()
    assert state_of(b, role="public")["view"]["crowns_to_win"] == 1
    # options that are not name -> value, from a script of its own: said, and the game stays
    ws = Ws(b.url, role="host", code=b.host_code)
    reply = ws.act(action="new", options=["sets", 2])
    ws.close()
    assert not reply["ok"] and "options are an object of option names and values" in reply["message"]
    assert state_of(b)["options"]["sets"] == 1


def test_after_a_pong_game_the_form_offers_what_the_padlocks_unlocked(tmp_path):
    """The first game plays the base characters; after it the players are asked which padlock to tick
    (nothing is ticked for them), and the form then preselects what the padlocks unlock."""
    import random

    from battlement.table import maps as tables
    from battlement.table.journal import Journal
    from battlement.table.session import Session

    s = Session(tables.for_game("medieval-pong"), Journal(str(tmp_path / "journal.sqlite")))
    specs = {o["key"]: o for o in s.for_host()["option_specs"]}
    assert specs["unlocked"]["value"] == "none" and specs["unlocked"]["choices"] is None
    assert s.match.options["unlocked"] == "none"  # padlocked tokens stay on the sheet before the first game
    assert specs["sets"]["choices"] == [1, 2] and specs["sets"]["default"] == 1
    pick = random.Random(7)
    for _ in range(3000):
        if s.match.over:
            break
        assert s.apply(pick.choice(s.match.legal()))["ok"]
    assert s.match.over
    host = s.for_host()
    asked = [p["ask"] for p in host["prompts"]]
    assert any("padlock" in a for a in asked) and any("padlock" in p["ask"] for p in s.public()["prompts"])
    ticks = [d for d in host["decisions"] if d["t"] == "padlock"]
    assert {d["character"] for d in ticks} == {"archer", "catapult", "guard", "hunter", "ninja", "two-sword-knight"}
    assert "padlocks" not in s.journal.get_progress(s.table)  # nothing ticked for the players
    assert {o["key"]: o for o in host["option_specs"]}["unlocked"]["value"] == "none"
    assert s.apply({"t": "padlock", "character": "ninja"}, "host page")["ok"]
    assert "The Ninja is unlocked for the next game." in [n["text"] for n in s.notices]
    assert not [d for d in s.for_host()["decisions"] if d["t"] == "padlock"]  # one tick per game
    specs = {o["key"]: o for o in s.for_host()["option_specs"]}
    assert specs["unlocked"]["value"] == "ninja"
    s.new_game(None, {k: o["value"] for k, o in specs.items()})  # "New game" as the form sends it
    assert s.match.options["unlocked"] == "ninja" and not s.match.over


def test_a_table_may_unlock_every_character_as_a_house_rule(tmp_path):
    from battlement.table import maps as tables
    from battlement.table.journal import Journal
    from battlement.table.session import Session

    tm = tables.for_game("medieval-pong")
    tm.options = dict(tm.options, unlocked="all")  # [options] unlocked = "all" in the table map
    s = Session(tm, Journal(str(tmp_path / "journal.sqlite")))
    assert s.match.options["unlocked"] == "all"