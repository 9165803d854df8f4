"""Time and peak memory of refusing the hostile files of issue 22 (not a timed test: run it alone).

    python benchmarks/bombs.py

Each file is generated (tests/bombs.py) into a folder of its own, then `ragchat ingest FOLDER` runs
as a new process with Ollama off. Reported: the file's size, the wall time of the ingest, the peak
resident memory of the ingest's process tree (the sum over the ingest and its parsing worker,
sampled every 20 ms from /proc), and what the summary said about the file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from bombs import flate_bomb_pdf, nested_html, paragraphs_docx, text_node_docx  # noqa: E402

RAGCHAT = str(Path(sys.executable).parent / "ragchat")
CASES: list[tuple[str, Callable[[Path], Path]]] = [
    ("paragraphs.docx", lambda path: paragraphs_docx(path, 200)),
    ("text_node.docx", lambda path: text_node_docx(path, 1024)),
    ("flate.pdf", lambda path: flate_bomb_pdf(path, 450)),
    ("nested.html", lambda path: nested_html(path, 40_000)),
    # just under the expansion limit: parsed until the time budget or the worker's memory limit
    ("paragraphs_30.docx", lambda path: paragraphs_docx(path, 30)),
]


def tree_rss(root: int) -> int:
    """Resident bytes of `root` and its descendants."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        rss[int(entry.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(rss.get(pid, 0) for pid in tree)


def measure(name: str, make: Callable[[Path], Path], base: Path) -> dict[str, object]:
    folder = base / name.replace(".", "_")
    folder.mkdir()
    size = make(folder / name).stat().st_size
    env = {**os.environ, "RAGCHAT_OLLAMA": "off"}
    started = time.monotonic()
    process = subprocess.Popen(
        [RAGCHAT, "ingest", str(folder), "--db", str(folder / "lib.db")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss(process.pid))
        time.sleep(0.02)
    seconds = time.monotonic() - started
    stdout, stderr = process.communicate()
    said = next(
        (line.strip() for line in (stdout + stderr).splitlines() if name in line),
        (stdout + stderr).strip(),
    )
    return {
        "file": name,
        "kb": size // 1024,
        "seconds": round(seconds, 2),
        "peak_mb": peak >> 20,
        "result": said,
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as base:
        print(f"{'file':<16} {'size':>8} {'time':>7} {'peak RSS':>9}  result")
        for name, make in CASES:
            row = measure(name, make, Path(base))
            print(
                f"{row['file']:<16} {row['kb']:>6} KB {row['seconds']:>5} s {row['peak_mb']:>6} "
                f"MB  {row['result']}"
            )


if __name__ == "__main__":
    main()
