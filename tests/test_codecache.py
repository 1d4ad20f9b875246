"""migrate.codecache: what is read back is what Python would compile, and the hooks leave no trace."""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from pathlib import Path

import pytest

from migrate import codecache

PATTERNS: list[tuple[str | bytes, int]] = [
    (r"\bcuda[A-Z]\w*", 0),
    (r"(?P<name>[A-Za-z_]\w*)\s*\((?P<args>[^)]*)\)", 0),
    (r"(?i)__shfl(?:_xor|_up|_down)?(?:_sync)?", 0),
    (r"(?<![\w.])sm_?(?:7[025]|8[0679]|9[0a]|1[02]0)(?!\w)", re.IGNORECASE),
    (r"""
        ^\s*\#\s*include    # the directive
        \s*[<"](?P<path>[^>"]+)[>"]
     """, re.VERBOSE | re.MULTILINE),
    (r"(a)?(?(1)b|c)", 0),
    (r"[^\W\d_]+|\u00e9t\u00e9", 0),
    (r"(?s)\A(?=.*?\b(?:float16|bfloat16)\b)(?=.*?\bcuda\b)", 0),
    (rb"\x7fELF|\x00asm", 0),
    (r"(?:" + "|".join(f"name{i}" for i in range(300)) + r")\b", 0),
    (r"x{2,5}?(?>y+)z*+", 0),
    ("", 0),
]


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The codes kept under TMP_PATH, none read yet in this process, bytecode written."""
    monkeypatch.setattr(codecache, "_path", lambda name: str(tmp_path / f"{name}.pyc"))
    monkeypatch.setattr(codecache, "_codes", {})
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path


def _fresh() -> None:
    codecache._codes.clear()  # the next block reads the file again, as another process would


def _plain(pattern: str | bytes, flags: int) -> re.Pattern:
    return re._compiler.compile(pattern, flags)  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(re, "_compiler"), reason="Python 3.10 keeps no patterns")
def test_a_pattern_read_back_is_the_pattern_re_compiles(stored: Path) -> None:
    for round_ in ("compiled", "read back"):
        _fresh()
        with codecache.kept("t"):
            made = [re._compiler.compile(p, f) for p, f in PATTERNS]  # type: ignore[attr-defined]
        for (pattern, flags), got in zip(PATTERNS, made):
            want = _plain(pattern, flags)
            assert got == want, (round_, pattern)  # Pattern equality compares flags, text and generated code
            assert (got.groups, got.groupindex, got.flags) == (want.groups, want.groupindex, want.flags)
    assert (stored / "t.pyc").exists()
    assert codecache._codes["t"].added == 0  # the second round compiled nothing


@pytest.mark.skipif(not hasattr(re, "_compiler"), reason="Python 3.10 keeps no patterns")
def test_patterns_read_back_match_as_compiled(stored: Path) -> None:
    texts = ["name12(x)", "__SHFL_XOR_SYNC", "y.sm_90a", "#include <cuda.h>\n", "b", "c", "\u00e9t\u00e9", "xxyyz"]
    for _ in range(2):
        _fresh()
        with codecache.kept("t"):
            made = [re.compile(p, f) for p, f in PATTERNS if isinstance(p, str)]
            re.purge()  # re's own cache would hand back the first round's objects
    for (pattern, flags), got in zip([p for p in PATTERNS if isinstance(p[0], str)], made):
        for text in texts:
            want = _plain(pattern, flags).search(text)
            found = got.search(text)
            assert (found and (found.span(), found.groupdict())) == (want and (want.span(), want.groupdict()))


def test_a_dataclass_made_from_kept_methods_is_the_same_class(stored: Path) -> None:
    def make() -> type:
        @dataclasses.dataclass(frozen=True)
        class Point:
            """A point."""

            x: int
            label: str = "p"
            tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

        return Point

    plain = make()
    for _ in range(2):
        _fresh()
        with codecache.kept("t"):
            made = make()
        one, other = made(1), made(1, "p", ())
        assert one == other and hash(one) == hash(other) and one != made(2)
        assert repr(one) == repr(plain(1)).replace(plain.__qualname__, made.__qualname__)
        assert str(inspect.signature(made)) == str(inspect.signature(plain))
        assert made.__init__.__annotations__ == plain.__init__.__annotations__
        with pytest.raises(dataclasses.FrozenInstanceError):
            one.x = 2  # type: ignore[misc]
    assert codecache._codes["t"].added == 0


def test_the_hooks_are_gone_after_the_block(stored: Path) -> None:
    original = getattr(re, "_compiler", None) and re._compiler.compile  # type: ignore[attr-defined]
    with codecache.kept("t"):
        assert "exec" in vars(dataclasses)
    assert "exec" not in vars(dataclasses)
    assert (getattr(re, "_compiler", None) and re._compiler.compile) is original  # type: ignore[attr-defined]


def test_a_block_inside_another_leaves_the_outer_ones_hooks(stored: Path) -> None:
    with codecache.kept("t"):
        with codecache.kept("t"):
            pass
        assert "exec" in vars(dataclasses)
    assert "exec" not in vars(dataclasses)


def test_nothing_is_written_without_bytecode_or_with_save_off(stored: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with codecache.kept("off", save=False):
        re.compile(r"only[ ]here\d")
        re.purge()
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with codecache.kept("none"):
        re.compile(r"nor[ ]here\d")
        re.purge()
    assert list(stored.iterdir()) == []


@pytest.mark.parametrize("content", [b"", b"garbage", b"\x00" * 40])
def test_a_file_that_does_not_decode_is_not_used(stored: Path, content: bytes) -> None:
    (stored / "t.pyc").write_bytes(content)
    with codecache.kept("t"):
        got = re.compile(r"after[ ]garbage\d")
        re.purge()
    assert got.search("after garbage7")
    assert list(codecache._read(str(stored / "t.pyc"))[1]) == [(r"after[ ]garbage\d", 0)]  # written anew


def test_another_interpreters_file_is_not_read(stored: Path) -> None:
    with codecache.kept("t"):
        re.compile(r"kept[ ]once\d")
        re.purge()
    data = (stored / "t.pyc").read_bytes()
    (stored / "t.pyc").write_bytes(b"\x00\x00" + data[2:])  # another bytecode magic number
    _fresh()
    with codecache.kept("t"):
        pass
    assert codecache._codes["t"].methods == {} and codecache._codes["t"].patterns == {}


def test_a_save_keeps_only_what_the_process_asked_for(stored: Path) -> None:
    with codecache.kept("t"):
        for index in range(10):
            re.compile(rf"first[ ]set{index}\d")
        re.purge()
    _fresh()
    with codecache.kept("t"):
        re.compile(r"first[ ]set0\d")
        re.purge()
    _fresh()
    with codecache.kept("t"):
        pass
    assert [key for key in codecache._codes["t"].patterns] == [(r"first[ ]set0\d", 0)]


def test_an_interpreter_outside_the_checked_versions_is_left_alone(
    stored: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiler = getattr(re, "_compiler", None)
    before = compiler.compile if compiler is not None else None
    monkeypatch.setattr(codecache, "_CHECKED", ((3, 0), (3, 1)))
    with codecache.kept("t"):
        assert "exec" not in vars(dataclasses)
        assert (compiler.compile if compiler is not None else None) is before
        re.compile(r"outside\d+")
    assert not list(stored.iterdir())
