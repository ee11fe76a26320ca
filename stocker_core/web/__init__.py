"""The web page for people: play an episode, read the council's votes beside a day's chart,
compare policies from the stored evaluation, follow training runs, see the corpus.

A FastAPI app (``create_web_app``) or an addition to any FastAPI app (``mount_web``) with
JSON endpoints under ``/web/api`` and pages under ``/web``; it reads the warehouse
read-only and needs no network (scripts and styles ship in ``static/``).

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports nothing heavy.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
