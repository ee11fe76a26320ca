"""The files source parses a folder once while its bar files keep their bytes: a rewritten file
(even of the same size and modification time) is parsed again, and each source's frames are its own."""

import os
from datetime import date

from stocker_core.market import files_source
from stocker_core.market.files_source import FilesSource

BARS = "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10.5,11.5,10,11,120\n"
JAN = (date(2024, 1, 1), date(2024, 2, 1))


def _counting_reads(monkeypatch) -> list[str]:
    reads: list[str] = []
    read = files_source.read_bar_folder

    def counted(folder):
        reads.append(str(folder))
        return read(folder)

    monkeypatch.setattr(files_source, "read_bar_folder", counted)
    return reads


def test_an_unchanged_folder_is_parsed_once(tmp_path, monkeypatch):
    (tmp_path / "GOOD.csv").write_text(BARS)
    reads = _counting_reads(monkeypatch)
    first, second = FilesSource(tmp_path), FilesSource(tmp_path)
    assert len(reads) == 1
    assert first.fetch("GOOD", *JAN).equals(second.fetch("GOOD", *JAN))
    (tmp_path / "notes.txt").write_text("not a bar file")  # only bar files count
    FilesSource(tmp_path)
    assert len(reads) == 1


def test_a_rewritten_file_is_parsed_again_even_with_the_same_size_and_time(tmp_path, monkeypatch):
    path = tmp_path / "GOOD.csv"
    path.write_text(BARS)
    stamp = path.stat()
    assert FilesSource(tmp_path).fetch("GOOD", *JAN)["close"].tolist() == [10.5, 11.0]
    path.write_text(BARS.replace("10.5,100", "10.7,100"))
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert path.stat().st_size == stamp.st_size
    reads = _counting_reads(monkeypatch)
    assert FilesSource(tmp_path).fetch("GOOD", *JAN)["close"].tolist() == [10.7, 11.0]
    (tmp_path / "MORE.csv").write_text(BARS)  # a new file: parsed again, and served
    assert FilesSource(tmp_path).symbols() == ["GOOD", "MORE"]
    assert len(reads) == 2


def test_a_change_to_one_sources_frames_or_issues_never_reaches_another(tmp_path):
    (tmp_path / "GOOD.csv").write_text(BARS.replace("10.5,100", "10.5,n/a"))
    first = FilesSource(tmp_path)
    issues = first.bar_issues("GOOD")
    assert [i.column for i in issues] == ["volume"]
    first._frame("GOOD").loc[0, "close"] = -1.0
    first._issues["GOOD"].append(issues[0])
    first._problems["GOOD.csv"] = "planted"
    second = FilesSource(tmp_path)
    assert second.fetch("GOOD", *JAN)["close"].tolist() == [10.5, 11.0]
    assert second.bar_issues("GOOD") == issues and second.file_problems() == {}
