"""A small, safe arithmetic language for derived metrics: no `eval`, no attribute access.

A formula is `+ - * /`, unary minus, parentheses, numbers, `min(a, b, ...)` / `max(...)`,
`zero_when_idle(x)` (0 where x is 0, else not computable: "no matrix instruction ran, so no
matrix FLOPs" without guessing otherwise) and names. A name is a counter (`SQ_WAVES`,
`dram__bytes.sum`), another metric or a constant such as `duration` (seconds); a name with
spaces or brackets is written between backticks: `` `Compute (SM) Throughput` ``. Values are
numpy arrays (one entry per dispatch) or floats; `x / 0` is NaN, never infinity, so a dispatch
without a denominator drops out instead of poisoning a sum.

>>> f = parse("64 * (SQ_INSTS_VALU_ADD_F32 + 2 * SQ_INSTS_VALU_FMA_F32) / duration")
>>> sorted(f.names)
['SQ_INSTS_VALU_ADD_F32', 'SQ_INSTS_VALU_FMA_F32', 'duration']
>>> float(f.evaluate({"SQ_INSTS_VALU_ADD_F32": 1.0, "SQ_INSTS_VALU_FMA_F32": 2.0, "duration": 2.0}))
160.0
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

Value = Any  # a float or a float64 numpy array
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|`(?P<quoted>[^`]+)`|(?P<op>[-+*/(),]))"
)
_FUNCTIONS = {"min": np.fmin, "max": np.fmax}
_UNARY = {"zero_when_idle": lambda x: np.where(np.asarray(x) == 0, 0.0, np.nan)}


class FormulaError(ValueError):
    """A formula that does not parse; the message says where."""


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Unary:
    operand: Node


@dataclass(frozen=True)
class Binary:
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple[Node, ...]


Node = Num | Name | Unary | Binary | Call


@dataclass(frozen=True)
class Formula:
    """A parsed formula: its text, its tree and every name it reads."""

    text: str
    tree: Node
    names: frozenset[str]

    def evaluate(self, values: Mapping[str, Value]) -> Value:
        """The formula over `values` (every name must be there: check `names` first)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _evaluate(self.tree, values)


def parse(text: str) -> Formula:
    """Parse `text`; raises FormulaError naming the position of the first problem."""
    tokens = _tokens(text)
    parser = _Parser(text, tokens)
    tree = parser.expression()
    if parser.at < len(tokens):
        raise FormulaError(f"formula {text!r}: unexpected {tokens[parser.at][1]!r}")
    return Formula(text, tree, frozenset(_names(tree)))


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        found = _TOKEN.match(text, at)
        if found is None or found.lastgroup is None:
            raise FormulaError(f"formula {text!r}: cannot read {text[at:].strip()[:20]!r}")
        kind = "name" if found.lastgroup == "quoted" else found.lastgroup
        tokens.append((kind, found.group(found.lastgroup)))
        at = found.end()
    return tokens


class _Parser:
    """Recursive descent: expression := term (('+'|'-') term)*; term := unary (('*'|'/')
    unary)*; unary := '-' unary | atom; atom := number | name | name '(' args ')' | '(' e ')'."""

    def __init__(self, text: str, tokens: list[tuple[str, str]]) -> None:
        self.text, self.tokens, self.at = text, tokens, 0

    def expression(self) -> Node:
        node = self.term()
        while self._peek() in ("+", "-"):
            op = self._take()
            node = Binary(op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.unary()
        while self._peek() in ("*", "/"):
            op = self._take()
            node = Binary(op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self._peek() == "-":
            self._take()
            return Unary(self.unary())
        return self.atom()

    def atom(self) -> Node:
        if self.at >= len(self.tokens):
            raise FormulaError(f"formula {self.text!r}: ends too early")
        kind, value = self.tokens[self.at]
        self.at += 1
        if kind == "num":
            return Num(float(value))
        if kind == "name":
            return self._call(value) if self._peek() == "(" else Name(value)
        if value == "(":
            node = self.expression()
            self._expect(")")
            return node
        raise FormulaError(f"formula {self.text!r}: unexpected {value!r}")

    def _call(self, function: str) -> Node:
        if function not in _FUNCTIONS and function not in _UNARY:
            raise FormulaError(f"formula {self.text!r}: unknown function {function!r}")
        self._expect("(")
        args = [self.expression()]
        while self._peek() == ",":
            self._take()
            args.append(self.expression())
        self._expect(")")
        if function in _UNARY and len(args) != 1:
            raise FormulaError(f"formula {self.text!r}: {function} takes one argument")
        return Call(function, tuple(args))

    def _peek(self) -> str | None:
        if self.at < len(self.tokens) and self.tokens[self.at][0] == "op":
            return self.tokens[self.at][1]
        return None

    def _take(self) -> str:
        self.at += 1
        return self.tokens[self.at - 1][1]

    def _expect(self, op: str) -> None:
        if self._peek() != op:
            raise FormulaError(f"formula {self.text!r}: expected {op!r}")
        self._take()


def _names(node: Node) -> list[str]:
    if isinstance(node, Name):
        return [node.name]
    if isinstance(node, Unary):
        return _names(node.operand)
    if isinstance(node, Binary):
        return _names(node.left) + _names(node.right)
    if isinstance(node, Call):
        return [n for arg in node.args for n in _names(arg)]
    return []


def _evaluate(node: Node, values: Mapping[str, Value]) -> Value:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Name):
        return values[node.name]
    if isinstance(node, Unary):
        return -_evaluate(node.operand, values)
    if isinstance(node, Call):
        result = _evaluate(node.args[0], values)
        if node.function in _UNARY:
            return _UNARY[node.function](result)
        for arg in node.args[1:]:
            result = _FUNCTIONS[node.function](result, _evaluate(arg, values))
        return result
    left, right = _evaluate(node.left, values), _evaluate(node.right, values)
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    quotient = np.divide(left, right)
    return np.where(np.isfinite(quotient), quotient, np.nan)
