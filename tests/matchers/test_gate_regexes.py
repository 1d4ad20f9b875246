"""Code tests written for speed (led by a literal or a character set, so that the search skips ahead in C): each
finds exactly what its plain form finds, on texts made to sit at its edges."""

from __future__ import annotations

import itertools
import re

from migrate.matchers import cuda_warp
from migrate.ruleset import load_builtin

# vector-type-operators' if_code as it was first written
_VECTOR_TYPE = re.compile(r"\b(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]\b")
_PIECES = ["u", "uu", "char", "short", "int", "long", "longlong", "float", "double", "l", "2", "4", "5", "_", "x",
           " ", "(", "é", "\n"]


def _if_code(rule_id: str) -> re.Pattern[str]:
    rule = next(r for r in load_builtin().rules if r.id == rule_id)
    return re.compile(rule.match["if_code"])


def test_vector_type_if_code_finds_what_its_word_boundary_form_finds() -> None:
    written = _if_code("vector-type-operators")
    texts = ["".join(parts) for size in (1, 2, 3) for parts in itertools.product(_PIECES, repeat=size)]
    differ = [t for t in texts if (written.search(t) is None) != (_VECTOR_TYPE.search(t) is None)]
    assert differ == []
    assert [written.search(t) is not None for t in ("float4 a;", "x_float4", "ulonglong2", "uint5", "(char1)")] == [
        True, False, True, False, True]


def test_warp_helper_width_is_searched_per_name_in_lower_case() -> None:
    # the shape `Warp...<..., 32>` of a warp or shuffle helper's width, on the lower-cased code the test reads
    found = [any(p.search(text.lower()) for p in cuda_warp._WARP_SHAPES)
             for text in ("WarpReduce<float, 32>", "SHFL_DOWN<int, 32>", "thread_block_tile<32>",
                          "tiled_partition<32>", "warp_tile<float, 64>", "WarpShape<64, 64>")]
    assert found == [True, True, True, True, False, False]
