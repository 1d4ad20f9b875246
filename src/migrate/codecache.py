"""What Python compiles from text at run time, kept between processes as it keeps a module's bytecode: the methods
`dataclasses` writes, and regular expressions.

Making a dataclass compiles the source of each method it writes (`__init__`, `__repr__`, `__eq__`, a frozen class's
`__setattr__` and `__delattr__`, `__hash__`): ~0.3 ms of the ~0.45 a class costs, 45 classes when `migrate check`
imports the scan. Compiling a regular expression parses it and generates its code in Python (`re._parser`,
`re._compiler._code`): ~12 ms for the ~140 a check of ten CUDA files compiles. Inside `kept()`, each is done once per
interpreter: a method's code object is kept by its source text, a pattern's generated code (what
`re._compiler.compile` hands to `_sre.compile`) by its text and flags, in a file beside the package's bytecode
(`__pycache__`, or under `sys.pycache_prefix`), named with the interpreter's cache tag and headed by its bytecode
magic number and `_sre.MAGIC`, so another interpreter never reads it. What is read back is what would be compiled:
the same source compiled with the same flags (none inherited, as `dataclasses`' own `exec` of a string inherits
none), the same steps of `re` on the same pattern. Nothing is written when Python writes no bytecode
(`sys.dont_write_bytecode`); a file that cannot be read or does not decode is not used."""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's engine: no stubs
import builtins
import contextlib
import marshal
import os
import re
import sys
from collections.abc import Iterator
from types import CodeType, ModuleType
from typing import Any

_Parts = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]  # _sre.compile's arguments after the text


class _Codes:
    """The codes kept (dataclass methods by source, patterns' parts by text and flags) and what this process added
    and asked for."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.methods, self.patterns = _read(path) if path else ({}, {})
        self.read = len(self.methods) + len(self.patterns)
        self.added = 0
        self.asked: set[object] = set()

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /, **options: Any) -> None:
        """builtins.exec for `dataclasses`, with a source string's code compiled once."""
        if type(source) is not str or options:
            builtins.exec(source, globals, locals, **options)
            return
        code = self.methods.get(source)
        if code is None:
            code = self.methods[source] = compile(source, "<string>", "exec", dont_inherit=True)
            self.added += 1
        self.asked.add(source)
        builtins.exec(code, globals, locals)

    def compiled(self, compiler: ModuleType) -> Any:
        """`compile(p, flags)` of re's COMPILER module, with a text pattern's code generated once."""
        original = compiler.compile

        def compile_pattern(pattern: Any, flags: int = 0) -> Any:
            if type(pattern) not in (str, bytes) or flags & re.DEBUG:
                return original(pattern, flags)
            key = (pattern, int(flags))
            parts = self.patterns.get(key)
            if parts is None:
                parts = self.patterns[key] = _parts(compiler, pattern, flags)
                self.added += 1
            self.asked.add(key)
            return _sre.compile(pattern, *parts)

        return compile_pattern

    def save(self) -> None:
        """Write the codes this process asked for when it compiled any, or when the file held more than twice as many
        (another version's, another working set's: a process reads the whole file), atomically; failures are
        ignored (the cache is optional)."""
        if not (self.added or self.read > 2 * len(self.asked)) or not self.path or sys.dont_write_bytecode:
            return
        kept = [{key: v for key, v in k.items() if key in self.asked} for k in (self.methods, self.patterns)]
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temporary, "wb") as stream:
                stream.write(_magic() + marshal.dumps(tuple(kept)))
            os.replace(temporary, self.path)
            self.added, self.read = 0, len(self.asked)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _parts(compiler: ModuleType, pattern: str | bytes, flags: int) -> _Parts:
    """What re._compiler.compile(PATTERN, FLAGS) hands to _sre.compile after the text: its own steps (the same in
    Python 3.11 to 3.13), the opcodes as plain ints (they are int subclasses, which marshal refuses)."""
    parsed = compiler._parser.parse(pattern, flags)
    code = list(map(int, compiler._code(parsed, flags)))
    state = parsed.state
    indexgroup: list[str | None] = [None] * state.groups
    for name, index in state.groupdict.items():
        indexgroup[index] = name
    return int(flags | state.flags), code, state.groups - 1, dict(state.groupdict), tuple(indexgroup)


_codes: dict[str, _Codes] = {}
_CHECKED = ((3, 10), (3, 13))  # the Python versions whose dataclasses' exec and re._compiler steps were compared


@contextlib.contextmanager
def kept(name: str, *, save: bool = True) -> Iterator[None]:
    """While the block runs, dataclass methods and regular expressions are compiled once per interpreter (the
    module's doc). NAME names the file (a command's: what it compiles), read once a process and, with SAVE, written
    at the end of the block (_Codes.save: a block that a later one of the same NAME follows leaves it to that one,
    which knows all the process asked for)."""
    import dataclasses

    # nested, or someone else's; or an interpreter whose dataclasses and re internals were not checked: leave them
    if "exec" in vars(dataclasses) or not _CHECKED[0] <= sys.version_info[:2] <= _CHECKED[1]:
        yield
        return
    codes = _codes.get(name) or _codes.setdefault(name, _Codes(_path(name)))
    dataclasses.exec = codes.exec  # type: ignore[attr-defined]  # a module global, found before the builtin
    compiler = getattr(re, "_compiler", None)  # Python 3.11 and later (3.10's sre_compile is left alone)
    original = compiler.compile if compiler is not None else None
    if compiler is not None:
        compiler.compile = codes.compiled(compiler)
    try:
        yield
    finally:
        if compiler is not None:
            compiler.compile = original
        del dataclasses.exec  # type: ignore[attr-defined]
        if save:
            codes.save()


def _path(name: str) -> str | None:
    """Where NAME's codes are kept: the path Python would give the bytecode of a module of this package named
    `_compiled_NAME`."""
    from importlib._bootstrap_external import cache_from_source

    try:
        return cache_from_source(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"_compiled_{name}.py"))
    except NotImplementedError:  # no cache tag: this interpreter keeps no bytecode
        return None


def _magic() -> bytes:
    """The interpreter's bytecode magic number, `re`'s code version and the optimization level."""
    from importlib._bootstrap_external import MAGIC_NUMBER

    engine: int = _sre.MAGIC
    return MAGIC_NUMBER + engine.to_bytes(4, "little") + bytes([sys.flags.optimize & 0xFF])


def _read(path: str) -> tuple[dict[str, CodeType], dict[tuple[str | bytes, int], _Parts]]:
    """The codes at PATH, or none when it is missing, another interpreter's or does not decode."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError:
        return {}, {}
    head = _magic()
    try:
        if not data.startswith(head):
            raise ValueError("another interpreter's")
        methods, patterns = marshal.loads(data[len(head):])
        if not (isinstance(methods, dict) and all(type(s) is str and type(c) is CodeType for s, c in methods.items())
                and isinstance(patterns, dict) and all(_sound(k, v) for k, v in patterns.items())):
            raise ValueError("not codes")
    except (EOFError, ValueError, TypeError):
        return {}, {}
    return methods, patterns


def _sound(key: object, parts: object) -> bool:
    """KEY and PARTS have the shapes a pattern's entry has."""
    return (type(key) is tuple and len(key) == 2 and type(key[0]) in (str, bytes) and type(key[1]) is int
            and type(parts) is tuple and len(parts) == 5 and type(parts[0]) is int and type(parts[1]) is list
            and type(parts[2]) is int and type(parts[3]) is dict and type(parts[4]) is tuple)
