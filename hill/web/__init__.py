"""The hill on the web: an aiohttp server with Jinja2 templates (see server.py)."""
