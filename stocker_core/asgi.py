"""``app`` for ASGI servers: ``uvicorn stocker_core.asgi:app`` (settings and
``STOCKER_API_KEY`` from the environment): every extension registered (the composition root),
then the environment server. ``stocker serve`` is the safer entry point: it refuses a
non-loopback bind without an API key."""

from stocker_core.composition import register_all
from stocker_core.env.server import create_app

register_all()
app = create_app()
