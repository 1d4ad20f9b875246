"""Floating-point atomicAdd: the destination is a float/half/bfloat16 by cast, by declaration or by template type;
`paired: true` keeps only the two-lane half / bfloat16 types (__half2, __nv_bfloat162), `false` leaves them out."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.lazyre import lazy_regex
from migrate.matchers import Hit, names_in, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, Function, template_type_parameters

# Found by name (a byte search confirmed on the tree), not by a query: most files have no atomicAdd, and every
# pattern in the query bundle costs every file.
_ATOMIC_ADDS = ("atomicAdd", "atomicAdd_system", "atomicAdd_block", "unsafeAtomicAdd")
_SCALAR_TYPE = r"(?:float|double|half|__half|at::Half|c10::Half|at::BFloat16|c10::BFloat16|__nv_bfloat16" \
               r"|nv_bfloat16|__hip_bfloat16|scalar_t|accscalar_t|acc_t|opmath_t)"
_PAIRED_TYPE = r"(?:__half2|half2|__nv_bfloat162|nv_bfloat162)"
_CASTS = {paired: lazy_regex(rf"(?:<|\()\s*(?:const\s+)?{kind}\s*\*")
          for paired, kind in ((False, _SCALAR_TYPE), (True, _PAIRED_TYPE))}
_BASE = lazy_regex(r"^&?\s*\(?\s*([A-Za-z_]\w*)")
# an element reached through an indexing macro: `&AT4(grad_in, n, c, y, x)`, its first argument the pointer
_MACRO_BASE = lazy_regex(r"^&\s*\(?\s*[A-Z_][A-Z0-9_]*\s*\(\s*([A-Za-z_]\w*)\s*,")

# a pointer of a template type (`T* bottom_diff`) counts as floating point where it holds a gradient (named for one)
# or the file instantiates its templates for floating types; a `T* counts` in a generic histogram stays out
_GRADIENT = lazy_regex(r"(?i)grad|diff")
_FLOAT_DISPATCH = lazy_regex(r"AT_DISPATCH_(?:FLOATING|ALL)_TYPES|<\s*(?:float|double|at::Half|c10::Half|__half|half)\s*>")


_NAMES = frozenset(_ATOMIC_ADDS)


@register("float-atomic", needles=lambda _p: sorted(_NAMES), candidates=lambda _p: names_in(_NAMES),
          identifiers=lambda _p: _NAMES)
def match_float_atomic(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each atomicAdd whose destination is cast to, or declared in its function as, a floating-point pointer."""
    if not isinstance(doc, CudaDocument):
        return
    paired = bool(params.get("paired", False))
    for token in doc.tokens_named(_ATOMIC_ADDS):
        node = doc.root.descendant_for_byte_range(token.start_byte, token.end_byte)
        call = node.parent if node is not None else None
        arguments = call.child_by_field_name("arguments") if call is not None and call.type == "call_expression" else None
        if call is None or arguments is None or arguments.named_child_count == 0 or token.node_type == "macro":
            continue
        dest = doc.node_text(arguments.named_children[0])
        if _CASTS[paired].search(dest) or _declared_float(doc, call.start_byte, dest, paired):
            yield Hit(call.start_point.row + 1, call.start_point.column + 1, symbol=token.name)


def _declared_float(doc: CudaDocument, offset: int, dest: str, paired: bool) -> bool:
    """The pointer the destination indexes is declared with a floating-point type (a paired one if PAIRED) in the
    enclosing function."""
    base = _MACRO_BASE.match(dest) or _BASE.match(dest)
    # the outermost function: a grid-stride macro with a block (`CUDA_KERNEL_LOOP(i, n) { ... }`) parses as a
    # function of its own inside the kernel, and the pointer is declared in the kernel's parameters
    function = doc.outermost_function(offset)
    if base is None or function is None:
        return False
    body = doc.data[function.start_byte : offset].decode("utf-8", "replace")
    name = re.escape(base.group(1))
    # `scalar_t* grad`, `const float* __restrict__ out`, and a reference to a pointer: `scalar_t* &grad_value`
    kind = _PAIRED_TYPE if paired else _SCALAR_TYPE
    if not paired and (_GRADIENT.search(base.group(1)) or _FLOAT_DISPATCH.search(doc.text)):
        kind = "|".join([kind, *map(re.escape, sorted(_type_parameters(doc, function)))])
    pattern = rf"\b(?:{kind})\s*(?:const\s*)?\*\s*(?:const\s+)?(?:__restrict__\s+)?&?\s*{name}\b"
    # or an ATen accessor of that type (`PackedTensorAccessor32<scalar_t, 4, ...> grad`), its element's address
    # taken: `atomicAdd(&grad[n][c][y][x], v)`
    accessor = rf"TensorAccessor(?:32|64)?\s*<\s*(?:{kind})\s*,[^;{{}}()<>]*>\s*(?:const\s+)?(?:__restrict__\s+)?&?\s*{name}\b"
    return re.search(pattern, body) is not None or re.search(accessor, body) is not None


def _type_parameters(doc: CudaDocument, function: Function) -> frozenset[str]:
    """The template type parameters of FUNCTION (`template <typename T>` before it): none for a plain function."""
    node = doc.root.descendant_for_byte_range(function.start_byte, function.end_byte)
    while node is not None and node.type != "template_declaration":
        node = node.parent
    return template_type_parameters(node) if node is not None else frozenset()
