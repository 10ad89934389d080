"""Kernel categories and families from rules kept as data (`gpuscope/data/categories.json`,
user-extensible).

A kernel is classified by the parts of its name that say what it is (see `_kernel_names`): its
own function name, then its non-type template arguments, then the CPU operator that launched it
(linked by External id, so that categories line up across vendors), then its namespaces. Element
types and argument lists never decide, and a "weak" rule (an epilogue word such as `relu` in a
cuDNN convolution's name) gives way to the launching operator. Names are classified once each.

Each rule also names the kernel **family** it recognises: the library or compiler whose naming it
matches (ggml, Tensile, cuDNN, XLA, Inductor …), or "generic" for a rule that matches an operation
word any library may use (`softmax`, `gather`). A kernel's family is the one of the rule that
decided its category, unless that rule is generic: then the first rule of category "other" that
matches its name says which library it is (`at::native::…` → PyTorch ATen). Rules of category
"other" name a family only; they never end the search for a category. Every packaged rule carries a
real `example` name and its `source` (a reference output, `reference: <path>`, or a public URL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, cast

import numpy as np

from gpuscope.analysis._kernel_names import NameParts, name_parts
from gpuscope.analysis._unique import unique, unique_inverse
from gpuscope.errors import ConfigError
from gpuscope.trace.model import I32, KERNEL, MEMCPY, MEMSET, OP, Trace

CATEGORIES = (
    "gemm",
    "attention",
    "convolution",
    "normalization",
    "elementwise",
    "reduction",
    "softmax",
    "embedding",
    "moe",
    "quantization",
    "memcpy",
    "memset",
    "communication",
    "other",
)


class Pattern(Protocol):
    """A compiled regex: `re` for the packaged rules, RE2 (linear time) for a user's."""

    def search(self, text: str) -> object: ...


GENERIC = "generic"  # the family of a rule that matches an operation word, not a library
UNKNOWN = "other"  # the family of a kernel no rule names


@dataclass(frozen=True)
class Rule:
    category: str
    pattern: Pattern
    vendor: str = "any"
    weak: bool = False
    family: str = GENERIC
    example: str = ""  # a real kernel (or operator) name this rule is for
    source: str = ""  # where the example comes from: `reference: <path>` or a URL

    @property
    def names_family_only(self) -> bool:
        """A rule of category "other" says which library a kernel is, not what it computes."""
        return self.category == "other"

    def applies(self, vendor: str) -> bool:
        return self.vendor in ("any", vendor) or vendor == "unknown"


@dataclass(frozen=True)
class Match:
    """What a kernel's name says: the category found before and after the launching op is
    consulted, and whether the first one is only a weak hint."""

    early: str | None  # from the own name or the template arguments
    weak: bool
    late: str | None  # from the namespace-qualified name
    family: str = UNKNOWN
    rule: Rule | None = None  # the rule that decided the category (early or late)


@dataclass(frozen=True)
class Rules:
    kernel: tuple[Rule, ...]
    op: tuple[Rule, ...]

    def classify_kernel(self, name: str, vendor: str) -> str | None:
        """The category of a kernel from its name alone (no launching op)."""
        match = self.match_kernel(name, vendor)
        return match.early or match.late

    def classify_family(self, name: str, vendor: str) -> str:
        """The family of a kernel from its name (`UNKNOWN` when no rule names one)."""
        return self.match_kernel(name, vendor).family

    def match_kernel(self, name: str, vendor: str) -> Match:
        parts = name_parts(name)
        for text in (parts.base, parts.templates):
            found = self._first(text, vendor)
            if found is not None:
                return Match(found.category, found.weak, None, self._family(found, parts, vendor),
                             found)  # fmt: skip
        late = self._first(parts.qualified, vendor) if parts.qualified != parts.base else None
        return Match(None, False, late.category if late else None,
                     self._family(late, parts, vendor), late)  # fmt: skip

    def _first(self, text: str, vendor: str) -> Rule | None:
        if not text:
            return None
        for rule in self.kernel:
            if not rule.names_family_only and rule.applies(vendor) and rule.pattern.search(text):
                return rule
        return None

    def _family(self, decided: Rule | None, parts: NameParts, vendor: str) -> str:
        """The deciding rule's family, unless it is generic or absent: then the family of the
        first family-only rule that matches the qualified name or the template arguments."""
        if decided is not None and decided.family != GENERIC:
            return decided.family
        for text in (parts.qualified, parts.base, parts.templates):
            for rule in self.kernel:
                only = rule.names_family_only and rule.applies(vendor)
                if only and text and rule.pattern.search(text):
                    return rule.family
        return decided.family if decided is not None else UNKNOWN

    @property
    def families(self) -> tuple[str, ...]:
        """Every family the rules name, in rule order, then `UNKNOWN`."""
        names = dict.fromkeys(r.family for r in self.kernel if r.family != GENERIC)
        return (*names, GENERIC, UNKNOWN)

    def classify_op(self, name: str) -> str | None:
        rule = self.match_op(name)
        return rule.category if rule is not None else None

    def match_op(self, name: str) -> Rule | None:
        for rule in self.op:
            if rule.pattern.search(name):
                return rule
        return None


FILE_KEYS = ("schema", "about", "categories", "kernel_rules", "op_rules")
RULE_KEYS = ("category", "pattern", "vendor", "weak", "family", "example", "source")
VENDORS = ("any", "nvidia", "amd")


def load_rules(extra: str | Path | None = None) -> Rules:
    """The packaged rules, with those of `extra` (a JSON file of the same layout) tried first.

    A user's patterns run on RE2 (linear time: no pattern can hang the analysis); a key this
    layout does not have is an error, not ignored (a typo would silently drop a rule)."""
    text = resources.files("gpuscope").joinpath("data/categories.json").read_text("utf-8")
    base = _parse(json.loads(text), "gpuscope/data/categories.json", _compile_re)
    if extra is None:
        return base
    path = Path(extra)
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError) as error:  # RecursionError: nested too deep
        why = getattr(error, "strerror", None) or error
        raise ConfigError(f"{path}: cannot read category rules ({why})") from None
    user = _parse(data, str(path), _compile_re2)
    return Rules(user.kernel + base.kernel, user.op + base.op)


def _parse(data: Any, source: str, compile: Callable[[str], Pattern]) -> Rules:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a JSON object with kernel_rules and/or op_rules")
    _known(data, FILE_KEYS, source)
    rules = []
    for key in ("kernel_rules", "op_rules"):
        entries = data.get(key, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{source}: {key} must be a list of rules")
        rules.append(
            tuple(_rule(r, f"{source}: {key}[{i}]", compile) for i, r in enumerate(entries))
        )
    return Rules(*rules)


def _known(entry: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    unknown = [k for k in entry if k not in keys]
    if unknown:
        raise ConfigError(f"{where}: unknown key {', '.join(map(repr, unknown))}; expected "
                          f"{', '.join(keys)}")  # fmt: skip


def _rule(entry: Any, where: str, compile: Callable[[str], Pattern]) -> Rule:
    if not isinstance(entry, dict) or entry.get("category") not in CATEGORIES:
        raise ConfigError(
            f"{where}: each rule needs a category (one of {', '.join(CATEGORIES)}) and a "
            f"pattern; got {entry!r}"
        )
    _known(entry, RULE_KEYS, where)
    vendor = str(entry.get("vendor", "any")).lower()
    if vendor not in VENDORS or not isinstance(entry.get("pattern"), str):
        raise ConfigError(f"{where}: expected a string pattern and a vendor of "
                          f"{', '.join(VENDORS)}; got {entry!r}")  # fmt: skip
    if not isinstance(entry.get("weak", False), bool):
        raise ConfigError(f"{where}: weak must be true or false; got {entry['weak']!r}")
    texts = {"family": entry.get("family", GENERIC), "example": entry.get("example", ""),
             "source": entry.get("source", "")}  # fmt: skip
    if not all(isinstance(v, str) for v in texts.values()) or not texts["family"]:
        raise ConfigError(f"{where}: family, example and source must be strings (family not "
                          f"empty); got {entry!r}")  # fmt: skip
    try:
        pattern = compile(entry["pattern"])
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None
    return Rule(entry["category"], pattern, vendor, entry.get("weak", False), **texts)


def _compile_re(pattern: str) -> Pattern:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as error:
        raise ConfigError(f"bad pattern {pattern!r} ({error})") from None


def _compile_re2(pattern: str) -> Pattern:
    """RE2: no backtracking, so no pattern takes exponential time (no lookaround either)."""
    import re2

    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # the error is ours to report, on one line
    try:
        return cast(Pattern, re2.compile(pattern, options))
    except re2.error as error:
        why = error.args[0].decode(errors="replace") if error.args else "invalid"
        raise ConfigError(
            f"pattern {pattern!r}: {why} (user rules run on RE2: no lookaround or backreferences)"
        ) from None


@dataclass(frozen=True)
class Classification:
    """Category index (into CATEGORIES) per GPU op, and how each kernel was classified; the
    family index (into `families`) per kernel, -1 for copies, memsets and API rows."""

    category: I32  # per row of trace.gpu
    by_parent_op: int  # kernels classified through their launching CPU op
    unclassified: int  # kernels left in "other"
    totals: I32  # per row of trace.totals
    family: I32 = field(default_factory=lambda: np.zeros(0, np.int32))  # per row of trace.gpu
    totals_family: I32 = field(default_factory=lambda: np.zeros(0, np.int32))  # per totals row
    families: tuple[str, ...] = ()


def classify(trace: Trace, rules: Rules) -> Classification:
    gpu = trace.gpu
    other = CATEGORIES.index("other")
    category = np.full(len(gpu), other, np.int32)
    category[gpu.kind == MEMCPY] = CATEGORIES.index("memcpy")
    category[gpu.kind == MEMSET] = CATEGORIES.index("memset")
    kernels = np.flatnonzero(gpu.kind == KERNEL)
    names, inverse = unique_inverse(gpu.name[kernels])
    matches = [rules.match_kernel(trace.names[n], trace.meta.vendor) for n in names]
    families = rules.families
    family = np.full(len(gpu), -1, np.int32)
    family[kernels] = np.array([families.index(m.family) for m in matches], np.int32)[inverse]
    early = np.array([_index(m.early) for m in matches], np.int32)[inverse]
    weak = np.array([m.weak for m in matches], bool)[inverse]
    late = np.array([_index(m.late) for m in matches], np.int32)[inverse]
    parent = _parent_categories(trace, rules, gpu.external_id[kernels])
    use_parent = (parent >= 0) & ((early < 0) | weak)
    chosen = np.where(use_parent, parent, np.where(early >= 0, early, late))
    category[kernels] = np.where(chosen >= 0, chosen, other)
    by_parent = int((use_parent & (parent != early)).sum())
    totals, totals_family = classify_totals(trace, rules)
    return Classification(category, by_parent, int((chosen < 0).sum()), totals, family,
                          totals_family, families)  # fmt: skip


def classify_totals(trace: Trace, rules: Rules) -> tuple[I32, I32]:
    """Category index of each row of `trace.totals` (by name; API rows are "other") and family
    index (into `rules.families`; -1 for rows that are not kernels)."""
    totals = trace.totals
    category = np.full(len(totals), CATEGORIES.index("other"), np.int32)
    category[totals.kind == MEMCPY] = CATEGORIES.index("memcpy")
    category[totals.kind == MEMSET] = CATEGORIES.index("memset")
    family = np.full(len(totals), -1, np.int32)
    for row in np.flatnonzero(totals.kind == KERNEL):
        match = rules.match_kernel(trace.names[totals.name[row]], trace.meta.vendor)
        found = _index(match.early or match.late)
        if found >= 0:
            category[row] = found
        family[row] = rules.families.index(match.family)
    return category, family


@dataclass(frozen=True)
class FamilyTotal:
    """The kernels of one family: calls, time (-1 when the source has no durations), and the
    kernel name with the most time (most calls without durations)."""

    family: str
    count: int
    time_ns: int
    top: str


def family_totals(trace: Trace, classes: Classification) -> list[FamilyTotal]:
    """Kernel calls and time per family, most time first (from summary rows when the trace has
    no per-dispatch kernel rows)."""
    gpu = trace.gpu
    rows = np.flatnonzero(gpu.kind == KERNEL)
    if len(rows):
        names, family, count = gpu.name[rows], classes.family[rows], np.ones(len(rows), np.int64)
        time = gpu.dur[rows]
    else:
        rows = np.flatnonzero(trace.totals.kind == KERNEL)
        names, family = trace.totals.name[rows], classes.totals_family[rows]
        count, time = trace.totals.count[rows], trace.totals.total_ns[rows]
    known = bool((time >= 0).all())
    result = []
    for index in unique(family):
        mine = family == index
        weight = time[mine] if known else count[mine]
        ids, inverse = unique_inverse(names[mine])
        top = ids[int(np.bincount(inverse, weights=weight).argmax())]
        total = int(time[mine].sum()) if known else -1
        name = classes.families[int(index)]
        result.append(FamilyTotal(name, int(count[mine].sum()), total, trace.names[top]))
    return sorted(result, key=lambda f: (-f.time_ns, -f.count, f.family))


def _index(category: str | None) -> int:
    return CATEGORIES.index(category) if category is not None else -1


def parent_ops(trace: Trace, external_ids: Any) -> I32:
    """Name index of the CPU operator with each External id (-1 when there is none)."""
    result = np.full(len(external_ids), -1, np.int32)
    ops = trace.ops
    is_op = (ops.kind == OP) & (ops.external_id >= 0)
    if len(external_ids) == 0 or not is_op.any():
        return result
    op_ids, op_names = ops.external_id[is_op], ops.name[is_op]
    order = np.argsort(op_ids, kind="stable")
    op_ids, op_names = op_ids[order], op_names[order]
    pos = np.clip(np.searchsorted(op_ids, external_ids), 0, len(op_ids) - 1)
    found = (op_ids[pos] == external_ids) & (external_ids >= 0)
    result[found] = op_names[pos[found]]
    return result


def _parent_categories(trace: Trace, rules: Rules, external_ids: Any) -> I32:
    """Category of the CPU op with each External id (-1 when none or unclassified)."""
    parents = parent_ops(trace, external_ids)
    lookup = np.full(len(trace.names) + 1, -1, np.int32)  # last slot: "no parent"
    for name in unique(parents[parents >= 0]):
        lookup[name] = _index(rules.classify_op(trace.names[name]))
    result: I32 = lookup[parents]
    return result
