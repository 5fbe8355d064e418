"""The pages' fixtures: screenshots for test-artifacts/ and for docs/images/ (the browser itself is
tests/conftest.py's, shared with the wiring drawings' test)."""

import base64
import pathlib

import pytest

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "web"


@pytest.fixture
def shots():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def shot(page, name):
        page.screenshot(path=str(ARTIFACTS / (name + ".png")), full_page=True)

    return shot


DOCS_IMAGES = pathlib.Path(__file__).resolve().parents[2] / "docs" / "images"
SHRINK = '<body style="margin:0"><img id="shot" style="display:block;width:%dpx" src="data:image/png;base64,%s"></body>'


@pytest.fixture
def docs_shot():
    """The pictures of docs/ (docs/images/<name>.png), made anew by the test that shows the page, so the
    docs show the pages as they are now; a picture that changed fails nothing. width: the picture
    scaled down to it (a TV's 1920 px read at half size in a doc); clip: the part of the whole page
    (else the screen)."""

    def shot(page, name, width=None, clip=None):
        png = page.screenshot(clip=clip, full_page=clip is not None, animations="disabled")
        if width:  # Chromium scales the picture: no image library needed
            view = page.context.browser.new_page(viewport={"width": width, "height": 100})
            view.set_content(SHRINK % (width, base64.b64encode(png).decode()))
            png = view.locator("#shot").screenshot()
            view.close()
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        (DOCS_IMAGES / (name + ".png")).write_bytes(png)

    return shot
