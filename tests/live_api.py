"""The loopback Messages API of the live tests: course/api.py (the stage checker's, too).

One server serves the whole test session (the `loopback_api` fixture in conftest.py).
"""

from course.api import SILENCE, MessagesAPI, error, message, raw

__all__ = ["SILENCE", "MessagesAPI", "error", "message", "raw"]
