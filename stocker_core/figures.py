"""Figures as PNG bytes: the one way every ``plots.py`` starts a matplotlib figure (the Agg
backend, no display) and turns it into PNG bytes (laid out, without the software tag, so the
same data gives the same bytes, and closed)."""

from __future__ import annotations

import io
from typing import Any


def subplots(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``matplotlib.pyplot.subplots(*args, **kwargs)`` on the Agg backend: ``(fig, axes)``.
    matplotlib is imported here, on first use (importing a plots module costs nothing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def figure_png(fig: Any, *, dpi: float | None = None, fitted: bool = True, crop: bool = False) -> bytes:
    """``fig`` as PNG bytes, then closed. ``fitted``: lay it out first (``tight_layout``;
    ``False`` for a figure whose layout is already set); ``crop``: to what is drawn (a legend
    placed outside the axes stays in the picture); ``dpi``: the figure's own unless given."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        if fitted:
            fig.tight_layout()
        options: dict[str, Any] = {"dpi": dpi} if dpi is not None else {}
        if crop:
            options["bbox_inches"] = "tight"
        fig.savefig(buffer, format="png", metadata={"Software": None}, **options)
    finally:
        plt.close(fig)
    return buffer.getvalue()
