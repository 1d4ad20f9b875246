"""Python through the stdlib `ast`: comments vanish, strings and docstrings are known nodes."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from migrate.casefold import folded
from migrate.gcpause import paused
from migrate.model import FileKind, SourceFile
from migrate.parse.document import Document, ParseError, register

HIP_VERSION = "torch.version.hip"
# Names that by convention say "this is a ROCm/HIP build" (torch's IS_HIP_EXTENSION, triton's is_hip()) or name an
# AMD-only GPU family (is_cdna(), IS_RDNA3, is_gfx942).
_HIP_FLAG = re.compile(
    r"^_?(?:(?:is|use|on|has|with|using)_?)?(?:hip|rocm|amd|cdna\d*|rdna\d*|gfx\d+[a-z]?)(?:_[a-z0-9]+)*$", re.I
)
_HIP_WORD = re.compile(r"\b(?:hip|rocm|amd)\b", re.I)  # "hip" == backend, "+rocm" in torch.__version__
_AMD_ATTRIBUTES = frozenset({"gcnArchName"})  # device properties only AMD GPUs have
# Calls whose string arguments are words for people, not code.
PROSE_CALLS = frozenset(
    {"print", "echo", "secho", "write", "debug", "info", "warning", "warn", "error", "exception",
     "critical", "fatal", "log", "exit", "fail", "skip", "xfail", "add_argument", "set_description"}
)
PROSE_KEYWORDS = frozenset({"help", "description", "msg", "message", "epilog", "usage", "reason", "desc"})
_WRAPPERS = (ast.JoinedStr, ast.FormattedValue, ast.BinOp, ast.IfExp, ast.BoolOp)
_HINT_WORDS = ("hip", "rocm", "amd", "gcnarch", "cdna", "rdna")  # in any case, or gfx and a digit: may test for ROCm
_HIP_HINT = re.compile("|".join(_HINT_WORDS) + r"|gfx\d", re.I)
_HIP_HINT_LOWER = re.compile("|".join(_HINT_WORDS) + r"|gfx\d")  # the same, in text already in lower case
_GFX = re.compile(r"gfx\d")
# In a text without the four characters beyond ASCII that fold to ASCII letters (casefold.py), what _HIP_HINT finds
# is what _HIP_HINT_LOWER finds in its lower case.
# ROCm's command-line tools: an except clause that runs one is the ROCm fallback of what the try attempted.
# a module whose name says it is the ROCm side of a per-platform split (rocm.py, hip.py, prefill_rocm.py); not a test
# named for what it checks on ROCm (test_half_rocm.py), nor a rocm_utils.py of ROCm-aware helpers
_ROCM_MODULE = re.compile(r"(?:^|/)(?!test_)(?:rocm|hip|\w+_rocm)\.py$", re.IGNORECASE)
_ROCM_TOOL = re.compile(r"(?:^|[\s/])(?:rocm-smi|amd-smi|rocminfo|hipconfig|hipcc)(?:\s|$)")
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_BLOCKS = ("body", "orelse", "finalbody")
_TRY_STAR: tuple[type, ...] = (ast.TryStar,) if hasattr(ast, "TryStar") else ()


@dataclass(frozen=True)
class Ref:
    """A name or attribute chain in code, resolved through the imports (`th.cuda` -> `torch.cuda`)."""

    node: ast.expr
    dotted: str


@dataclass(frozen=True)
class CallSite:
    """A call: the callee's dotted name when it is a name chain, and the method name when it is `x.m(...)`."""

    node: ast.Call
    name: str | None
    method: str | None


@dataclass(frozen=True)
class ImportSite:
    """An import statement and the dotted modules (and `module.name`s) it brings in."""

    node: ast.Import | ast.ImportFrom | ast.Assign  # an Assign: `trt, ok = optional_import("tensorrt")`
    modules: tuple[str, ...]


@dataclass(frozen=True)
class StringSite:
    """A string constant with its role: doc, prose (messages, help), argv (first of a list) or code."""

    node: ast.Constant
    role: str
    assigned_to: str | None = None


@dataclass(frozen=True)
class Decorated:
    """A decorator on a function or class, resolved to its dotted name (`@cuda.jit(...)` -> `numba.cuda.jit`)."""

    node: ast.expr
    target: ast.AST
    name: str


@dataclass
class PythonIndex:
    """The statements the other lookups start from, gathered once and shared by every rule."""

    imports: list[ImportSite] = field(default_factory=list)
    ifs: list[ast.If] = field(default_factory=list)
    asserts: list[ast.Assert] = field(default_factory=list)
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)
    assigns: list[ast.Assign | ast.AnnAssign] = field(default_factory=list)
    returns: list[ast.Return] = field(default_factory=list)


def _may_hint(lower: str | None, text: str) -> bool:
    """_HIP_HINT finds something in TEXT; decided by plain searches of its lower case LOWER (see folded) where there
    is one (a case-insensitive regex that starts with no literal tests every position)."""
    if lower is None:
        return _HIP_HINT.search(text) is not None
    return any(word in lower for word in _HINT_WORDS) or _GFX.search(lower) is not None


@dataclass
class PythonDocument(Document):
    """A Python module with its syntax tree and the import aliases needed to resolve names."""

    @property
    def module(self) -> ast.Module:
        return self.tree  # type: ignore[no-any-return]

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node but the operator and context singletons, breadth first."""
        found, parents, groups = _walk(self.module)
        self.__dict__["parents"], self.__dict__["by_type"] = parents, groups
        return found

    @cached_property
    def parents(self) -> dict[ast.AST, ast.AST]:
        self.nodes  # noqa: B018  (the walk fills in the parents)
        return self.__dict__["parents"]  # type: ignore[no-any-return]

    @cached_property
    def by_type(self) -> dict[type, list[ast.AST]]:
        """The nodes grouped by their class, so each index reads only the kinds it needs."""
        self.nodes  # noqa: B018  (the walk groups them)
        return self.__dict__["by_type"]  # type: ignore[no-any-return]

    def of_type(self, *types: type) -> list[Any]:
        return [node for kind in types for node in self.by_type.get(kind, ())]

    @cached_property
    def aliases(self) -> dict[str, str]:
        """Local name -> dotted name it was imported as (`th` -> `torch`, `F` -> `torch.nn.functional`)."""
        table: dict[str, str] = {}
        for site in self._structure.imports:
            node = site.node
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    table[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    table[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for assign in self._structure.assigns:  # torch = pytest.importorskip("torch")
            module = _imported_by_call(assign.value)
            if module and isinstance(assign, ast.Assign) and len(assign.targets) == 1:
                target = _first_target(assign.targets[0], assign.value)
                if target is not None:
                    table[target] = module
        return table

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """Every name the code reads or binds and every attribute name (`x`, `y` and `z` in `x = y.z`), once each."""
        groups: dict[type, list[Any]] = self.by_type
        return frozenset({n.id for n in groups.get(ast.Name, ())} | {n.attr for n in groups.get(ast.Attribute, ())})

    @cached_property
    def loads(self) -> dict[str, list[ast.Name]]:
        """The names the code reads (`ast.Load`), each id's in the walk's order (a rule asks about many ids)."""
        table: dict[str, list[ast.Name]] = {}
        names: list[ast.Name] = self.of_type(ast.Name)
        for node in names:
            if isinstance(node.ctx, ast.Load):
                table.setdefault(node.id, []).append(node)
        return table

    @cached_property
    def import_roots(self) -> frozenset[str]:
        """The top-level modules the imports bring in (`torch` for `import torch.nn.functional as F`)."""
        return frozenset(value.partition(".")[0] for value in self.aliases.values())

    def dotted(self, node: ast.AST) -> str | None:
        """`th.cuda.is_available` -> `torch.cuda.is_available` when `th` is torch; None if not a name chain."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    @cached_property
    def docstrings(self) -> frozenset[int]:
        """ids of the string constants that are docstrings (never matched)."""
        found = set()
        for node in self.of_type(ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
        return frozenset(found)

    def enclosing(self, node: ast.AST, *types: type) -> ast.AST | None:
        """The nearest ancestor of one of TYPES."""
        current = self.parents.get(node)
        while current is not None and not isinstance(current, types):
            current = self.parents.get(current)
        return current

    @cached_property
    def _structure(self) -> PythonIndex:
        """Imports, ifs, asserts, functions and assignments: what resolving names needs first."""
        index = PythonIndex(
            ifs=self.of_type(ast.If),
            asserts=self.of_type(ast.Assert),
            functions=self.of_type(ast.FunctionDef, ast.AsyncFunctionDef),
            assigns=self.of_type(ast.Assign, ast.AnnAssign),
            returns=self.of_type(ast.Return),
        )
        for node in self.of_type(ast.Import, ast.ImportFrom):
            _add_import(index, node)
        for assign in index.assigns:  # `cp, has_cp = optional_import("cupy")`: an import by its helper
            module = _imported_by_call(assign.value, _OPTIONAL_IMPORT_CALLS)
            if module and isinstance(assign, ast.Assign):
                index.imports.append(ImportSite(assign, (module,)))
        return index

    @property
    def imports(self) -> list[ImportSite]:
        """The import statements (import-only rules need no references or calls)."""
        return self._structure.imports

    @property
    def assigns(self) -> list[ast.Assign | ast.AnnAssign]:
        """The assignments and annotated assignments."""
        return self._structure.assigns

    @cached_property
    def refs(self) -> list[Ref]:
        """The resolved references (see _refs); references, calls and decorators are each made when a rule asks."""
        return list(self._refs())

    @cached_property
    def calls(self) -> list[CallSite]:
        """The calls with their dotted callee and method name, in the walk's order."""
        return [CallSite(node, self.dotted(node.func), node.func.attr if isinstance(node.func, ast.Attribute) else None)
                for node in self.of_type(ast.Call)]

    @cached_property
    def decorated(self) -> list[Decorated]:
        """The decorators, resolved (a rule that looks for imports and decorators needs no references or calls)."""
        found: list[Decorated] = []
        for target in self._structure.functions:
            for decorator in target.decorator_list:
                name = self.dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
                if name:
                    found.append(Decorated(decorator, target, name))
        return found

    def _refs(self) -> Iterator[Ref]:
        """The name chains (outermost node) whose first name an import binds or names an imported module, names
        before attributes, each in tree order: `self.layer.weight` and other locals are most chains of a file."""
        roots = self.import_roots | self.aliases.keys()
        parents = self.parents
        outermost = set()
        for node in self.of_type(ast.Name):
            if node.id not in roots or self.in_annotation(node):
                continue
            chain, parent = node, parents.get(node)
            while isinstance(parent, ast.Attribute) and parent.value is chain:  # x in x.y is part of a longer chain
                chain, parent = parent, parents.get(parent)
            if chain is node:
                yield Ref(node, self.aliases.get(node.id, node.id))
            else:
                outermost.add(id(chain))
        for chain in self.of_type(ast.Attribute) if outermost else ():
            if id(chain) in outermost and (name := self.dotted(chain)):
                yield Ref(chain, name)

    @cached_property
    def calls_by(self) -> dict[tuple[str, str], list[CallSite]]:
        """Calls keyed by ("name", dotted callee), ("method", m) and ("keyword", k), for direct lookups."""
        table: dict[tuple[str, str], list[CallSite]] = {}
        for site in self.calls:
            keys = [("keyword", k.arg) for k in site.node.keywords if k.arg]
            keys += [("name", site.name)] if site.name else []
            keys += [("method", site.method)] if site.method else []
            for key in keys:
                table.setdefault(key, []).append(site)
        return table

    def is_guarded(self, line: int) -> bool:
        """As for any document, with the ROCm-guarded ranges found when a hit first asks (most files have none)."""
        return self.in_ranges(self.guarded_ranges or self.hip_guarded_ranges, line)

    def in_annotation(self, node: ast.AST) -> bool:
        """NODE is part of a type annotation (naming a type there is no use of it)."""
        child, parent = node, self.parents.get(node)
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.arg):  # an argument's only child node is its annotation
                return True
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.AnnAssign):
            return child is parent.annotation
        return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is parent.returns

    @cached_property
    def strings(self) -> list[ast.Constant]:
        """The string constants, in tree order (their roles come from string_site, for the few a rule wants)."""
        return [node for node in self.of_type(ast.Constant) if isinstance(node.value, str)]

    def string_site(self, node: ast.Constant) -> StringSite:
        """NODE with its role: doc, prose (messages, help), argv (first of a list) or code."""
        found = self._string_sites.get(id(node))
        if found is None:
            found = self._string_sites[id(node)] = self._string_site(node)
        return found

    @cached_property
    def _string_sites(self) -> dict[int, StringSite]:
        return {}

    @cached_property
    def refs_by_prefix(self) -> dict[str, list[Ref]]:
        """References under each dotted prefix: `torch.cuda` finds `torch.cuda.amp.autocast` in one lookup.
        Only references rooted in an imported module: every rule looks for a module's names, and locals
        (`self.layer.weight`) are most references of a file."""
        table: dict[str, list[Ref]] = {}
        for ref in self.refs:
            parts = ref.dotted.split(".")
            for end in range(1, len(parts) + 1):
                table.setdefault(".".join(parts[:end]), []).append(ref)
        return table

    def _string_site(self, node: ast.Constant) -> StringSite:
        if id(node) in self.docstrings:
            return StringSite(node, "doc")
        outer: ast.AST = node
        parent = self.parents.get(outer)
        while parent is not None:
            if _is_format_call(parent, outer):  # "...".format(x): the call stands for the string
                call = self.parents.get(parent)
                if call is None:
                    break
                outer, parent = call, self.parents.get(call)
            elif isinstance(parent, _WRAPPERS):
                outer, parent = parent, self.parents.get(parent)
            else:
                break
        role = self._role(outer, parent)
        return StringSite(node, role, _assigned_name(parent, outer) if role == "code" else None)

    def _role(self, node: ast.AST, parent: ast.AST | None) -> str:
        if isinstance(parent, ast.Expr):  # a bare string statement is a comment in disguise
            return "doc"
        if isinstance(parent, ast.Call) and node in parent.args:
            callee = parent.func.attr if isinstance(parent.func, ast.Attribute) else self.dotted(parent.func)
            if callee in PROSE_CALLS or isinstance(self.parents.get(parent), ast.Raise):
                return "prose"
        if isinstance(parent, ast.keyword) and parent.arg in PROSE_KEYWORDS:
            return "prose"
        if isinstance(parent, ast.Assert) and parent.msg is node:
            return "prose"
        if isinstance(parent, (ast.List, ast.Tuple)) and parent.elts and parent.elts[0] is node:
            return "argv"
        return "code"

    # --- torch.version.hip awareness -------------------------------------------------------------

    def mentions_hip(self, expr: ast.AST) -> bool:
        """True when EXPR tests for a ROCm build: torch.version.hip, a flag or function derived from it."""
        if not self._may_mention_hip(expr):
            return False
        for node in ast.walk(expr):
            if isinstance(node, (ast.Name, ast.Attribute)):
                name = self.dotted(node)
                if name == HIP_VERSION or (name and name in self._hip_names):
                    return True
                last = node.id if isinstance(node, ast.Name) else node.attr
                if _HIP_FLAG.match(last) or last in _AMD_ATTRIBUTES:
                    return True
            elif isinstance(node, ast.Compare) and _compares_hip_word(node):
                return True
            elif isinstance(node, ast.Call) and _getattr_hip(self, node):
                return True
        return False

    @cached_property
    def _hint_lines(self) -> frozenset[int]:
        lower, found = self._lower_text, set()
        text, hint = (self.text, _HIP_HINT) if lower is None else (lower, _HIP_HINT_LOWER)
        line, position = 1, 0
        for match in hint.finditer(text):
            line += text.count("\n", position, match.start())
            position = match.start()
            found.add(line)
        return frozenset(found)

    def _may_mention_hip(self, expr: ast.AST) -> bool:
        """A cheap line-level test before walking EXPR: a hip word, or a name derived from a hip test."""
        start, end = getattr(expr, "lineno", 0), getattr(expr, "end_lineno", 0) or 0
        if any(n in self._hint_lines for n in range(start, end + 1)):
            return True
        derived = self.__dict__.get("_hip_names")
        if not derived:
            return False
        text = "\n".join(self.lines[start - 1 : end])
        return any(name in text for name in derived)

    @cached_property
    def _hip_names(self) -> frozenset[str]:
        """Variables assigned from a hip test and functions that return one (`IS_ROCM = torch.version.hip is not None`)."""
        names: set[str] = set()
        self.__dict__["_hip_names"] = frozenset()
        if not self._hint_lines:
            return frozenset()
        for _ in range(2):  # a second round finds names derived from names found in the first
            for node in self._structure.assigns:
                if node.value is not None and self.mentions_hip(node.value):
                    names.update(_target_names(node))
            for done in self._structure.returns:
                function = self.enclosing(done, ast.FunctionDef, ast.AsyncFunctionDef)
                if function is not None and done.value is not None and self.mentions_hip(done.value):
                    names.add(function.name)  # type: ignore[attr-defined]
            self.__dict__["_hip_names"] = frozenset(names)
        return frozenset(names)

    @cached_property
    def _text_may_hint(self) -> bool:
        """_may_hint of the text, asked once (the guarded ranges and the guard lines both ask)."""
        return _may_hint(self._lower_text, self.text)

    @cached_property
    def _lower_text(self) -> str | None:
        return folded(self.text)

    @cached_property
    def hip_guarded_ranges(self) -> list[tuple[int, int]]:
        """Line ranges of code that already handles ROCm: if/elif chains and `a if <ROCm> else b` whose tests check
        for ROCm (every branch is already ported), a try whose except falls back to a ROCm tool (`nvidia-smi`
        tried first, `rocm-smi` after), and the functions called only from such code; all of a module named for
        ROCm (`attention/rocm.py`, `prefill_rocm.py`, `backends/rocm.py`: the ROCm side of a per-platform split)."""
        if _ROCM_MODULE.search(self.source.relpath):
            return [(1, max(1, self.text.count("\n") + 1))]
        if not self._text_may_hint:
            return []
        ranges = []
        elifs = {id(n.orelse[0]) for n in self._structure.ifs if len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)}
        for node in self._structure.ifs:
            if id(node) in elifs:
                continue
            if any(self.mentions_hip(test) for test in _chain_tests(node)):
                ranges.append((node.lineno, self._rest_after_exit(node) or node.end_lineno or node.lineno))
        for choice in self.of_type(ast.IfExp):
            if self.mentions_hip(choice.test):
                ranges.append((choice.lineno, choice.end_lineno or choice.lineno))
        for attempt in self.of_type(ast.Try, *_TRY_STAR):
            if any(self._falls_back_to_rocm(handler) for handler in attempt.handlers):
                ranges.append((attempt.lineno, attempt.body[-1].end_lineno or attempt.lineno))
        return ranges + self._reached_only_from(ranges) if ranges else ranges

    def _rest_after_exit(self, node: ast.If) -> int | None:
        """For `if <ROCm test>: ... return` with no else, the last line of its block: the code after it is the other
        platform's branch. None when the if can fall through."""
        if node.orelse or not isinstance(node.body[-1], _EXITS):
            return None
        parent = self.parents.get(node)
        block: list[ast.stmt] = next((getattr(parent, f) for f in _BLOCKS if node in getattr(parent, f, ())), [])
        return block[-1].end_lineno if block else None

    def _falls_back_to_rocm(self, handler: ast.ExceptHandler) -> bool:
        """The except clause runs a ROCm tool or checks for ROCm: the try already handles both platforms."""
        start, end = handler.lineno, handler.end_lineno or handler.lineno
        if not any(n in self._hint_lines for n in range(start, end + 1)):
            return False
        for node in ast.walk(handler):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _ROCM_TOOL.search(node.value):
                return True
            if isinstance(node, (ast.If, ast.IfExp)) and self.mentions_hip(node.test):
                return True
        return False

    def _reached_only_from(self, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The functions (and methods) of this file whose every use is a call inside RANGES, or inside another such
        function: helpers of the CUDA branch of a ROCm switch (`get_cuda_bare_metal_version` called only in the
        `else` of `if IS_ROCM:`). A function used any other way (passed on, or not called here at all) is not."""
        uses = self._uses_by_name
        found: list[tuple[int, int]] = []
        candidates = [f for f in self._structure.functions if uses.get(f.name)]
        changed = True
        while changed:
            changed = False
            for function in candidates:
                span = (function.lineno, function.end_lineno or function.lineno)
                if span in found:
                    continue
                inside = ranges + found
                if all(called and any(s <= line <= e for s, e in inside) for line, called in uses[function.name]):
                    found.append(span)
                    changed = True
        return found

    @cached_property
    def _uses_by_name(self) -> dict[str, list[tuple[int, bool]]]:
        """Per function name defined here, each place it is named: (line, whether it is called there)."""
        defined = {f.name for f in self._structure.functions}
        uses: dict[str, list[tuple[int, bool]]] = {}
        for node in self.of_type(ast.Name, ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name not in defined or not isinstance(node.ctx, ast.Load):
                continue
            parent = self.parents.get(node)
            called = isinstance(parent, ast.Call) and parent.func is node
            uses.setdefault(name, []).append((node.lineno, called))
        return uses

    @cached_property
    def _hip_guard_lines(self) -> dict[int, list[int]]:
        """Per enclosing function (id; 0 for the module), the end lines of hip checks that precede later code."""
        found: dict[int, list[int]] = {}
        if not self._text_may_hint:
            return found
        checks: list[ast.If | ast.Assert] = [*self._structure.ifs, *self._structure.asserts]
        for node in checks:
            if self.mentions_hip(node.test):
                scope = self.enclosing(node, ast.FunctionDef, ast.AsyncFunctionDef)
                found.setdefault(id(scope) if scope else 0, []).append(node.end_lineno or node.lineno)
        return found

    def hip_state(self, node: ast.AST) -> str | None:
        """"expression" when NODE's own expression also checks ROCm, "after-guard" when a ROCm check precedes it
        in the same function, else None."""
        statement = self.enclosing(node, ast.stmt)
        expression = self.parents.get(node)
        while expression is not None and expression is not statement and not isinstance(expression, ast.stmt):
            if isinstance(expression, (ast.BoolOp, ast.IfExp)) and self.mentions_hip(expression):
                return "expression"
            expression = self.parents.get(expression)
        scope = self.enclosing(node, ast.FunctionDef, ast.AsyncFunctionDef)
        line = getattr(node, "lineno", 0)
        if any(end < line for end in self._hip_guard_lines.get(id(scope) if scope else 0, [])):
            return "after-guard"
        return None


# Fields that never hold a node: the shared Load/Store/Add/... singletons (not worth a visit) and plain values.
_NO_NODE_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "id", "attr", "arg", "module", "level", "kind",
                             "conversion", "is_async", "simple", "asname", "tag", "rest", "kwd_attrs"})
_NO_NODE_BY_CLASS = {"Constant": {"value"}, "MatchSingleton": {"value"}, "Global": {"names"}, "Nonlocal": {"names"},
                     **{name: {"name"} for name in ("FunctionDef", "AsyncFunctionDef", "ClassDef", "alias",
                                                    "ExceptHandler", "MatchAs", "MatchStar")}}
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    skipped = _NO_NODE_FIELDS | _NO_NODE_BY_CLASS.get(kind.__name__, set())
    fields: tuple[str, ...] = getattr(kind, "_fields", ())
    found = _CHILD_FIELDS[kind] = tuple(name for name in fields if name not in skipped)
    return found


def _walk(root: ast.AST) -> tuple[list[ast.AST], dict[ast.AST, ast.AST], dict[type, list[ast.AST]]]:
    """Every node (breadth first), its parent, and the nodes by class, in one pass over the fields that can hold
    nodes (faster than ast.walk plus iter_child_nodes, which look at every field of every node)."""
    nodes: list[ast.AST] = [root]
    parents: dict[ast.AST, ast.AST] = {}
    groups: dict[type, list[ast.AST]] = {}
    node_type = ast.AST
    for node in nodes:  # grows while we iterate
        kind = node.__class__
        group = groups.get(kind)
        if group is None:
            group = groups[kind] = []
        group.append(node)
        fields = _CHILD_FIELDS.get(kind)
        for name in _child_fields(kind) if fields is None else fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_type):
                        parents[item] = node
                        nodes.append(item)
            elif isinstance(value, node_type):
                parents[value] = node
                nodes.append(value)
    return nodes, parents, groups


def _add_import(index: PythonIndex, node: ast.Import | ast.ImportFrom) -> None:
    if isinstance(node, ast.Import):
        index.imports.append(ImportSite(node, tuple(a.name for a in node.names)))
    elif node.module and node.level == 0:
        names = tuple(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
        index.imports.append(ImportSite(node, (node.module, *names)))


# A project's own helper that imports a package named by a string and hands back a stand-in when it is missing:
# MONAI's `optional_import("cupy")` (returning the module and whether it loaded), pandas' and xarray's
# `import_optional_dependency("pyarrow")`, `_optional_import` / `try_import` in tools that probe for TensorRT or
# ONNX Runtime. What it loads is an import like any other; that it may be missing is a fallback by construction.
_OPTIONAL_IMPORT_CALLS = frozenset({"optional_import", "_optional_import", "import_optional_dependency",
                                    "try_import", "_try_import"})
_IMPORT_CALLS = frozenset({"importorskip", "import_module", "__import__"}) | _OPTIONAL_IMPORT_CALLS
_MODULE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def _imported_by_call(value: ast.expr | None, calls: frozenset[str] = _IMPORT_CALLS) -> str | None:
    """The module of `pytest.importorskip("m")` / `importlib.import_module("m")` / `optional_import("m")`, a literal
    name only; `optional_import("m", name="x")` takes `m.x`."""
    if not (isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Constant)):
        return None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    module = value.args[0].value
    if name not in calls or not isinstance(module, str) or not _MODULE.match(module):
        return None
    member = next((k.value.value for k in value.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)
                   and name in _OPTIONAL_IMPORT_CALLS), None)
    return f"{module}.{member}" if isinstance(member, str) and member.isidentifier() else module


def _first_target(target: ast.expr, value: ast.expr) -> str | None:
    """The name an import call binds: `torch = importorskip("torch")`, or the first of the pair an optional-import
    helper returns (`trt, trt_ok = optional_import("tensorrt")`)."""
    if isinstance(target, ast.Name):
        return target.id
    func = value.func if isinstance(value, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name) \
            and name in _OPTIONAL_IMPORT_CALLS:
        return target.elts[0].id
    return None


def _is_format_call(parent: ast.AST | None, node: ast.AST) -> bool:
    return isinstance(parent, ast.Attribute) and parent.attr == "format" and parent.value is node


def _assigned_name(parent: ast.AST | None, node: ast.AST) -> str | None:
    """The variable, keyword, constant dict key or parameter that receives NODE (`{"attention": "x"}` assigns to
    `attention`, as `def f(attention="x")` does)."""
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        names = _target_names(parent)
        return names[0] if names else None
    if isinstance(parent, ast.keyword):
        return parent.arg
    if isinstance(parent, ast.Dict):
        key = next((k for k, v in zip(parent.keys, parent.values) if v is node), None)
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    if isinstance(parent, ast.arguments):  # a parameter's default: def trunk(kernel="x")
        positional = parent.posonlyargs + parent.args
        pairs = [*zip(positional[len(positional) - len(parent.defaults):], parent.defaults),
                 *zip(parent.kwonlyargs, parent.kw_defaults)]
        return next((arg.arg for arg, default in pairs if default is node), None)
    return None


def _target_names(node: ast.Assign | ast.AnnAssign) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = []
    for target in targets:
        for item in ast.walk(target):
            if isinstance(item, ast.Name):
                names.append(item.id)
            elif isinstance(item, ast.Attribute):
                names.append(item.attr)
    return names


def _chain_tests(node: ast.If) -> list[ast.expr]:
    tests = [node.test]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        tests.append(node.test)
    return tests


def _compares_hip_word(node: ast.Compare) -> bool:
    return any(
        isinstance(side, ast.Constant) and isinstance(side.value, str) and len(side.value) < 40
        and _HIP_WORD.search(side.value) is not None
        for side in (node.left, *node.comparators)
    )


def _getattr_hip(doc: PythonDocument, node: ast.Call) -> bool:
    """`getattr(torch.version, "hip", None)`, `hasattr(props, "gcnArchName")`."""
    if not (isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2):
        return False
    key = node.args[1]
    if not isinstance(key, ast.Constant):
        return False
    return key.value in _AMD_ATTRIBUTES or (doc.dotted(node.args[0]) == "torch.version" and key.value == "hip")


@register(FileKind.PYTHON)
def parse_python(source: SourceFile, text: str) -> PythonDocument:
    """Parse a Python module; a syntax error becomes the skip reason."""
    try:
        tree = _parsed(text, source.relpath)
    except SyntaxError as exc:
        if "\0" in text:  # the parser names no line for it (lineno None)
            raise ParseError("cannot parse as Python: the file contains a NUL byte") from None
        retried = _parsed_without_shell_escapes(text, source.relpath)
        if retried is None:
            raise ParseError(f"Python syntax error at line {exc.lineno}: {exc.msg}") from None
        tree = retried
    except ValueError as exc:
        raise ParseError(f"cannot parse as Python: {exc}") from None
    except (MemoryError, RecursionError):  # CPython's parser runs out on deep nesting (`- - - ... 1`)
        raise ParseError("too deeply nested to parse") from None
    return PythonDocument(source=source, text=text, tree=tree)


def _parsed(text: str, relpath: str) -> ast.Module:
    with warnings.catch_warnings(), paused():  # an AST holds no cycles: no pass while it is built, none over it after
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=relpath)


# A notebook exported as a script (Colab's "Download .py", jupytext's percent format) keeps IPython's shell escapes
# and magics as lines of their own (`!pip install ...`, `%matplotlib inline`, `%%time`): Python cannot parse them, and
# the rest of the file is ordinary code.
_SHELL_ESCAPE = re.compile(r"^([ \t]*)(?:!|%%?[A-Za-z])[^\n]*$", re.MULTILINE)


def _parsed_without_shell_escapes(text: str, relpath: str) -> ast.Module | None:
    """The tree of TEXT with its IPython escape lines read as `pass` (lines keep their numbers), or None."""
    blanked, count = _SHELL_ESCAPE.subn(r"\1pass", text)
    if not count:
        return None
    try:
        return _parsed(blanked, relpath)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
