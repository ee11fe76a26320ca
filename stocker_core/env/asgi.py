"""``app`` for ASGI servers: ``uvicorn stocker_core.env.asgi:app`` (settings and
``STOCKER_API_KEY`` from the environment). ``stocker serve`` is the safer entry point:
it refuses a non-loopback bind without an API key."""

from stocker_core.env.server import create_app

app = create_app()
