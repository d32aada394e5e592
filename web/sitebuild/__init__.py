"""The course site's builder, by concern (web/build.py is its command line)."""
