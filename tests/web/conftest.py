"""Browser fixtures: Debian's headless Chromium driven by Playwright; the bridge as a real process."""

import pathlib

import pytest

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "web"


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()


@pytest.fixture
def shots():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def shot(page, name):
        page.screenshot(path=str(ARTIFACTS / (name + ".png")), full_page=True)

    return shot
