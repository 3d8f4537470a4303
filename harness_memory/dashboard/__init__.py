"""The dashboard (issue 13): what the memory learned and whether it pays off, as web pages.

``harness-memory dashboard`` serves it; ``harness-memory serve`` mounts it at ``/dashboard``.
See docs/dashboard.md.
"""

from .app import create_dashboard, mount
from .server import build_app, dashboard_url

__all__ = ["build_app", "create_dashboard", "dashboard_url", "mount"]
