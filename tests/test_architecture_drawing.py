"""The drawing of the house in docs/architecture.md is current: what its generator,
``docs/tools/architecture_drawing.py``, draws from the imports today. After a change of the
imports, rewrite it with ``python docs/tools/architecture_drawing.py``."""

from __future__ import annotations

from test_import_layers import drawing_tool


def test_the_drawing_is_current():
    text = drawing_tool.PAGE.read_text(encoding="utf-8")
    assert text == drawing_tool.page_with(drawing_tool.drawing()), (
        "rewrite it: python docs/tools/architecture_drawing.py"
    )


def test_every_arrow_points_down():
    rooms, edges = drawing_tool.arrows()
    level = {room: n for n, floor in enumerate(drawing_tool.floors()) for room in floor}
    assert [(a, b) for a, b in edges if level[a] > level[b]] == []
    assert len(rooms) == len(set(rooms))
