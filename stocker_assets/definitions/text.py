"""The text domain: news, forum posts and macro events over the whole corpus (group ``text``);
the council's job runs them with the votes that read them (``council.council_job``)."""

import dagster as dg
import pandas as pd

from stocker_assets.definitions.factories import warehouse_asset
from stocker_assets.definitions.resources import StockerResource
from stocker_core.market.clock import text_before
from stocker_core.text_events.configured import configured_events
from stocker_core.text_events.events import EventKind, fetch_yfinance_news
from stocker_core.text_events.store import replace_events
from stocker_core.warehouse.db import frame_version

TEXT = "text"


def _text_asset(kind: EventKind, name: str, what: str) -> dg.AssetsDefinition:
    @warehouse_asset(
        TEXT,
        f"{what} from the text drop folder (STOCKER_TEXT_DIR, else STOCKER_FILES_DIR), "
        "validated, or the synthetic market's (STOCKER_SOURCE=synthetic); a folder without "
        "rows leaves the stored table untouched.",
        name=name,
        kinds={"duckdb"},
    )
    def _asset(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
        settings, warehouse = stocker.settings(), stocker.warehouse()
        folder = settings.text_folder
        frame = configured_events(settings, kind)
        if kind == "news" and settings.news_online:
            tickers = context.instance.get_dynamic_partitions("ticker")
            online = [text_before(fetch_yfinance_news(t), settings.clock) for t in tickers]  # STOCKER_CLOCK
            frame = pd.concat([f for f in [frame, *online] if f is not None and len(f)], ignore_index=True)
        if frame is None or frame.empty:
            where = f"in {folder}" if folder is not None else "(no STOCKER_TEXT_DIR / STOCKER_FILES_DIR set)"
            context.log.info(f"no {kind} rows {where}; the stored table is left as it is")
            return dg.MaterializeResult(metadata={"rows_written": 0, "folder": str(folder)})
        written = replace_events(warehouse, kind, frame)
        preview = frame.tail(10).assign(date=frame["date"].dt.date.astype(str))
        return dg.MaterializeResult(
            metadata={
                "rows_written": written,
                "folder": str(folder),
                "first_date": str(frame["date"].min().date()),
                "last_date": str(frame["date"].max().date()),
                "latest": dg.MetadataValue.md(preview.to_markdown(index=False)),
            },
            data_version=dg.DataVersion(frame_version(frame)),
        )

    return _asset


news = _text_asset("news", "news", "Headlines per ticker (table text.news)")
forum_posts = _text_asset("forums", "forum_posts", "Forum posts per ticker (table text.forum_posts)")
macro_events = _text_asset("macro", "macro_events", "Dated macro events (table text.macro_events)")


def definitions() -> dg.Definitions:
    """What the text domain adds to the code location."""
    return dg.Definitions(assets=[forum_posts, macro_events, news])
