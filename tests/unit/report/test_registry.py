"""The renderer registry: gpuscope's own renderers come from the `gpuscope.renderers` entry
points as a third party's would, each satisfies the one-function contract, a name is taken once,
and a new format is one module plus one registration."""

from __future__ import annotations

import types
from collections.abc import Iterator

import pytest

from gpuscope.document.model import Document, Section, Text
from gpuscope.errors import ConfigError
from gpuscope.report import html, markdown, registry, terminal

DOC = Document("title", (Section("a section", (Text("some text"),)),), "subtitle", "footer")


@pytest.fixture
def clean() -> Iterator[None]:
    """The registry as it was: a test's registration does not leak into the next."""
    before = registry.renderers()
    yield
    registry._REGISTERED.clear()
    registry._REGISTERED.update(before)


def test_the_built_ins_are_entry_points_like_a_third_partys() -> None:
    installed = dict(registry.installed())
    assert installed == {"terminal": terminal, "markdown": markdown, "html": html}
    assert registry.renderers().items() >= installed.items()


@pytest.mark.parametrize("name", ["terminal", "markdown", "html"])
def test_every_renderer_draws_any_document_to_text(name: str) -> None:
    text = registry.render(name, DOC)
    assert isinstance(text, str) and "a section" in text and "some text" in text


def test_options_pass_through_and_an_unknown_one_is_a_type_error() -> None:
    assert registry.render("markdown", DOC, depth=3).startswith("### title")
    with pytest.raises(TypeError):
        registry.render("html", DOC, depth=3)


def test_a_new_format_is_one_module_and_one_registration(clean: None) -> None:
    rst = types.ModuleType("rst")
    rst.render = lambda document: f"{document.title}\n{'=' * len(document.title)}\n"  # type: ignore[attr-defined]
    registry.register("rst", rst)
    assert registry.render("rst", DOC) == "title\n=====\n"


def test_a_name_is_registered_once(clean: None) -> None:
    with pytest.raises(ValueError, match="'html' is already registered"):
        registry.register("html", html)


def test_an_unknown_name_says_which_there_are() -> None:
    with pytest.raises(ConfigError, match=r"no renderer named 'pdf'.*html, markdown, terminal"):
        registry.renderer("pdf")
