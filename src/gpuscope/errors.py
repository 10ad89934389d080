"""gpuscope's exceptions. The CLI maps them to `error: …` and an exit code; the library raises."""

from __future__ import annotations


class GpuscopeError(Exception):
    """Base of every error gpuscope raises on purpose.

    `exit_code` is what the CLI exits with: 2 for bad input or usage, 1 for a failed gate.
    The message names the file or value at fault, what was expected and, when known, the fix.
    """

    exit_code = 2

    def __str__(self) -> str:
        # one `error:` line even when the message quotes a file's bytes (a lone \r, a NUL)
        return one_line(super().__str__())


# what str.splitlines() breaks at, and NUL: shown as spaces
_ONE_LINE = dict.fromkeys(map(ord, "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029\x00"), " ")


def one_line(text: str) -> str:
    """`text` with its line breaks (and NUL) as spaces: a message that quotes a file's bytes."""
    return text.translate(_ONE_LINE)


class InputError(GpuscopeError):
    """A file or argument is not what was expected (missing, empty, wrong format)."""


class ReaderError(InputError):
    """A trace or profiler output could not be read."""


class ConfigError(InputError):
    """A tools config, additional context or option value is invalid."""


class OptionError(ConfigError, TypeError):
    """A keyword option a library call does not have (`gpuscope.bench(fn, budget=1)`): a
    TypeError, as Python's own for an unexpected keyword, and a ConfigError for the CLI."""


class ToolError(GpuscopeError):
    """A tool cannot work here (binary missing, wrong vendor) — raised before the command starts."""


class GateFailed(GpuscopeError):
    """A requested gate failed (e.g. `--fail-if-slower`): exit 1."""

    exit_code = 1
