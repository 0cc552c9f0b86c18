"""The system's Chromium under selenium, set up so that nothing is downloaded and nothing phones home.

``Service('/usr/bin/chromedriver')`` is given explicitly, so selenium's driver manager never
fetches a driver; the flags switch off Chromium's own background traffic (updates, sync, QUIC
probes), so any request the page makes is the page's. ``python tests/playground/playground_browser.py
docs/img/playground.png`` retakes the screenshot in the docs.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)
DEMO_STATE = {
    "instruction": "You answer questions about {topic}.",
    "input": '{"topic": "cats", "input": "Why do cats purr?"}',
    "history": '[["Do cats sleep a lot?", "Yes, 12 to 16 hours a day."]]',
    "model_format": "qwen2.5",
}


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install selenium; it is a dev dependency)"
    if not any(Path(p).is_file() for p in CHROMIUM) and not shutil.which("chromium"):
        return "no system Chromium (/usr/bin/chromium); scripts/browser.sh installs it"
    if not Path(CHROMEDRIVER).is_file():
        return f"no {CHROMEDRIVER}; scripts/browser.sh installs chromium-driver"
    return None


def start_browser(profile: Path) -> Any:
    """A headless Chromium with a fresh profile and the performance log on (every request it makes)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    binary = next((p for p in CHROMIUM if Path(p).is_file()), None) or shutil.which("chromium")
    options.binary_location = str(binary)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def page_url(base: str, state: dict[str, str]) -> str:
    """The playground link for a state (the query string the page reads on load)."""
    return f"{base}?{urlencode(state)}" if state else base


def open_state(driver: Any, base: str, state: dict[str, str]) -> None:
    """Load the page for ``state`` and wait until its first rendering is on screen."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page_url(base, state))
    WebDriverWait(driver, 15).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))


def text_of(driver: Any, element_id: str) -> str:
    """An element's exact text (``textContent``: selenium's ``.text`` folds whitespace)."""
    return str(driver.execute_script("return document.getElementById(arguments[0]).textContent", element_id))


def requested_urls(driver: Any) -> list[str]:
    """Every URL the browser asked for since the last call (Chrome's performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


# schemes served from inside the browser: the page's own data, and Chromium's built-in pages
# (its start tab loads chrome:// resources); every other URL must name 127.0.0.1
IN_BROWSER = frozenset({"data", "about", "blob", "chrome", "chrome-untrusted", "devtools"})


def external(urls: list[str]) -> list[str]:
    """The URLs that leave 127.0.0.1."""
    return [u for u in urls if urlsplit(u).scheme not in IN_BROWSER and urlsplit(u).hostname != "127.0.0.1"]


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's header."""
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def screenshot(driver: Any, path: Path, width: int, height: int, mobile: bool = False) -> Path:
    """The page at ``width`` x ``height`` CSS pixels (scale 1) saved as a PNG."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(path))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return path


def _main(target: str) -> int:  # pragma: no cover - the docs' screenshot, retaken by hand
    import tempfile

    from modules.playground import create_playground_app
    from modules.server.lifecycle import ServerThread

    reason = missing_browser()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    server = ServerThread(create_playground_app()).start()
    with tempfile.TemporaryDirectory() as profile:
        driver = start_browser(Path(profile))
        try:
            state = {**DEMO_STATE, "compare": "1", "b_model_format": "llama-3.1"}
            open_state(driver, server.url + "/", state)
            screenshot(driver, Path(target), 1280, 900)
        finally:
            driver.quit()
            server.stop()
    print(f"saved {target} {png_size(Path(target))}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_main(sys.argv[1] if len(sys.argv) > 1 else "docs/img/playground.png"))
