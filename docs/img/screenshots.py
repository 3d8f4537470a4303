"""Regenerate the dashboard screenshots in this folder (headless Debian Chromium, no network):

    .venv/bin/python docs/img/screenshots.py

The database is the demo's plus eight weeks of simulated harness history (tests/dashboard_data.py).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from test_dashboard import Server, make_history
from test_dashboard_browser import CHROMEDRIVER, CHROMIUM, FLAGS

from harness_memory import Settings
from harness_memory.dashboard import build_app

SHOTS = {"overview": ("/dashboard/", 1250), "techniques": ("/dashboard/techniques", 1150),
         "errors": ("/dashboard/errors", 1000),
         "memories": ("/dashboard/memories?q=install+the+missing+package&agent=build-agent", 900),
         "maintenance": ("/dashboard/maintenance", 1000)}


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "shots.db"
        make_history(db)
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for flag in [f for f in FLAGS if not f.startswith("--window-size")] + [f"--user-data-dir={d}/profile"]:
            opts.add_argument(flag)
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        try:
            with Server(build_app(db, Settings())) as base:
                for name, (path, height) in SHOTS.items():
                    driver.set_window_size(1100, height)
                    driver.get(base + path)
                    out = HERE / f"dashboard-{name}.png"
                    driver.save_screenshot(str(out))
                    print(out, out.stat().st_size)
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
