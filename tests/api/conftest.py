"""The browser the page tests drive: Debian's Chromium (playwright cannot download browsers here)."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import expect, sync_playwright

    # An answer on the page waits for the reader's embeddings and the grounding check: a few
    # seconds alone, more on a 2-core machine that runs other work; 5 s (the default) flaked.
    expect.set_options(timeout=30_000)

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (scripts/test.sh does)")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()
