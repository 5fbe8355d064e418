"""The venue's pages in Chromium, from a real `battlement venue`: the TV draws a double elimination as its
winners' and losers' brackets and a grand final, a round robin as its rounds beside the standings; a
team's phone page says where its next match stands; the host page needs its code."""

import urllib.error
import urllib.request

import pytest
from support.hubproc import HubProcess

TEAMS = ["Knights", "Orcs", "Elves", "Dwarves"]


def test_the_tv_draws_each_format_and_a_team_page_says_what_is_next(mosquitto, tmp_path, browser):
    hub = HubProcess(tmp_path, mosquitto.url, "bar-pages", tmp_path / "keys").start()
    try:
        reply = hub.act(action="tournament", form={"title": "Double", "game": "ringo", "format": "double_elimination",
                                                   "teams": TEAMS, "seed": 2})
        assert reply == {"ok": True, "message": "tournament double set up: 2 matches ready"}
        reply = hub.act(action="tournament", form={"title": "League", "game": "ringo", "format": "round_robin",
                                                   "teams": TEAMS[:3], "rounds": 2})
        assert reply["ok"], reply
        bad = hub.act(action="tournament", form={"title": "Odd", "game": "ringo", "format": "swiss", "teams": TEAMS})
        assert bad == {"ok": False, "message": "format is one of round_robin, single_elimination, "
                                               "double_elimination, not 'swiss'"}

        tv = browser.new_page(viewport={"width": 1920, "height": 1080})
        tv.goto(hub.url + "/?t=double")
        tv.wait_for_selector("#status:has-text('live')")
        assert tv.locator(".bracket-name").all_inner_texts() == ["Winners' bracket", "Losers' bracket", "Grand final"]
        grand = tv.locator(".bracket[data-bracket='grand_final'] .round-title").all_inner_texts()
        assert grand == ["Grand final", "Reset"]
        assert tv.locator(".bracket[data-bracket='losers'] .round-title").all_inner_texts() == [
            "Losers' round 1", "Losers' final"]
        # no table has spoken: the first round waits in the queue, and says so on its boxes
        assert tv.locator(".match[data-match='W1-1']").inner_text().endswith("W1-1 \u00b7 waiting for a table")
        assert tv.locator("#queue li").all_inner_texts()[:2] == [
            "Knights against Dwarves \u2014 next free table", "Orcs against Elves \u2014 next free table"]
        assert "no table has spoken yet" in tv.inner_text("#tables")
        # the other tournament, from the page's own list of them
        tv.click("nav a:has-text('League')")
        tv.wait_for_selector("#bracket-title:has-text('League')")
        assert tv.locator(".round-title").all_inner_texts() == ["Round %d" % r for r in range(1, 7)]
        assert tv.locator("#standings tr[data-team]").count() == 3

        phone = browser.new_page(viewport={"width": 390, "height": 700})
        phone.goto(hub.url + "/team?t=double&name=Elves")
        phone.wait_for_selector("#team-next:has-text('Next, against Orcs: waiting for a free table')")
        assert phone.inner_text("#team-record") == "Place 1: 0 wins, 0 losses"
        phone.goto(hub.url + "/team?t=double&name=Goblins")
        phone.wait_for_selector("#team-name:has-text(\"no team 'Goblins' in tournament double\")")

        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(hub.url + "/host?code=wrong")
        assert refused.value.code == 403
    finally:
        hub.stop()
