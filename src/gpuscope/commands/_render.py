"""The one road from a result's document to the screen and the files: every command that prints a
result builds its document in the layer that owns the result, then hands it here, and the
renderers of `gpuscope.report` (by name, from its registry) draw it.

    show(document)                                  # the terminal
    write_markdown(args.md, document, inputs)       # + report_figures/*.png beside it
    write_html(args.html, document)

JSON is no view: each command writes its dict (`_output.write_json`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gpuscope.document.model import Document, Figure
from gpuscope.output import Target, check_outputs, is_file, write
from gpuscope.report.registry import render


def show(document: Document, console: Any = None) -> None:
    """Print the document as the terminal renderer draws it, to `console` (a rich Console;
    default: standard output)."""
    import sys

    stream = sys.stdout if console is None else console.file
    options = {} if console is None else {"console": console}
    stream.write(render("terminal", document, **options))
    stream.flush()  # before what the command says next on standard error


def write_html(target: Target, document: Document) -> None:
    _write_text(target, render("html", document))


def write_markdown(
    target: Target, document: Document, inputs: Iterable[Target] = (), depth: int = 1
) -> None:
    """The Markdown file, and where it is a file and matplotlib is installed, each figure as a PNG
    in a folder beside it named after it (`report.md` → `report_figures/03-….png`), linked from
    the text; elsewhere (standard output, a pipe) the text alone. A figure never replaces one of
    `inputs`."""
    figures = write_figures(target, document, list(inputs))
    _write_text(target, render("markdown", document, depth=depth, figures=figures))


def write_figures(target: Target, document: Document, inputs: list[Target]) -> dict[Figure, str]:
    """Each figure of the document as a PNG beside the file `target`: figure → the path the
    Markdown links (relative to it). None where `target` is no file or matplotlib is missing."""
    from gpuscope.report import figures

    if not is_file(target) or not figures.available():
        return {}
    markdown = Path(target)
    folder = markdown.with_name(f"{markdown.stem}_figures")
    drawn = figures.numbered(document)
    paths = {f"--md figure {name}": folder / name for name, _ in drawn}
    check_outputs(paths, [*inputs, target])
    linked: dict[Figure, str] = {}
    for name, figure in drawn:
        write(folder / name, figures.png(figure))
        linked[figure] = f"{folder.name}/{name}"
    return linked


def write_png(target: Target, document: Document) -> None:
    """The document's first figure as a PNG (`history trend --png`); InputError naming matplotlib
    where it is not installed."""
    from gpuscope.errors import InputError
    from gpuscope.report import figures

    drawn = figures.numbered(document)
    if not drawn:
        raise InputError(f"{document.title}: no figure to draw")
    write(target, figures.png(drawn[0][1]))


def _write_text(target: Target, text: str) -> None:
    write(target, text.encode("utf-8", "backslashreplace"))
