"""Each game's scoreboard in a real browser: the facts players track, read from the public view, and
every question in words beside its answer buttons; the host's sensor buttons play the table."""

from support.bridgeproc import Ws

LAUNCH = {"viewport": {"width": 1280, "height": 900}}


def pages(b, browser):
    """(public page, host page) of a bridge, both showing a state."""
    ctx = browser.new_context(**LAUNCH)
    public, host = ctx.new_page(), ctx.new_page()
    public.goto(b.url + "/")
    host.goto(b.url + "/host?code=" + b.host_code)
    for p in (public, host):
        p.wait_for_selector("#turn:not(:empty)")
    return public, host


def group_of(page, question):
    """The decision group whose question contains `question`: its buttons are the answers."""
    g = page.locator("#prompt-list .ask-group", has=page.locator("p.ask", has_text=question))
    g.first.wait_for()
    return g.first


def stat(scope, name):
    """The value beside a scoreboard line's name, within a page or one army's card."""
    return scope.locator('.stat:has(> .stat-name:text-is("%s")) > .stat-value' % name).first


def test_battleground_warrior_knocked_down_shows_fallen(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "battleground")
    host_ws = Ws(b.url, role="host", code=b.host_code)
    public, host = pages(b, browser)
    # the opening set-up question is on the public page before anyone has acted
    public.wait_for_selector("#asked >> text=Orcs, place up to 2 power disks under your warriors or hero, then confirm.")
    for _ in range(20):  # confirm every set-up check for both armies (not what this test is about)
        st = host_ws.state()
        if st["view"]["phase"] == "play":
            break
        confirm = [i for i in st["decisions"] if i["t"] == "confirm"]
        assert host_ws.act(action="input", input=confirm[0])["ok"]
    public.wait_for_selector("text=Orcs, fire, move or end your turn (2 actions left).")

    host.locator("#prompt-list button", has_text="fire catapult").click()
    # the rules ask who fires it: the question in words, the figures as its answers
    crew = group_of(host, "Who stands within 5 centimetres of the Orc catapult to fire it?")
    crew.locator("button", has_text="crew warrior 1").click()
    host.locator("#sensors .sensor-row", has_text="Orcs: knocked down").locator("button.sense", has_text="fell warrior 2").click()
    public.wait_for_selector("text=knocked down: Orc warrior 2")
    assert public.locator('[data-piece="orcs.warrior2"]').get_attribute("data-state") == "hit"
    group_of(host, "say when the shot is over").locator("button", has_text="over").click()

    fallen = public.locator('.army.orcs [data-piece="orcs.warrior2"]')
    fallen.filter(has_text="warrior 2 fallen").wait_for()
    assert fallen.get_attribute("data-state") == "fallen"
    orcs = public.locator(".army.orcs")
    assert stat(orcs, "warriors standing").inner_text() == "5, hero standing"
    assert stat(orcs, "flags").inner_text() == "3 standing"
    assert stat(orcs, "bricks").inner_text() == "4 standing, 0 fallen"
    assert stat(orcs, "gate").inner_text() == "up"
    assert stat(public.locator(".army.knights"), "warriors standing").inner_text() == "6, hero standing"
    assert public.locator("#view").count() == 0 or not public.locator("#view").is_visible()  # no raw dump
    shots(public, "battleground-public-warrior-fallen")
    shots(host, "battleground-host")


def test_madness_roll_moves_pawn_and_shows_dice(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "medieval-madness")
    public, host = pages(b, browser)
    # before any input the rules have asked nothing yet: the question comes from the view
    public.wait_for_selector("#asked >> text=Player 1, roll the dice.")
    group_of(host, "Player 1, roll the dice.").locator("button", has_text="roll").wait_for()
    assert stat(public, "dice").inner_text() == "not rolled yet"

    # the dice the players threw, entered on the host page: 3 and 5 take Player 1 from the entrance to space 7
    host.select_option("#die-1", "3")
    host.select_option("#die-2", "5")
    host.locator("#roll-dice").click()
    public.wait_for_selector('[data-dice="3,5"]')
    assert "3" in stat(public, "dice").inner_text() and "(8)" in stat(public, "dice").inner_text()
    row = public.locator('tr[data-player="p1"]')
    assert "7, Royal Stipend" in row.locator("td.space").inner_text()
    assert row.locator("td.gold").inner_text() != "200"  # the Royal Stipend paid
    public.wait_for_selector("#asked >> text=Player 2, roll the dice.")
    public.wait_for_selector('.track [data-space="7"] .pawn-p1')  # on the board's outer wall too
    assert public.locator('.track [data-space="-1"] .pawn').count() == 3  # the others wait at the entrance
    shots(public, "madness-public-after-roll")

    # a pawn put on the wrong space: that player's own page says where it belongs
    codes = {a.get_attribute("data-side"): a.get_attribute("data-code") for a in host.locator("a.code").all()}
    p1 = host.context.new_page()
    p1.goto("%s/side/p1?code=%s" % (b.url, codes["p1"]))
    host.select_option("#pawn-player", "p1")
    host.select_option("#pawn-space", "3")
    host.locator("#put-pawn").click()
    p1.wait_for_selector("#private-list >> text=your pawn belongs on space 7, Royal Stipend")
    # "pawn on its space" acts as that space's presence sensor: the simulated board reports it
    host.locator("#pawn-row button", has_text="pawn Player 1 on Royal Stipend").click()
    host.wait_for_selector("#counters >> text=/\\binputs 3\\b/")
    assert "events 1 |" in host.locator("#counters").inner_text()  # it came as a sensed event
    shots(host, "madness-host")

    # undo takes the two pawn checks and the roll back: the question is Player 1's again, not the stale one
    for _ in range(3):
        host.locator("#undo").click()
    public.wait_for_selector("#notices >> text=Undid: roll")
    public.wait_for_selector("#asked >> text=Player 1, roll the dice.")
    group_of(host, "Player 1, roll the dice.")
    assert "the castle entrance" in public.locator('tr[data-player="p1"] td.space').inner_text()


def test_plingpong_shootoff_question_and_round(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "plingpong")
    public, host = pages(b, browser)
    assert stat(public, "phase").inner_text() == "Shoot-off for the first turn"
    assert [c.inner_text() for c in public.locator("table.players td.cups").all()] == ["6"] * 4
    for n, cup in enumerate(("green.1", "green.2", "green.3", "green.4")):
        public.wait_for_selector("text=Waiting for Player %d" % (n + 1))
        host.locator("#sensors button.sense", has_text=cup.replace(".", " cup ")).click()
    # the rules' own question, next to the one button that answers it
    score = group_of(host, "every ball of the shoot-off is in; say score to count the cups")
    score.locator("button", has_text="score").click()
    public.wait_for_selector("text=Round 1")
    assert stat(public, "shooting").inner_text() == "Player 1"
    host.locator("#sensors button.sense", has_text="red cup 1").click()
    public.wait_for_selector('[data-cup="red.1"] >> text=1 (1)')
    assert "Player 1: red cup 1" in stat(public, "this round").inner_text()
    shots(public, "plingpong-public-round-1")
