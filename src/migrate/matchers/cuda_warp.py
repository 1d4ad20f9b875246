"""Code that assumes a 32-lane warp; AMD CDNA GPUs run 64-lane wavefronts. One rule per kind of assumption."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import tree_sitter

from migrate.lazyre import lazy_regex
from migrate.matchers import Code, CodeTest, Hit, names_in, register
from migrate.model import FileKind, Severity
from migrate.parse import Document
from migrate.parse.cuda import COMPAT_NAMES_QUERY, MACROS_QUERY, CudaDocument, register_query
from migrate.parse.document import blank_match
from migrate.parse.lexer import is_word_char

Node = tree_sitter.Node
_WARP_SYNC = (
    r"^__(shfl(_up|_down|_xor)?_sync|ballot_sync|any_sync|all_sync|uni_sync|match_(any|all)_sync"
    r"|reduce_(add|min|max|and|or|xor)_sync|syncwarp)$"
)
_WARP_INTRINSIC = (
    r"^__(shfl(_up|_down|_xor)?(_sync)?|ballot(_sync)?|any(_sync)?|all(_sync)?|activemask|syncwarp"
    r"|match_(any|all)_sync|reduce_[a-z]+_sync)$"
)
_BALLOT = r"^__(ballot_sync|ballot|activemask|match_any_sync|match_all_sync)$"
_BIT_COUNT = r"^__(popc|ffs|clz|brev)$"

_MASK_ARGS = f"""
((call_expression function: (identifier) @fn arguments: (argument_list . (_) @mask)) (#match? @fn "{_WARP_SYNC}"))
"""
# an initialised variable, or a class's static member with its value (`static constexpr unsigned kAll = ~0u;`)
_INITS = """
(init_declarator declarator: (identifier) @name value: (_) @value)
(field_declaration declarator: (field_identifier) @name default_value: (_) @value)
"""
_MASK_MACROS = "(preproc_def name: (identifier) @name value: (preproc_arg) @value)"
_BALLOT_DECLS = f"""
(declaration type: (_) @type declarator: (init_declarator declarator: (identifier) @name
  value: [(call_expression function: (identifier) @fn)
          (cast_expression value: (call_expression function: (identifier) @fn))])
  (#match? @fn "{_BALLOT}")) @decl
"""
_BALLOT_ASSIGNS = f"""
(assignment_expression left: (identifier) @name right: (call_expression function: (identifier) @fn)
  (#match? @fn "{_BALLOT}"))
"""
_BIT_COUNTS = f"""
(call_expression function: (identifier) @count arguments: (argument_list . (_) @arg)
  (#match? @count "{_BIT_COUNT}")) @call
"""
# A ballot helper's result declared into a variable (`int vote = utils::ballot(p)`, `unsigned m = WARP_BALLOT(v)`):
# the helper's name ends in ballot (a tile's member `g.ballot(p)` is relative to the tile: see _BALLOT_WRAPPER_CALL)
_WRAPPED_BALLOT_DECLS = """
(declaration type: (_) @type declarator: (init_declarator declarator: (identifier) @name
  value: (call_expression function: [(identifier) (qualified_identifier) (template_function)] @fn))
  (#match? @fn "(^|:)([Ww]arp_?|masked_)?[Bb]allot$|^(WARP_BALLOT|warpBallot|WarpBallot)$")) @decl
"""
# `__activemask() == 0xffffffff`, `__ballot_sync(m, p) != FULL_MASK`: a whole-warp test against 32 lanes
_COMPARED_MASK = r"^__(activemask|ballot_sync|ballot)$"
_MASK_COMPARES = f"""
(binary_expression left: (call_expression function: (identifier) @fn) operator: ["==" "!="] right: (_) @value
  (#match? @fn "{_COMPARED_MASK}")) @cmp
(binary_expression left: (_) @value operator: ["==" "!="] right: (call_expression function: (identifier) @fn)
  (#match? @fn "{_COMPARED_MASK}")) @cmp
"""
_BALLOT_RETURNS = f"""
(return_statement (call_expression function: (identifier) @fn) @call (#match? @fn "{_BALLOT}"))
"""
_LANE_MATHS = """
(binary_expression left: (_) @lhs operator: ["&" "%" ">>" "/" "*"] @op right: (number_literal) @rhs
  (#match? @rhs "^(31|0[xX]1[fF]|32|5)[uUlL]*$|^32\\.0*[fF]?$")) @expr
(binary_expression left: (number_literal) @rhs operator: ["&" "*"] @op right: (_) @lhs
  (#match? @rhs "^(31|0[xX]1[fF]|32)[uUlL]*$")) @expr
(binary_expression left: (_) @lhs operator: "&" @op
  right: (unary_expression operator: "~" argument: (number_literal) @rhs)
  (#match? @rhs "^(31|0[xX]1[fF])[uUlL]*$")) @expr
(binary_expression left: (_) @lhs operator: "&" @op right: (parenthesized_expression) @rhs
  (#match? @rhs "^[(] *32 *- *1 *[)]$")) @expr
(binary_expression left: (number_literal) @one operator: "<<" right: (_) @lhs (#match? @one "^1[uU]?$")) @bit
(binary_expression left: (_) @lhs operator: [">>" "<<"] right: (parenthesized_expression) @shift
  (#match? @shift "^[(] *3[12] *-")) @width
(binary_expression left: (identifier) @lhs operator: ["==" "!="] right: [(number_literal) (binary_expression)] @last
  (#match? @lhs "[Ll]ane") (#match? @last "^(31|32 *- *1)$")) @cmp
"""
_WARP_WORD = '(#match? @name "[Ww][Aa][Rr][Pp]")'
_SIZE_DEFINITIONS = f"""
((preproc_def name: (identifier) @name value: (preproc_arg) @value) {_WARP_WORD})
((init_declarator declarator: (identifier) @name value: (_) @value) {_WARP_WORD})
((enumerator name: (identifier) @name value: (_) @value) {_WARP_WORD})
((field_declaration declarator: (field_identifier) @name default_value: (_) @value) {_WARP_WORD})
((optional_parameter_declaration declarator: (identifier) @name default_value: (_) @value) {_WARP_WORD})
"""
# `#define WS 32 // warp size`: the short name of the warp size in recursive-filter, compression, ANN-search and
# OptiX-toolkit CUDA code; a 32 named WS in a C file with no device code (a whitespace character) is not it
_SHORT_SIZE_DEFINITION = """
((preproc_def name: (identifier) @name value: (preproc_arg) @value) (#eq? @name "WS"))
"""
_DEVICE_CODE = lazy_regex(r"__(?:global|device)__|__CUDACC__|\bthreadIdx\b|\b__shfl\w*|cuda_runtime|<cuda\.h>")
# `constexpr int warp_size() { return 32; }`, `WarpFullMask() { return 0xffffffffu; }`: a function whose whole body
# returns one value, the accessor form of a warp-size or lane-mask constant (RAFT, QUDA, XLA, XGBoost)
_RETURNING = """
(function_definition declarator: (function_declarator declarator: (_) @name)
  body: (compound_statement . (return_statement (_) @value) .))
"""
_SIZE_FUNCTIONS = f"({_RETURNING.strip()} {_WARP_WORD})"
_INTRINSIC_CALLS = f'(call_expression function: (identifier) @fn (#match? @fn "{_WARP_INTRINSIC}"))'
_CALLS = "(call_expression function: [(identifier) @callee (template_function name: (identifier) @callee)])"
_FUNCTION_NAMES = "(function_definition declarator: (function_declarator declarator: (_) @name)) @fn"
_SHARED_ARRAYS = """
(declaration declarator: (array_declarator declarator: (identifier) size: (number_literal) @size
  (#match? @size "^32[uU]?$"))) @decl
"""
_LOOPS = "(for_statement) @loop"
# `if (tid < 32)`, `blockSize > 32`, `x[tid + 32]`, `blockSize >= 64`: the warp-synchronous tail of a block reduction
# any operator, _warp_tail keeps _TAIL_OPERATORS: an alternation of them doubles the query's compile (12 ms, not 6)
_WARP_TAILS = """
(binary_expression left: (_) @lhs operator: _ @op right: (number_literal) @rhs (#match? @rhs "^(32|64)[uU]?$")) @tail
"""
_TAIL_OPERATORS = frozenset({"<", "<=", ">", ">=", "+"})
# a volatile local or shared variable: pre-Volta warp-synchronous code (the last warp of a block reduction) exchanges
# values through volatile shared memory with no barrier, trusting the warp's 32 lanes to run in lockstep
_VOLATILE_DECLARATIONS = """
(declaration (type_qualifier) @q (#eq? @q "volatile")) @decl
"""
_FIXED_WIDTHS = """
(call_expression function: (identifier) @fn arguments: (argument_list (_) (_) (_) . (number_literal) @width .)
  (#match? @fn "^__shfl(_up|_down|_xor)?_sync$") (#match? @width "^32[uU]?$"))
(call_expression function: (identifier) @fn arguments: (argument_list (_) (_) . (number_literal) @width .)
  (#match? @fn "^__shfl(_up|_down|_xor)?$") (#match? @width "^32[uU]?$"))
(template_function name: (identifier) @fn arguments: (template_argument_list (number_literal) @width)
  (#eq? @fn "tiled_partition") (#match? @width "^32[uU]?$"))
(template_type name: (type_identifier) @fn arguments: (template_argument_list (number_literal) @width)
  (#eq? @fn "thread_block_tile") (#match? @width "^32[uU]?$"))
(template_function name: (identifier) @fn arguments: (template_argument_list (number_literal) @width)
  (#match? @fn "[Ww]arp|WARP|[Ss]hfl|SHFL") (#match? @width "^32[uU]?$"))
"""
# The last pattern: a warp helper told its width by a literal, `warpReduceSum<32>(v)`, `warp_reduce_max<32>(v)`
# (VPTQ's port made it WARP_SIZE, #63); _literal_sizes keeps the calls of names _warp_helper_name takes for a warp's
_FIXED_WIDTH_INTRINSICS = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__shfl",
                                     "__shfl_up", "__shfl_down", "__shfl_xor", "tiled_partition", "thread_block_tile"})
_WARP_BLOCKS = """
(declaration type: (type_identifier) @type declarator: (init_declarator
  value: [(argument_list . (number_literal) @x) (initializer_list . (number_literal) @x)])
  (#eq? @type "dim3") (#match? @x "^32[uU]?$"))
(kernel_call_syntax . (_) . (number_literal) @x (#match? @x "^32[uU]?$"))
(launch_bounds . (number_literal) @x (#match? @x "^32[uU]?$"))
(launch_bounds . [(binary_expression left: (number_literal) @x operator: "*")
                  (binary_expression operator: "*" right: (number_literal) @x)] (#match? @x "^32[uU]?$"))
(kernel_call_syntax . (_) . [(binary_expression left: (number_literal) @x operator: "*")
                             (binary_expression operator: "*" right: (number_literal) @x)] (#match? @x "^32[uU]?$"))
"""
# `const int ntx = 32; ... dim3 nthrs(ntx, nty);`: the block's width through a name the file binds to 32
# (`dim3 block(kWidth, kRows);` with names only parses as a function declaration: its "parameter types" are the names)
_NAMED_BLOCKS = """
(declaration type: (type_identifier) @type declarator: (init_declarator
  value: [(argument_list . (identifier) @x) (initializer_list . (identifier) @x)])
  (#eq? @type "dim3"))
(declaration type: (type_identifier) @type declarator: (function_declarator
  parameters: (parameter_list . (parameter_declaration type: (type_identifier) @x)))
  (#eq? @type "dim3"))
"""
# the last two: a block of whole 32-lane warps (`__launch_bounds__(32 * NWARPS)`, `<<<grid, NWARPS * 32>>>`)
# `block_size = std::max(block_size, static_cast<uint64_t>(32))`, `int block_x = max(32, ...)`: at least one warp
_WARP_FLOORS = """
(call_expression function: [(identifier) @fn (qualified_identifier name: (identifier) @fn)
                            (template_function name: (identifier) @fn)
                            (qualified_identifier name: (template_function name: (identifier) @fn))]
  arguments: (argument_list) @args (#eq? @fn "max")) @floor
"""
_MASK_PARAMETERS = "(optional_parameter_declaration declarator: (identifier) @name default_value: (_) @value)"
_WARP_MATRIX = """
((namespace_identifier) @op (#eq? @op "wmma"))
((identifier) @op (#match? @op "^(load_matrix|store_matrix|mma)_sync$"))
"""
_TYPED_NAMES = """
(parameter_declaration type: (_) @type declarator: (identifier) @name)
(optional_parameter_declaration type: (_) @type declarator: (identifier) @name default_value: (_) @value)
(declaration type: (_) @type declarator: [(identifier) @name (init_declarator declarator: (identifier) @name)])
(field_declaration type: (_) @type declarator: (field_identifier) @name)
"""

_FULL_MASK = lazy_regex(
    r"^(?:0x0*[fF]{8}[uUlL]*|4294967295[uUlL]*|~0[uU]|~0x0+[uU]"
    r"|\((?:unsigned|unsignedint|uint32_t|std::uint32_t|uint)\)-1"
    r"|(?:unsigned|uint32_t|std::uint32_t|uint)\(-1\)"
    r"|static_cast<(?:unsigned|unsignedint|uint32_t|std::uint32_t)>\(-1\)"
    r"|~(?:unsigned|uint32_t|std::uint32_t)\(0\))$"
)
_WARP_HELPER = lazy_regex(r"warp|shfl|shuffle", re.I)
# Shuffles that are not a warp's: SIMD intrinsics on the CPU (`_mm_shuffle_ps`, `_mm256_shuffle_epi8`,
# `__builtin_shufflevector`, `wasm_i8x16_shuffle`) and host algorithms (`std::shuffle`, `thrust::shuffle`)
_NOT_WARP_SHUFFLE = lazy_regex(r"(?:_mm\d*_|__builtin_|wasm_\w+_|(?:std|thrust)::(?:random_)?)$", re.I)
# Names with "warp" that are not a warp's lanes: a GEMM's warp tile (sgemmWarptiling, WarpTileIterator: a logical
# group of threads indexed by arithmetic alone) and image warping (cv::warpAffine, warp_perspective, warped)
_NOT_WARP_HELPER = lazy_regex(r"warp_?(?:til|affine|perspective|image|ed)", re.I)
_SHUFFLE_WORD = lazy_regex(r"shfl|shuffle", re.I)


def _warp_helper_name(name: str) -> bool:
    """NAME is named for warps or lane shuffles (warp_reduce_sum, WARP_SHFL_XOR), not for a CPU or host shuffle,
    a GEMM's warp tile (sgemmWarptiling, warp_tile_m) or an image warp (warpAffine, warp_perspective)."""
    found = _WARP_HELPER.search(name)
    if found is None or _NOT_WARP_SHUFFLE.search(name, 0, found.start()):
        return False
    return not _NOT_WARP_HELPER.search(name) or _SHUFFLE_WORD.search(name) is not None

# A shuffle's mask macro (`#define SHFL_MASK 0xffffffff`, defined in one kernel header and used by the reduction
# helpers a sibling .cu file includes: fairseq's lightconv/dynamicconv, k-means and kNN kernels) is judged by name
# only when spelled as a constant: a lower-case shfl_mask is a variable or a helper that computes a partial mask.
_MASK_NAME = lazy_regex(r"^(?:(?i:k_?)?(?i:full|final|all|warp)_?(?i:lanes?_?|warp_?)?(?i:mask)|(?:SHFL|SHUFFLE)_?MASK)$")
# A definition may carry a project prefix (`#define BNB_FULL_WARP_MASK 0xffffffffull`); a use is judged by the
# name alone only without one (a prefixed macro is usually defined per platform in a header).
_DEFINED_MASK_NAME = lazy_regex(r"^(?:[a-z0-9]+_)?(?:k_?)?(?:full|final|all|warp|shfl|shuffle)_?(?:lanes?_?|warp_?)?mask$",
                                re.I)
# an accessor function named for the warp's lanes (warp_full_mask()); not shfl_mask(n), which computes a partial mask
_ACCESSOR_MASK_NAME = lazy_regex(r"^(?:[a-z0-9]+_)?(?:k_?)?(?:full|final|all|warp)_?(?:lanes?_?|warp_?)?mask$", re.I)
_SIZE_NAME = lazy_regex(r"warp(?:size|sz|width|threads|lanes|len)|(?:threads|lanes)(?:per|in)warp|^k?warp$", re.I)
_LOG_SIZE_NAME = lazy_regex(r"log_?warp|warp_?log|lg_?warp|warp_?(?:shift|bits)$", re.I)
# the lane mask of a 32-lane warp (`constexpr unsigned kHistogramWarpMask = 31u`, `#define WARP_MASK 0x1f`): the
# lane id is `tid & kWarpMask`; a full-warp mask is 0xffffffff and has rules of its own
_LANE_MASK_NAME = lazy_regex(r"warp_?(?:lane_?)?mask$", re.I)
_THIRTY_ONE = lazy_regex(r"^\(?\s*(?:31|0[xX]1[fF])[uUlL]*\s*\)?$")
# `Value warpSize = i32_val(32)`, `int32_t(32)`: a compiler's or a cast's one-argument wrapper of the literal
_MADE_OF_32 = lazy_regex(r"^[A-Za-z_][\w:.<>]{0,40}\s*\(\s*(?:32|0x20)[uUlL]*\s*\)$")
# `constexpr int kWarpSize = std::min(kNThreads, 32)`: a block of up to one warp, the warp fixed at 32 lanes
_CAPPED_AT_32 = lazy_regex(r"^(?:std::|cuda::std::)?min\s*(?:<\s*\w+\s*>)?\s*\(\s*(?:[\w:.]+\s*,\s*(?:32|0x20)[uUlL]*"
                           r"|(?:32|0x20)[uUlL]*\s*,\s*[\w:.]+)\s*\)$")
# `int warp_size = (next_power_of_two < 32) ? next_power_of_two : 32` (PyTorch's softmax launch shape, copied into
# apex and many fused-softmax kernels with the literal): the same cap spelled as a conditional
_TERNARY_AT_32 = lazy_regex(r"^\(?\s*([\w:.]+)\s*<=?\s*(?:32|0x20)[uUlL]*\s*\)?\s*\?\s*\(?\s*\1\s*\)?\s*:\s*(?:32|0x20)[uUlL]*$"
                            r"|^\(?\s*([\w:.]+)\s*>=?\s*(?:32|0x20)[uUlL]*\s*\)?\s*\?\s*(?:32|0x20)[uUlL]*\s*:\s*\(?\s*\2\s*\)?$")
_FIVE = lazy_regex(r"^\(?\s*5[uUlL]*\s*\)?$")
_THIRTY_TWO = lazy_regex(r"^\(?\s*(?:32|0x20)[uUlL]*\s*\)?$")
_NARROW_TYPE = lazy_regex(r"^(?:(?:std::)?u?int32_t|__uint32_t|unsigned|unsigned int|signed|signed int|int|uint|u32|U32"
                          r"|uint32|UInt32|unsigned_int)$")
# an int or unsigned literal: 32 bits; `-1` and `~0` too (ints: all lanes once widened, but HIP's static_assert
# wants a 64-bit type, so `__shfl_xor_sync(~0, v, 16)` does not compile; `~0ull`, `-1ll` are 64-bit)
_NARROW_LITERAL = lazy_regex(r"^\(?(?:(?:0[xX][0-9a-fA-F]+|\d+)[uU]?|-1|~0)\)?$")
_THREAD_BUILTIN = lazy_regex(r"\b(?:threadIdx|blockDim|thread_rank)\b")
_THREAD_NAME = lazy_regex(
    r"^(?:tid|tidx|ltid|tx|lane|laneid|laneId|LaneId|lane_id|laneIdx|lane_idx|lane_index|thread_id|threadId|thread_idx"
    r"|local_tid|local_id|linear_tid|thread_rank|thread_lane|warp_tid)$"
)
_LANE_LITERALS = {"&": ("31", "0x1f", "32-1"), "%": ("32",), ">>": ("5",), "/": ("32", "32.", "32.0", "32.f", "32.0f"),
                  "*": ("32",)}
# kNThreads / 32, blockSize / 32: a warp count; warp_id * 32: a warp's first lane; lane_idx = i & 31: a lane.
_THREAD_COUNT = lazy_regex(
    r"^(?:k_?)?(?:n_?|num_?|active_?|block_?|max_?)?threads(?:_?(?:per|in)_?(?:block|cta|tb|group|wg))?$"
    r"|^(?:k_?)?(?:max_?)?(?:block|cta)_?(?:size|dim|threads)(?:_?x)?$", re.I
)
_LAUNCH_CALLS = ("cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cuLaunchKernel", "cuLaunchCooperativeKernel")
_BLOCK_WIDTH = lazy_regex(r"^(?:k_?)?(?:block|cta|tb)_?(?:size|dim|threads|x|width)(?:_?x)?$|^(?:n_?|num_?)?threads$", re.I)
_LITERAL_32 = lazy_regex(r"^\(*(?:static_cast<[\w:\s]+>\(|\([\w:\s]+\)|[\w:]+\()?32[uUlL]*\)*$")
_WARP_INDEX = lazy_regex(r"^(?:warp_?(?:id|idx|index|no|num)?|wid|warpid)$", re.I)
# a block's warp count (kNWarps, num_warps, WARPS, warps_per_block, warp_count): times 32 it is the block's threads
_WARP_COUNT = lazy_regex(r"^(?:k_?)?(?:n_?|num_?)?warps(?:_?(?:per|in)_?(?:block|cta|tb|group))?$|^warp_?count$", re.I)
_TARGETS = {"&": lazy_regex("lane", re.I), "%": lazy_regex("lane", re.I), ">>": lazy_regex("warp", re.I),
            "/": lazy_regex("warp", re.I), "*": lazy_regex("lane|warp", re.I)}
_CONST_CONTEXTS = frozenset(
    {"template_argument_list", "static_assert_declaration", "enumerator", "case_statement", "bitfield_clause",
     "launch_bounds", "template_parameter_list", "preproc_if", "preproc_elif"}
)
_STOP = frozenset(
    {"compound_statement", "function_definition", "parameter_list", "translation_unit", "expression_statement",
     "return_statement", "if_statement", "for_statement", "while_statement", "argument_list"}
)


def _span(node: Node, **extra: Any) -> Hit:
    return Hit(node.start_point.row + 1, node.start_point.column + 1, **extra)


def _normal(text: str) -> str:
    """Code text without blanks, C++14 digit separators (`0xffff'ffffu`) or redundant outer parentheses, for
    comparing literal forms."""
    text = re.sub(r"\s+", "", text)
    if "'" in text:
        text = _DIGIT_SEPARATOR.sub("", text)
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


# A digit separator: a quote between two digits of a number (`0xffff'ffff`, `1'000`); a character literal's quote
# has no digit on both sides (`'a'`, `c == '0'` has `=` or `(` before it).
_DIGIT_SEPARATOR = lazy_regex(r"(?<=[0-9a-fA-F])'(?=[0-9a-fA-F])")


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _constants(doc: CudaDocument) -> dict[str, str]:
    """Names the file binds to a value: object-like macros and initialised variables."""
    found = {name: value for name, value in doc.macros.items()}
    for groups in doc.matches(_INITS):
        found.setdefault(doc.node_text(groups["name"][0]), doc.node_text(groups["value"][0]))
    return found


# A name reached through its namespace or class (`detail::kFullWarpMask`, `consts::allActive`, `::FULL_MASK`)
_QUALIFIED = lazy_regex(r"(?:::)?(?:[A-Za-z_]\w*::)+([A-Za-z_]\w*)")


def _unqualified(value: str) -> str:
    """VALUE less its namespace or class qualification: the name the constant's own definition binds."""
    qualified = _QUALIFIED.fullmatch(value) if ":" in value else None
    return qualified.group(1) if qualified else value


def _is_full_mask(text: str, constants: dict[str, str], depth: int = 0) -> bool:
    """A 32-bit all-lanes mask: a literal form, or a name bound to one (or named like one, when unbound); a name
    may come through its namespace (`detail::FULL_MASK`), bound by the definition inside that namespace."""
    value = _normal(text)
    if _FULL_MASK.match(value):
        return True
    value = _unqualified(value)
    if not re.fullmatch(r"[A-Za-z_]\w*", value) or depth > 3:
        return False
    if value in constants:
        return _is_full_mask(constants[value], constants, depth + 1)
    return bool(_MASK_NAME.match(value))


def _full_masks(doc: CudaDocument) -> Iterator[Hit]:
    constants: dict[str, str] | None = None
    returns: dict[str, set[str]] = {}  # filled on the first accessor call: what this file's accessors return
    used: dict[str, bool] = {}  # the names passed as masks: whether any use is outside a HIP-guarded #if block
    in_functions: dict[tuple[int, str], bool] = {}  # the same per (function, name), for parameters
    for groups in doc.matches(_MASK_ARGS):
        mask = groups["mask"][0]
        if doc.node_text(groups["fn"][0]) in doc.compat_names:
            continue
        constants = _constants(doc) if constants is None else constants
        name = _unqualified(_normal(doc.node_text(mask)))
        open_use = not doc.is_guarded(doc.point(mask.start_byte)[0])
        used[name] = used.get(name, False) or open_use
        if (function := doc.enclosing_function(mask.start_byte)) is not None:
            key = (function.start_byte, name)
            in_functions[key] = in_functions.get(key, False) or open_use
        if _is_full_mask(doc.node_text(mask), constants) or _full_mask_call(doc, name, returns):
            yield _span(mask, symbol=doc.node_text(groups["fn"][0]))
    yield from _mask_definitions(doc, used)
    for groups in doc.matches(_MASK_PARAMETERS):
        value, name = groups["value"][0], doc.node_text(groups["name"][0])
        if "mask" in name.lower() and _FULL_MASK.match(_normal(doc.node_text(value))):
            function = doc.enclosing_function(value.start_byte)
            # `unsigned mask = 0xffffffff` of a wrapper whose ROCm branch calls the mask-free __shfl_xor: CUDA's only
            if function is None or in_functions.get((function.start_byte, name)) is not False:
                yield _span(value)


def _full_compares(doc: CudaDocument) -> Iterator[Hit]:
    """`__activemask() == 0xffffffff` (or a ballot against FULL_MASK): HIP returns 64 lanes, so a full wavefront
    never equals the 32-bit value and the check fails (an assert) or its branch is never taken."""
    constants: dict[str, str] | None = None
    for groups in doc.matches(_MASK_COMPARES):
        constants = _constants(doc) if constants is None else constants
        if _is_full_mask(doc.node_text(groups["value"][0]), constants):
            yield _span(groups["cmp"][0], symbol=doc.node_text(groups["fn"][0]))


def _narrow_masks(doc: CudaDocument) -> Iterator[Hit]:
    """A mask a warp sync call gets in 32 bits (a variable declared `unsigned`/`uint32_t`/`U32`, or an int literal)
    that is not an all-lanes value (full-mask reports those): HIP's *_sync builtins static_assert a 64-bit mask."""
    declared: dict[str, list[tuple[int, int | None, str]]] | None = None
    constants: dict[str, str] = {}
    reported: set[int] = set()
    for groups in doc.matches(_MASK_ARGS):
        mask, function = groups["mask"][0], doc.node_text(groups["fn"][0])
        if function in doc.compat_names:
            continue
        if declared is None:
            declared, constants = _declarations(doc), _constants(doc)
        text = _normal(doc.node_text(mask))
        if _is_full_mask(text, constants):
            continue
        if _NARROW_LITERAL.match(text):
            yield _span(mask, symbol=function)
            continue
        where = _narrow_name(doc, declared, text, mask) if re.fullmatch(r"[A-Za-z_]\w*", text) else None
        if where is None:
            continue
        yield _span(mask, symbol=function)
        # the declaration is the line that widens the mask (`uint32_t m = (1u << n) - 1;`), unless this use is in
        # the CUDA branch of a HIP-guarded #if (a wrapper whose ROCm branch calls the mask-free __shfl)
        if where not in reported and not doc.is_guarded(doc.point(mask.start_byte)[0]):
            reported.add(where)
            line, column = doc.point(where)
            yield Hit(line, column, symbol=function)


def _narrow_name(doc: CudaDocument, declared: dict[str, list[tuple[int, int | None, str]]], name: str,
                 use: Node) -> int | None:
    """Where NAME, as seen at USE, is declared with a 32-bit type (the last declaration before it in its function,
    else the first of those outside functions; a parameter with an all-lanes default is full-mask's), or None."""
    function = doc.enclosing_function(use.start_byte)
    scope = function.start_byte if function else None
    places = declared.get(name, [])
    local = [(start, t) for start, owner, t in places if owner == scope and start < use.start_byte and scope is not None]
    chosen = local[-1:] or [(start, t) for start, owner, t in places if owner is None]
    if not chosen or not all(_NARROW_TYPE.match(t) for _, t in chosen):
        return None
    return chosen[0][0]


def _declarations(doc: CudaDocument) -> dict[str, list[tuple[int, int | None, str]]]:
    """Per name, its declarations in the file: (where, the enclosing function's start or None, the type)."""
    found: dict[str, list[tuple[int, int | None, str]]] = {}
    for groups in doc.matches(_TYPED_NAMES):
        node = groups["name"][0]
        function = doc.enclosing_function(node.start_byte)
        kind = " ".join(doc.node_text(groups["type"][0]).split())
        if "value" in groups and _FULL_MASK.match(_normal(doc.node_text(groups["value"][0]))):
            kind = "all-lanes default"  # `unsigned mask = 0xffffffff`: full-mask reports the default
        found.setdefault(doc.node_text(node), []).append((node.start_byte, function.start_byte if function else None, kind))
    return found


def _mask_definitions(doc: CudaDocument, used: dict[str, bool]) -> Iterator[Hit]:
    """`#define FULL_MASK 0xffffffff`, `unsigned mask = ~0u;`, `constexpr unsigned WarpFullMask() { return ~0u; }`:
    the one line to widen, when passed as a warp mask; not one whose every use sits in the CUDA branch of a HIP-guarded
    #if (TensorFlow-style kernels: the ROCm branch calls the mask-free __shfl, so the definition serves CUDA only)."""
    for groups in (*doc.matches(_MASK_MACROS), *doc.matches(_INITS)):
        name = doc.node_text(groups["name"][0])
        if used.get(name) is False:
            continue
        if (name in used or _DEFINED_MASK_NAME.match(name)) and _FULL_MASK.match(_normal(doc.node_text(groups["value"][0]))):
            yield _span(groups["name"][0], symbol=name)
    for groups in doc.matches(_RETURNING):
        name = doc.node_text(groups["name"][0]).rpartition("::")[2]
        if _mask_function(name) and _FULL_MASK.match(_normal(doc.node_text(groups["value"][0]))):
            yield _span(groups["name"][0], symbol=name)


# `dh::WarpFullMask()`, `raft::warp_full_mask()`: a call of an accessor without arguments
_ACCESSOR_CALL = lazy_regex(r"^(?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)\(\)$")


def _full_mask_call(doc: CudaDocument, value: str, returns: dict[str, set[str]]) -> bool:
    """A warp-mask accessor called as the mask (`__shfl_sync(WarpFullMask(), v, 0)`): all lanes of a 32-lane warp,
    unless this file defines it to return something else (a 64-bit mask chosen per platform)."""
    call = _ACCESSOR_CALL.match(value)
    if call is None or not _mask_function(call.group(1)):
        return False
    if not returns:
        returns[""] = set()  # asked once per file
        for groups in doc.matches(_RETURNING):
            name = doc.node_text(groups["name"][0]).rpartition("::")[2]
            returns.setdefault(name, set()).add(_normal(doc.node_text(groups["value"][0])))
    values = returns.get(call.group(1))
    return values is None or all(_FULL_MASK.match(v) for v in values)


def _mask_function(name: str) -> bool:
    """A function named for a warp's lane mask (warp_full_mask, WarpFullMask, warp_converged_mask), not any mask."""
    lower = name.lower()
    return bool(_ACCESSOR_MASK_NAME.match(name)) or "warp" in lower and lower.endswith("mask")


def _ballot_widths(doc: CudaDocument) -> Iterator[Hit]:
    ballots: set[str] = set()
    for groups in doc.matches(_BALLOT_DECLS):
        ballots.add(doc.node_text(groups["name"][0]))
        if _NARROW_TYPE.match(" ".join(doc.node_text(groups["type"][0]).split())):
            yield _span(groups["decl"][0], symbol=doc.node_text(groups["fn"][0]))
    if _BALLOT_WRAPPER_CALL.search(doc.text):
        for groups in doc.matches(_WRAPPED_BALLOT_DECLS):
            ballots.add(doc.node_text(groups["name"][0]))
            if _NARROW_TYPE.match(" ".join(doc.node_text(groups["type"][0]).split())):
                yield _span(groups["decl"][0], symbol=doc.node_text(groups["fn"][0]).rsplit(":", 1)[-1].rsplit(".", 1)[-1])
    assigns = doc.matches(_BALLOT_ASSIGNS)
    declared = _declarations(doc) if assigns else {}
    for groups in assigns:  # `mask = __ballot_sync(...)` into a name declared 32-bit (`uint32_t mask;`, a field)
        node = groups["name"][0]
        ballots.add(doc.node_text(node))
        if _narrow_name(doc, declared, doc.node_text(node), node) is not None:
            yield _span(node, symbol=doc.node_text(groups["fn"][0]))
    for groups in doc.matches(_BALLOT_RETURNS):
        wrapper = _narrow_wrapper(doc, groups["call"][0].start_byte)
        if wrapper:
            ballots.add(wrapper)
            yield _span(groups["call"][0], symbol=doc.node_text(groups["fn"][0]))
    for groups in doc.matches(_BIT_COUNTS):
        argument = doc.node_text(groups["arg"][0])
        words = set(re.findall(r"[A-Za-z_]\w*", argument))
        if words & ballots or any(re.match(_BALLOT, w) for w in words) or _BALLOT_WRAPPER_CALL.search(argument):
            yield _span(groups["call"][0], symbol=doc.node_text(groups["count"][0]))


# A call of a ballot wrapper (`utils::ballot(p)`, `WARP_BALLOT(v, mask)`, `warp_ballot(v)`): it hands on the
# wavefront's 64-bit mask (or, declared 32-bit, has already dropped half of it). Not a member call: a cooperative
# group tile's `g.ballot(p)` is relative to the tile (HIP shifts it), and CUDA code has no tile wider than 32.
_BALLOT_WRAPPER_CALL = lazy_regex(r"(?<![\w.>])(?:warp_?|masked_?)?ballot\s*(?:<[^<>;()]*>\s*)?\(", re.I)
# The words before a function's name that are not its return type: storage, CUDA execution space, inlining.
_FUNCTION_QUALIFIERS = frozenset({
    "static", "inline", "extern", "constexpr", "virtual", "explicit", "friend", "__device__", "__host__",
    "__forceinline__", "__inline__", "__noinline__", "__global__",
})
_FUNCTION_HEAD = lazy_regex(r"^([^(){};]*?)\b([A-Za-z_]\w*)\s*\(")


def _narrow_wrapper(doc: CudaDocument, offset: int) -> str:
    """The name of the function around OFFSET when its declared return type is a 32-bit integer (a ballot
    wrapper `unsigned int ballot(int p) { return __ballot_sync(m, p); }` narrows HIP's 64-bit mask at the
    return); "" otherwise (no function, a lambda, a 64-bit or deduced return type)."""
    function = doc.enclosing_function(offset)
    if function is None:
        return ""
    head = _FUNCTION_HEAD.match(doc.data[function.start_byte : function.start_byte + 300].decode("utf-8", "replace"))
    if head is None:
        return ""
    words = [w for w in head.group(1).split()
             if w not in _FUNCTION_QUALIFIERS and (_NARROW_TYPE.match(w) or not _MACRO_WORD.fullmatch(w))]
    return head.group(2) if words and _NARROW_TYPE.match(" ".join(words)) else ""


_MACRO_WORD = lazy_regex(r"_*[A-Z][A-Z0-9_]{2,}")  # SR_SDF unsigned f(...), AMGX_DEVICE int g(...): a qualifier macro


def _thread_names(doc: CudaDocument) -> set[str]:
    """Variables holding a thread's index within its block (not a global index)."""
    names = set()
    for groups in doc.matches(_INITS):
        value = doc.node_text(groups["value"][0])
        if _THREAD_BUILTIN.search(value) and "blockIdx" not in value:
            names.add(doc.node_text(groups["name"][0]))
    return names


def _lane_maths(doc: CudaDocument) -> Iterator[Hit]:
    local: set[str] | None = None
    for groups in doc.matches(_LANE_MATHS):
        if "cmp" in groups:  # `lane_idx == 32 - 1`: the last lane of a 32-lane warp
            if doc.in_device_code(groups["cmp"][0].start_byte):
                yield _span(groups["cmp"][0])
            continue
        if "bit" in groups or "width" in groups:
            if _lane_bits(doc, groups):
                yield _span((groups.get("bit") or groups["width"])[0])
            continue
        op, literal = doc.node_text(groups["op"][0]), _normal(doc.node_text(groups["rhs"][0])).lower()
        literal = literal if "." in literal or "-" in literal else literal.rstrip("ul")
        if literal not in _LANE_LITERALS.get(op, ()):
            continue
        expr, lhs = groups["expr"][0], doc.node_text(groups["lhs"][0])
        local = _thread_names(doc) if local is None else local
        if _is_lane_math(doc, expr, op, lhs, local):
            yield _span(expr)


def _is_lane_math(doc: CudaDocument, expr: Node, op: str, lhs: str, local: set[str]) -> bool:
    """Lane or warp arithmetic: on a thread index, a block's thread count, a warp index, or named for a lane."""
    words = set(re.findall(r"[A-Za-z_]\w*", lhs))
    if not words:  # `32 * 8 / 32`: constant folding, whatever it is assigned to
        return False
    if op == "*":
        thread_row = re.search(r"\bthreadIdx\s*\.\s*[yz]\b", lhs) is not None
        warp_words = any(_WARP_INDEX.match(w) or _WARP_COUNT.match(w) for w in words)
        return thread_row or warp_words or _target_named(doc, expr, op)
    if _THREAD_BUILTIN.search(lhs):
        return True
    if op in ("/", ">>") and any(_THREAD_COUNT.match(w) for w in words) and _device_file(doc):
        return True
    if any(_THREAD_NAME.match(w) or w in local for w in words) and doc.in_device_code(expr.start_byte):
        return True
    return _target_named(doc, expr, op)


def _device_file(doc: CudaDocument) -> bool:
    """A .cu/.cuh file, one that defines device code, or one that launches kernels (a host header that sizes a
    kernel's shared memory by its warps: `THREADS_PER_CTA / 32`)."""
    if doc.source.kind == FileKind.CUDA or any(f.is_device for f in doc.functions):
        return True
    return bool(doc.lexed_for(frozenset()).launches) or bool(doc.tokens_named(_LAUNCH_CALLS))


def _target_named(doc: CudaDocument, expr: Node, op: str) -> bool:
    """`int lane_idx = row & 31;`, `warp_id = i >> 5`: the variable the result goes to names a lane or warp."""
    target = _assigned_to(expr)
    return target is not None and _TARGETS[op].search(doc.node_text(target)) is not None and doc.in_device_code(
        expr.start_byte)


def _assigned_to(expr: Node) -> Node | None:
    """The variable or field the value of EXPR (or of the expression around it) is assigned or initialised to."""
    child, parent = expr, expr.parent
    while parent is not None and parent.type not in _STOP:
        if parent.type == "init_declarator" and parent.child_by_field_name("value") == child:
            return parent.child_by_field_name("declarator")
        if parent.type == "assignment_expression" and parent.child_by_field_name("right") == child:
            return parent.child_by_field_name("left")
        if parent.type == "field_initializer":
            return parent.children[0]
        child, parent = parent, parent.parent
    return None


def _lane_bits(doc: CudaDocument, groups: dict[str, list[Node]]) -> bool:
    """`1 << lane` (a 32-bit lane bit) and `mask >> (32 - width)` (a 32-lane sub-mask), in device code."""
    node = (groups.get("bit") or groups["width"])[0]
    if not doc.in_device_code(node.start_byte):
        return False
    lhs = doc.node_text(groups["lhs"][0])
    if "bit" in groups:  # only a lane: `1u << tid` may be a block-wide bitmap, `1u << signXo` a sign bit
        return re.search(r"\bthreadIdx\s*\.\s*x\b|[Ll]ane", lhs) is not None
    # `~0u << (32 - bits)` is bit packing; a mask, a lane, a thread index or a warp-sized shift is lanes.
    # `0xffffffff >> (31 - lane)`, `0xFFFFFFFF >> (32 - laneId())`: the lanes at or below (below) this one, a
    # prefix mask of a 32-lane warp (31 only with a lane in the shift: `x >> (31 - i)` is a bit's extraction)
    shift = doc.node_text(groups["shift"][0])
    lane_shift = re.search(r"[Ll]ane|threadIdx", shift) is not None
    if re.match(r"\(\s*31", shift):
        return lane_shift
    return (re.search(r"mask|[Ll]ane|threadIdx", lhs) is not None or lane_shift
            or re.search(r"warp", shift, re.I) is not None)


def _size_constants(doc: CudaDocument) -> Iterator[Hit]:
    if doc.source.kind is FileKind.CUDA or _DEVICE_CODE.search(doc.text):
        for groups in doc.matches(_SHORT_SIZE_DEFINITION):
            if _THIRTY_TWO.match(doc.node_text(groups["value"][0]).strip()):
                yield _span(groups["name"][0], symbol="WS")
    for groups in (*doc.matches(_SIZE_DEFINITIONS), *doc.matches(_SIZE_FUNCTIONS)):
        name = doc.node_text(groups["name"][0]).rpartition("::")[2]
        value = doc.node_text(groups["value"][0]).strip()
        is_32 = (_THIRTY_TWO.match(value) or _MADE_OF_32.match(value) or _CAPPED_AT_32.match(value)
                 or _TERNARY_AT_32.match(value))
        thirty_two = _SIZE_NAME.search(name.replace("_", "")) and is_32
        if thirty_two or (_LOG_SIZE_NAME.search(name) and _FIVE.match(value)):  # #define WARP_LOG_SIZE 5
            yield _span(groups["name"][0], symbol=name)
        elif _LANE_MASK_NAME.search(name) and _THIRTY_ONE.match(value):  # constexpr int kWarpMask = 31
            yield _span(groups["name"][0], symbol=name)


# `#define LANE_ID (threadIdx.x & 31)`, `#define WARP_ID (threadIdx.x >> LANE_LOG)` (with `#define LANE_LOG 5`): lane
# and warp ids in a macro's body, which tree-sitter leaves unparsed (preproc_arg), so _LANE_MATHS never sees them.
# The operand is a literal or a macro of this file defined once, to that literal (a name defined twice, per
# platform, is left alone).
_LANE_MACRO = lazy_regex(r"threadIdx\s*\.\s*x\s*(&|%|>>|/)\s*(\(?)\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*)[uUlL]*\s*\)?"
                         r"(?![\w.(\[]|\s*[-+*/])")
_MACRO_COMMENT = lazy_regex(r"//[^\n]*|/\*.*?\*/", re.S)  # a comment after a macro's body is in its text
_LANE_OPERANDS = {"&": frozenset({"31", "0x1f"}), "%": frozenset({"32"}), ">>": frozenset({"5"}), "/": frozenset({"32"})}


def _lane_macros(doc: CudaDocument) -> Iterator[Hit]:
    definitions: dict[str, set[str]] = {}
    bodies = []
    for groups in doc.matches(MACROS_QUERY):
        name = doc.node_text(groups["name"][0])
        body = _MACRO_COMMENT.sub(" ", doc.node_text(groups["value"][0])).strip()
        definitions.setdefault(name, set()).add(_normal(body).strip("()").lower().rstrip("ul"))
        bodies.append((groups["name"][0], body))
    for node, body in bodies:
        match = _LANE_MACRO.search(body)
        if match is None:
            continue
        operand = match.group(3)
        values = {operand.lower()} if operand[0].isdigit() else definitions.get(operand, set())
        if len(values) == 1 and values <= _LANE_OPERANDS[match.group(1)]:
            yield _span(node, symbol=doc.node_text(node))


# A function-like macro's body is a preproc_arg that tree-sitter leaves unparsed, so the tree checks above never see
# the warp code written as one (`#define COUNT_ZEROS(v) unsigned m = __ballot_sync(0xffffffff, v); \`, a reduction
# tail `#define WARP_SUM(x) x += __shfl_down_sync(0xffffffff, x, 16); \`): its all-lanes masks and lane maths are
# read from the body's text.
_FUNCTION_MACROS = "(preproc_function_def name: (identifier) @name value: (preproc_arg) @value)"
# a warp sync call in a macro body, up to its mask
_MACRO_SYNC = r"\b(__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|reduce_\w+)_sync)\s*\(\s*"
# a sync call whose mask is a name: _macro_bodies asks _is_full_mask of it (FULLMASK, kFullMask, a macro of 0xffffffff)
_MACRO_NAMED_MASK = lazy_regex(_MACRO_SYNC + r"([A-Za-z_]\w*)\s*,")
_MACRO_WARP = lazy_regex(
    _MACRO_SYNC +
    r"(?:0[xX]0*[fF]{8}[uUlL]*|~0[uU]?(?![lL])|\(\s*(?:unsigned|uint32_t)\s*\)\s*-1)\s*,"
    r"|\bthreadIdx\s*\.\s*x\s*(?:&\s*(?:31|0[xX]1[fF])|%\s*32|>>\s*5|/\s*32)[uU]?(?![\w.(\[]|\s*[-+*/])")


def _macro_bodies(doc: CudaDocument) -> Iterator[Hit]:
    """Warp sync calls given an all-lanes 32-bit mask (a literal, or a name bound to one or named like one:
    `__shfl_down_sync(FULLMASK, v, 16)`), and lane or warp ids taken with 31 / 32 / 5 from threadIdx.x, in the
    bodies of function-like macros."""
    constants: dict[str, str] | None = None
    for groups in doc.matches(_FUNCTION_MACROS):
        node = groups["value"][0]
        body = _MACRO_COMMENT.sub(blank_match, doc.node_text(node))
        found = list(_MACRO_WARP.finditer(body))
        for match in _MACRO_NAMED_MASK.finditer(body):
            constants = _constants(doc) if constants is None else constants
            if _is_full_mask(match.group(2), constants):
                found.append(match)
        for match in sorted(found, key=lambda m: m.start()):
            line_start = body.rfind("\n", 0, match.start()) + 1
            rows = body.count("\n", 0, match.start())
            column = match.start() - line_start + (node.start_point.column if rows == 0 else 0)
            yield Hit(node.start_point.row + rows + 1, column + 1, symbol=match.group(1) or "threadIdx.x")


def _warp_functions(doc: CudaDocument) -> set[int]:
    """Start bytes of the functions that use warp intrinsics, directly or through a helper in this file."""
    calls = doc.captures(_INTRINSIC_CALLS).get("fn", [])
    direct = {f.start_byte for n in calls if (f := doc.enclosing_function(n.start_byte))}
    helpers = set()
    for groups in doc.matches(_FUNCTION_NAMES):
        if groups["fn"][0].start_byte in direct:
            helpers.add(doc.node_text(groups["name"][0]).split("::")[-1])
    for callee in doc.captures(_CALLS).get("callee", []):
        name = doc.node_text(callee)
        # warp_reduce_sum, warpReduceMax, SHFL_DOWN_SYNC...: helpers and macros from other files named for what they do
        if (name in helpers or _warp_helper_name(name)) and (f := doc.enclosing_function(callee.start_byte)):
            direct.add(f.start_byte)
    return direct


def _literal_sizes(doc: CudaDocument) -> Iterator[Hit]:
    warp_functions: set[int] | None = None
    candidates = [g["decl"][0] for g in doc.matches(_SHARED_ARRAYS) if _is_shared(doc, g["decl"][0])]
    candidates += [n for n in doc.captures(_LOOPS).get("loop", []) if _warp_sized_loop(doc, n)]
    tails = [g["tail"][0] for g in doc.matches(_WARP_TAILS) if _warp_tail(doc, g)]
    # a tail (`tid < 32`, `s[tid + 32]`) in a function with volatile variables is implicit warp-synchronous code too:
    # a shared array or loop of 32 there is not, by itself (volatile shared tables filled under barriers)
    volatile = {f.start_byte for n in doc.captures(_VOLATILE_DECLARATIONS).get("decl", [])
                if (f := doc.enclosing_function(n.start_byte))} if tails else set()
    for node in sorted(candidates + tails, key=lambda n: n.start_byte):
        warp_functions = _warp_functions(doc) if warp_functions is None else warp_functions
        function = doc.enclosing_function(node.start_byte)
        if function is not None and (function.start_byte in warp_functions
                                     or (function.start_byte in volatile and node in tails)):
            yield _span(node)
    for groups in doc.matches(_FIXED_WIDTHS):
        name = doc.node_text(groups["fn"][0])
        if name in _FIXED_WIDTH_INTRINSICS or (_warp_helper_name(name) and _called_with_width(groups["width"][0])):
            yield _span(groups["width"][0], symbol=name)
    if doc.captures(_INTRINSIC_CALLS).get("fn") or doc.captures(_WARP_MATRIX).get("op") or _calls_warp_helper(doc):
        # threadIdx.x is the lane only where warp intrinsics, warp helpers (WARP_SHFL, warp_reduce_sum: defined in
        # another header) or warp-wide matrix ops (wmma fragments) run
        for groups in doc.matches(_WARP_BLOCKS):
            yield _span(groups["x"][0], symbol="dim3" if "type" in groups else "block size")
        yield from _named_blocks(doc)
        for groups in doc.matches(_WARP_FLOORS):
            if _warp_floor(doc, groups):
                yield _span(groups["floor"][0], symbol="max(..., 32)")


def _called_with_width(width: Node) -> bool:
    """`warpReduceSum<32>(v)`, `warp_reduce_max<float, 32>(v)`: a call whose one number among its template arguments
    is the width; not a kernel's address among its instantiations (`&softmax_warp_forward<T, T, float, 2, 1, 32, 1>`,
    whose launch code picks the shape per case)."""
    arguments, function = width.parent, width.parent.parent if width.parent is not None else None
    call = function.parent if function is not None else None
    while call is not None and call.type == "qualified_identifier":
        function, call = call, call.parent
    if call is None or call.type != "call_expression" or call.child_by_field_name("function") != function:
        return False
    return arguments is not None and sum(1 for c in arguments.named_children if c.type == "number_literal") == 1


def _named_blocks(doc: CudaDocument) -> Iterator[Hit]:
    """`dim3 threads(kWidth, rows)` where kWidth, as the launch sees it, is bound to 32 (`const int kWidth = 32;`, the
    last binding before it in its function, else every binding outside functions): a block one 32-lane warp wide,
    spelled through a constant."""
    found = doc.matches(_NAMED_BLOCKS)
    if not found:
        return
    bound: dict[str, list[tuple[int, int | None, str]]] = {}  # name -> (where, function start or None, value)
    for groups in doc.matches(_INITS):
        node = groups["name"][0]
        function = doc.enclosing_function(node.start_byte)
        bound.setdefault(doc.node_text(node), []).append(
            (node.start_byte, function.start_byte if function else None, _normal(doc.node_text(groups["value"][0]))))
    for groups in found:
        node = groups["x"][0]
        function = doc.enclosing_function(node.start_byte)
        places = bound.get(doc.node_text(node), [])
        local = [v for at, owner, v in places if function and owner == function.start_byte and at < node.start_byte]
        values = local[-1:] or [v for _, owner, v in places if owner is None]
        if values and all(_LITERAL_32.match(v) for v in values):
            yield _span(node, symbol="dim3")


def _warp_floor(doc: CudaDocument, groups: dict[str, list[Node]]) -> bool:
    """`max(x, 32)` with a literal 32 argument, whose result a block width (block_size, block_x, threads) gets."""
    arguments = groups["args"][0].named_children
    if len(arguments) != 2 or not any(_LITERAL_32.match(_normal(doc.node_text(a))) for a in arguments):
        return False
    target = _assigned_to(groups["floor"][0])
    return target is not None and _BLOCK_WIDTH.match(doc.node_text(target)) is not None


def _calls_warp_helper(doc: CudaDocument) -> bool:
    """A call of a function or macro named for warps or shuffles (`WARP_SHFL`, `warp_reduce_sum`)."""
    return any(_warp_helper_name(doc.node_text(n)) for n in doc.captures(_CALLS).get("callee", []))


def _warp_tail(doc: CudaDocument, groups: dict[str, list[Node]]) -> bool:
    """`tid < 32`, `x[tid + 32]` on a thread index, `blockSize > 32` on a block's thread count: one warp's lanes;
    `blockSize >= 64`: more than one warp, the test before a block reduction's shared-memory steps."""
    op = doc.node_text(groups["op"][0])
    if op not in _TAIL_OPERATORS:
        return False
    name = re.sub(r"\bthreadIdx\s*\.\s*x\b", "threadIdx", doc.node_text(groups["lhs"][0])).strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return False
    if doc.node_text(groups["rhs"][0]).startswith("64"):
        return op == ">=" and _THREAD_COUNT.match(name) is not None
    if name == "threadIdx" or _THREAD_NAME.match(name):
        return True
    return op != "+" and _THREAD_COUNT.match(name) is not None


def _is_shared(doc: CudaDocument, declaration: Node) -> bool:
    return any(c.type == "type_qualifier" and doc.node_text(c) == "__shared__" for c in declaration.children)


def _warp_sized_loop(doc: CudaDocument, loop: Node) -> bool:
    """`i < 32`, a shuffle-offset loop from 16 halving (or up to 16 doubling), or a block's tree halving while
    more than one warp is left (`i >= 64`, `i > 32`), the shuffles taking the last warp."""
    parts = {
        name: _normal(doc.node_text(n)).rstrip(";")
        for name in ("initializer", "condition", "update")
        if (n := loop.child_by_field_name(name))
    }
    condition, start, update = parts.get("condition", ""), parts.get("initializer", ""), parts.get("update", "")
    if re.search(r"(?:<|!=)(?:32|0x20)[uU]?$|<=31[uU]?$", condition):
        return True
    halving = re.search(r"(?:/=2|>>=1|=\w+(?:/2|>>1))$", update) is not None
    doubling = re.search(r"(?:\*=2|<<=1|=\w+(?:\*2|<<1))$", update) is not None
    from_sixteen = halving and re.search(r"=16[uU]?$", start) is not None
    if halving and re.search(r"(?:>=64|>32)[uU]?$", condition):
        return True
    return from_sixteen or (doubling and re.search(r"<=16[uU]?$", condition) is not None)


# A constant by its spelling (WARP_SIZE, THREADS_PER_WARP, kWarpSize), not a run-time value (warp_size, warpSize);
# PyTorch's C10_WARP_SIZE is defined per platform.
_CONSTANT_SPELLING = lazy_regex(r"^(?!C10_)[A-Z][A-Z0-9_]*$|^k[A-Z_]\w*$")
_THIRTY_TWO_VALUE = lazy_regex(r"^\(?\s*(?:32|0x20)[uUlL]*\s*\)?$")


def is_size_name(name: str) -> bool:
    """WARP_SIZE, THREADS_PER_WARP, kWarpSize: a warp size spelled as a constant (not its log, bits or a mask)."""
    return (_CONSTANT_SPELLING.match(name) is not None and _SIZE_NAME.search(name.replace("_", "")) is not None
            and re.search(r"BITS|LOG|SHIFT|MASK", name, re.I) is None)


def _size_name_uses(doc: CudaDocument) -> Iterator[Hit]:
    """Each use of a warp-size constant: low where this file binds it to 32, info where its definition is elsewhere
    (the scan's project pass raises it to low when the repository #defines it as 32 and nothing else)."""
    bound: dict[str, set[str]] = {}
    for groups in doc.matches(_SIZE_DEFINITIONS):
        bound.setdefault(doc.node_text(groups["name"][0]), set()).add(doc.node_text(groups["value"][0]).strip())
    # the names present, found on the bytes and confirmed on the tree (a query over every identifier costs more)
    names = {n for n in _constant_names(doc.text) if is_size_name(n)} - doc.compat_names
    for token in doc.tokens_named(frozenset(names)):
        values = bound.get(token.name)
        if values is not None and not all(_THIRTY_TWO_VALUE.match(v) or _CAPPED_AT_32.match(v) for v in values):
            continue  # bound to 64, to warpSize, or per platform here
        node = doc.root.descendant_for_byte_range(token.start_byte, token.end_byte)
        if node is not None and token.node_type != "macro" and _defines(node):
            continue
        yield Hit(token.line, token.column, symbol=token.name, severity=None if values else Severity.INFO)


# The indexed shuffles and their argument count without a width: HIP's width then defaults to warpSize (64 on CDNA).
# WARP_SHFL is PyTorch's wrapper (c10 DeviceUtils.cuh), its width defaulting to warpSize as well.
_INDEXED_SHUFFLES = {"__shfl_sync": 3, "__shfl": 2, "WARP_SHFL": 2}
_INDEXED_NAMES = frozenset(_INDEXED_SHUFFLES)


def _row_shuffles(doc: CudaDocument) -> Iterator[Hit]:
    """Indexed shuffles left at the default width in a file that launches blocks 32 threads wide and several rows
    high: on a 64-lane wavefront two rows share one wavefront, and source lane 0 is the first row's."""
    if not _launches_rows(doc):
        return
    for token in doc.tokens_named(_INDEXED_NAMES):
        node = doc.root.descendant_for_byte_range(token.start_byte, token.end_byte)
        call = node.parent if node is not None else None
        if call is None or call.type != "call_expression" or call.child_by_field_name("function") != node:
            continue
        arguments = call.child_by_field_name("arguments")
        count = sum(1 for a in arguments.named_children if a.type != "comment") if arguments else 0
        if count == _INDEXED_SHUFFLES[token.name]:
            yield Hit(token.line, token.column, symbol=token.name)


def _launches_rows(doc: CudaDocument) -> bool:
    """A dim3 block 32 threads wide whose second dimension is not 1 (`dim3 threads(32, 4, 1)`)."""
    for groups in doc.matches(_WARP_BLOCKS):
        if "type" not in groups:
            continue
        block = groups["x"][0].parent
        sizes = [n for n in block.named_children if n.type != "comment"] if block is not None else []
        if len(sizes) >= 2 and _normal(doc.node_text(sizes[1])) not in ("1", "1u", "1U"):
            return True
    return False


def _defines(node: Node) -> bool:
    """NODE is the name a declaration or a parameter introduces, not a use."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("struct_specifier", "class_specifier", "enum_specifier", "alias_declaration", "type_definition"):
        return True
    if parent.type in ("init_declarator", "optional_parameter_declaration", "parameter_declaration", "declaration",
                       "enumerator", "preproc_def", "preproc_function_def"):
        field = "name" if parent.type in ("enumerator", "preproc_def", "preproc_function_def") else "declarator"
        return parent.child_by_field_name(field) == node
    return False


def _warpsize_constants(doc: CudaDocument) -> Iterator[Hit]:
    for token in doc.tokens_named(("warpSize",)):
        if token.node_type != "macro":
            node = doc.root.descendant_for_byte_range(token.start_byte, token.end_byte)
            if node is not None and _in_constant_context(doc, node):
                yield _span(node, symbol="warpSize")


def _in_constant_context(doc: CudaDocument, node: Node) -> bool:
    """warpSize where C++ needs a constant: template argument, array bound, static_assert, constexpr, case label."""
    child, parent = node, node.parent
    while parent is not None and parent.type not in _STOP:
        if parent.type in _CONST_CONTEXTS:
            return True
        if parent.type == "array_declarator" and parent.child_by_field_name("size") == child:
            return True
        if parent.type in ("declaration", "field_declaration"):
            qualifiers = {doc.node_text(c) for c in parent.children if c.type == "type_qualifier"}
            return bool(qualifiers & {"constexpr", "consteval"})
        child, parent = parent, parent.parent
    return False


for _source in (_MASK_ARGS, _INITS, _MASK_MACROS, _BALLOT_DECLS, _BALLOT_ASSIGNS, _BIT_COUNTS, _LANE_MATHS, _SIZE_DEFINITIONS,
                _INTRINSIC_CALLS, _CALLS, _FUNCTION_NAMES, _SHARED_ARRAYS, _LOOPS, _WARP_TAILS, _FIXED_WIDTHS,
                _WARP_BLOCKS, _WARP_FLOORS, _MASK_PARAMETERS, _TYPED_NAMES, _WARP_MATRIX, _BALLOT_RETURNS,
                _WRAPPED_BALLOT_DECLS, _FUNCTION_MACROS, _RETURNING, _SIZE_FUNCTIONS, _NAMED_BLOCKS, _MASK_COMPARES,
                _SHORT_SIZE_DEFINITION):
    register_query(_source)

_CHECKS: dict[str, Callable[[CudaDocument], Iterator[Hit]]] = {
    "full-mask": _full_masks,
    "full-compare": _full_compares,
    "narrow-mask": _narrow_masks,
    "ballot-width": _ballot_widths,
    "lane-math": _lane_maths,
    "lane-macro": _lane_macros,
    "size-constant": _size_constants,
    "literal-size": _literal_sizes,
    "warpsize-constant": _warpsize_constants,
    "size-name-use": _size_name_uses,
    "row-shuffle": _row_shuffles,
    "macro-body": _macro_bodies,
}
# The queries each check may ask for (those it asks only on some files too: one more in a compile costs ~5 ms, a
# compile of its own ~10 ms)
_QUERIES: dict[str, tuple[str, ...]] = {
    "full-mask": (_MASK_ARGS, COMPAT_NAMES_QUERY, MACROS_QUERY, _INITS, _MASK_MACROS, _MASK_PARAMETERS, _RETURNING),
    "full-compare": (_MASK_COMPARES, MACROS_QUERY, _INITS),
    "narrow-mask": (_MASK_ARGS, COMPAT_NAMES_QUERY, _TYPED_NAMES, MACROS_QUERY, _INITS),
    "ballot-width": (_BALLOT_DECLS, _BALLOT_ASSIGNS, _BIT_COUNTS, _BALLOT_RETURNS, _WRAPPED_BALLOT_DECLS,
                     _TYPED_NAMES),
    "lane-math": (_LANE_MATHS, _INITS),
    "lane-macro": (MACROS_QUERY,),
    "size-constant": (_SIZE_DEFINITIONS, _SIZE_FUNCTIONS, _SHORT_SIZE_DEFINITION),
    "literal-size": (_SHARED_ARRAYS, _LOOPS, _WARP_TAILS, _INTRINSIC_CALLS, _FUNCTION_NAMES, _CALLS, _FIXED_WIDTHS,
                     _WARP_MATRIX, _WARP_BLOCKS, _WARP_FLOORS, _NAMED_BLOCKS, _INITS),
    "warpsize-constant": (),
    "size-name-use": (_SIZE_DEFINITIONS, COMPAT_NAMES_QUERY),
    "row-shuffle": (_WARP_BLOCKS,),
    "macro-body": (_FUNCTION_MACROS, MACROS_QUERY, _INITS),
}


# What a file's code (comments and strings blanked) must contain for each check to fire: a C/C++ file is parsed
# only when one passes. Each test is implied by the check's queries and conditions above; _W is a blank, also
# across a macro's line continuation.
_W = r"(?:\s|\\\n)*"
_NUMBER_END = r"(?![0-9xX])"
# On the lower-case code without blanks (as _normal compares): the all-lanes values of _FULL_MASK, and a name
# ending in "mask" given one.
_FULL_VALUE = (r"(?:0x0*f{8}(?![0-9a-f])|4294967295|~0u|~0x0+u"
               r"|\((?:unsigned|unsignedint|uint32_t|std::uint32_t|uint)\)-1"
               r"|(?:unsigned|uint32_t|std::uint32_t|uint)\(-1\)"
               r"|static_cast<(?:unsigned|unsignedint|uint32_t|std::uint32_t)>\(-1\)"
               r"|~(?:unsigned|uint32_t|std::uint32_t)\(0\))")
# Each all-lanes form by a literal that starts it (one alternation would stop at every `(`, `u` and `s`).
_FULL_VALUE_FORMS = (
    ("0x", lazy_regex(r"0x0*f{8}(?![0-9a-f])")),
    ("4294967295", None),
    ("~", lazy_regex(r"~0(?:x0+)?u|~(?:unsigned|uint32_t|std::uint32_t)\(0\)")),
    (")-1", lazy_regex(r"\((?:unsigned|unsignedint|uint32_t|std::uint32_t|uint)\)-1")),
    ("(-1)", lazy_regex(r"(?:unsigned|uint32_t|std::uint32_t|uint)\(-1\)"
                        r"|static_cast<(?:unsigned|unsignedint|uint32_t|std::uint32_t)>\(-1\)")),
)
_MASK_DEFINITION = lazy_regex(rf"mask\w*?(?:[=(]|\(\)(?:const|noexcept)*\{{return)?{_FULL_VALUE}")
_MASK_NAMES = lazy_regex(r"\b(?:(?:k_?)?(?:full|final|all|warp)_?(?:lanes?_?|warp_?)?|shfl_?|shuffle_?)mask\b")  # _MASK_NAME, lower-case
_MASK_ACCESSOR = lazy_regex(rf"warp\w*mask{_W}\({_W}\)")  # _full_mask_call's, lower-case
_SYNC_NAMES = frozenset(
    [f"__shfl{kind}_sync" for kind in ("", "_up", "_down", "_xor")]
    + ["__ballot_sync", "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync", "__syncwarp"]
    + [f"__reduce_{op}_sync" for op in ("add", "min", "max", "and", "or", "xor")]
)  # what _WARP_SYNC matches
_BALLOT_NAMES = frozenset({"__ballot_sync", "__ballot", "__activemask", "__match_any_sync", "__match_all_sync"})
_COMPARED_NAMES = frozenset({"__activemask", "__ballot_sync", "__ballot"})  # what _COMPARED_MASK matches
# The ballot wrappers _BALLOT_WRAPPER_CALL finds counted (a file that only calls one needs no other ballot name)
_BALLOT_WRAPPERS = frozenset({"ballot", "Ballot", "BALLOT", "warp_ballot", "warpBallot", "WarpBallot", "WARP_BALLOT",
                              "masked_ballot"})
_INTRINSIC_NAMES = _SYNC_NAMES | frozenset(
    [f"__shfl{kind}" for kind in ("", "_up", "_down", "_xor")]
    + ["__ballot", "__any", "__all", "__activemask", "tiled_partition", "thread_block_tile"]
)  # what _WARP_INTRINSIC matches, and the names of _FIXED_WIDTHS
_HELPER_CALLS = tuple(lazy_regex(rf"{name}\w*{_W}(?:<[^;{{}}()]*>{_W})?\(") for name in ("warp", "shfl", "shuffle"))


def _every_case(word: str) -> list[str]:
    """WORD in every mix of upper and lower case: the needles of a test that reads the lower-cased code."""
    forms = [""]
    for char in word:
        forms = [form + c for form in forms for c in dict.fromkeys((char.lower(), char.upper()))]
    return forms


# Strings one of which the code (or an #include path) holds wherever a check's test above passes, derived from the
# tests: a file without one is not tested (the C/C++ tree rules' needles are searched in one pass per file). A test
# that reads the lower-cased code needs its words in every case.
_NEEDLES = {
    "full-mask": ["_sync", *_every_case("mask")],  # every _SYNC_NAMES name holds _sync
    "full-compare": sorted(_COMPARED_NAMES),
    "narrow-mask": ["_sync"],
    "ballot-width": sorted(_BALLOT_NAMES | _BALLOT_WRAPPERS),
    # _LANE_OPERATIONS' cmp and Cmp; _NEEDED_BY; _TARGETS, _WARP_INDEX, _THREAD_BUILTIN, _THREAD_NAME, _THREAD_VALUE
    # (the names bound to a thread value), _THREAD_COUNT (threads, size or dim in any case)
    "lane-math": ["threadIdx", "blockDim", "thread_rank", "tid", "tx", "thread_id", "threadId", "local_id", "mask",
                  *_every_case("lane"), *_every_case("warp"), *_every_case("wid"), *_every_case("hread"),
                  *_every_case("size"), *_every_case("dim")],
    "lane-macro": ["threadIdx"],  # _LANE_MACRO
    "macro-body": ["_sync", "threadIdx"],  # _MACRO_WARP
    "size-constant": [*_every_case("warp"), "WS"],  # _SIZE_VALUE, _SHORT_SIZE_TEXT
    # _INTRINSIC_NAMES, then __reduce_, wmma and mma_sync, and _HELPER_CALLS (warp, shfl, shuffle) in any case
    "literal-size": [*sorted(_INTRINSIC_NAMES), *_every_case("__red"), *_every_case("mma"), *_every_case("warp"),
                     *_every_case("shfl"), *_every_case("shuf"), "volatile"],
    "warpsize-constant": ["warpSize"],
    "size-name-use": ["WARP", "Warp"],  # _WARP_PART
    "row-shuffle": _every_case("dim3"),  # _ROW_BLOCK
}
_WARP_SHAPES = tuple(lazy_regex(p) for p in (  # __shared__ x[32], warp-sized loops, fixed widths, dim3 with 32
    rf"__shared__[^;]*\[{_W}32u?{_W}\]",
    rf"for{_W}\([^{{}}]{{0,300}}?(?:(?:<|!=){_W}(?:32|0x20)u?{_NUMBER_END}|<={_W}(?:31|16)u?{_NUMBER_END}"
    rf"|={_W}16u?{_W};)",
    rf",{_W}32u?{_W}\)", *(rf"{name}{_W}<{_W}32" for name in ("tiled_partition", "thread_block_tile")),
    rf"dim3[^;]*[({{,]{_W}32u?{_NUMBER_END}",
    # a warp helper's width argument (the code is lower-cased: `Warp`, `WARP` and `SHFL` read `warp` and `shfl`), one
    # search per name: led by a literal, not by an alternation that tries every position (0.15 CPU s on CUTLASS + CCCL)
    *(rf"{name}\w*{_W}<[^<>;{{}}()]{{0,80}}?\b32u?{_W}>" for name in ("warp", "shfl")),
    rf"<<<[^;]*?,{_W}32u?{_NUMBER_END}", rf"__launch_bounds__{_W}\({_W}32u?{_NUMBER_END}",
    rf"\*{_W}32u?{_W}(?:\)|,|>>>)",  # _WARP_BLOCKS' products (the other order is caught by `,{_W}32`, `(32`)
    rf">={_W}64u?{_NUMBER_END}",  # _WARP_TAILS' `blockSize >= 64`, halving loops (the 32s: _maybe_tail_32)
    rf"max\b[^;{{}}]{{0,200}}?\b32[uUlL]*{_NUMBER_END}",  # _WARP_FLOORS
    rf"dim3{_W}\w+{_W}[({{]{_W}[a-z_]\w*{_W}[,)}}]",  # _NAMED_BLOCKS (the name's 32 is checked on the tree)
))
# Each search starts with a literal or a character set, so the regex engine skips ahead in C (an alternation of
# them, or a leading lookbehind, makes it try every position).
_LANE_OPERATIONS = {  # the operator and literal pairs of _LANE_MATHS that _LANE_LITERALS keeps, by the operator
    # _is_lane_math judges them as; each regex starts with a literal so that the search runs in C
    "&": lazy_regex(rf"&{_W}~?{_W}(?:31|0[xX]1[fF]|\({_W}32{_W}-{_W}1{_W}\)){_NUMBER_END}"),  # `& ~31`: the warp's base
    "%": lazy_regex(rf"%{_W}32{_NUMBER_END}"),
    "*": lazy_regex(rf"\*{_W}32{_NUMBER_END}"),
    "/": lazy_regex(rf"/{_W}32{_NUMBER_END}"),
    ">>": lazy_regex(rf">>{_W}5{_NUMBER_END}"),
    "31&": lazy_regex(rf"31{_NUMBER_END}[uUlL]*{_W}&"),
    "0x1f&": lazy_regex(rf"0[xX]1[fF]{_NUMBER_END}[uUlL]*{_W}&"),
    "32*": lazy_regex(rf"32{_NUMBER_END}[uUlL]*{_W}\*"),
    "bit": lazy_regex(rf"1[uU]?{_W}<<"),
    "width": lazy_regex(rf">>{_W}\({_W}3[12]{_W}-"),
    "left-width": lazy_regex(rf"<<{_W}\({_W}3[12]{_W}-"),
    "cmp": lazy_regex(rf"lane\w*{_W}[!=]={_W}\(?{_W}3[12]{_NUMBER_END}"),
    "Cmp": lazy_regex(rf"Lane\w*{_W}[!=]={_W}\(?{_W}3[12]{_NUMBER_END}"),
}
_OPERATOR = {"31&": "&", "0x1f&": "&", "32*": "*"}
_ASSIGNED = lazy_regex(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(?:(?:[-+*/%&|^]|<<|>>)?=(?!=)|\(|\{)")
_NEEDED_BY = {"bit": lazy_regex(r"threadIdx|[Ll]ane"), "width": lazy_regex(r"mask|[Ll]ane|threadIdx|[Ww]arp|WARP"),
              "left-width": lazy_regex(r"mask|[Ll]ane|threadIdx|[Ww]arp|WARP")}
_THREAD_VALUE = lazy_regex(r"(?:threadIdx|blockDim|thread_rank)\b")
_BOUND_NAME = lazy_regex(r"([A-Za-z_]\w*)\s*(?:=(?!=)|\(|\{)")


def _statement(code: str, start: int, end: int) -> str:
    """The code between the semicolons around START..END: an expression never spans one."""
    return code[code.rfind(";", 0, start) + 1 : code.find(";", end) % (len(code) + 1)]


def _maybe_lane_math(view: Code) -> bool:
    """An operation with a lane literal whose statement holds what `_is_lane_math` (or `_lane_bits`) needs for
    its operator: a thread builtin or thread name (or a variable this file binds to threadIdx), a thread count,
    a warp index, or a variable assigned there named for a lane or warp."""
    code = view.text
    bound: set[str] | None = None
    for kind, pattern in _LANE_OPERATIONS.items():
        for match in pattern.finditer(code):
            if kind in ("cmp", "Cmp"):
                return True
            statement = _statement(code, match.start(), match.end())
            if kind in _NEEDED_BY:
                if _NEEDED_BY[kind].search(statement):
                    return True
                continue
            if bound is None:
                bound = {name for m in _THREAD_VALUE.finditer(code)
                         for name in _BOUND_NAME.findall(_statement(code, m.start(), m.end()))}
            if _may_be_lane_math(_OPERATOR.get(kind, kind), statement, bound):
                return True
    return False


def _may_be_lane_math(op: str, statement: str, bound: set[str]) -> bool:
    """What _is_lane_math asks of the operand or the assigned variable, asked of the whole statement."""
    words = set(re.findall(r"[A-Za-z_]\w*", statement))
    if any(_TARGETS[op].search(name) for name in _ASSIGNED.findall(statement)):
        return True
    if op == "*":
        thread_row = re.search(r"\bthreadIdx\s*\.\s*[yz]\b", statement) is not None
        return thread_row or any(_WARP_INDEX.match(w) or _WARP_COUNT.match(w) for w in words)
    if _THREAD_BUILTIN.search(statement) or any(_THREAD_NAME.match(w) or w in bound for w in words):
        return True
    return op in ("/", ">>") and any(_THREAD_COUNT.match(w) for w in words)


def _maybe_full_mask(view: Code) -> bool:
    """A warp sync call given an all-lanes value somewhere in the file (a literal, or a name bound to one) or a
    mask named like one; or a name ending in "mask" given an all-lanes value: what _full_masks reports."""
    sync = not _SYNC_NAMES.isdisjoint(view.words)
    if not sync and "mask" not in view.lower:
        return False
    compact = "".join(view.lower.split()).replace("\\", "")  # as _normal compares (and across continuations)
    if "'" in compact:
        compact = _DIGIT_SEPARATOR.sub("", compact)  # `0xffff'ffffu`
    if any(anchor in compact and (form is None or form.search(compact)) for anchor, form in _FULL_VALUE_FORMS):
        return sync or _MASK_DEFINITION.search(compact) is not None
    # a mask named for all lanes, maybe via a macro, or a warp-mask accessor's call (`WarpFullMask()`)
    return sync and (_MASK_NAMES.search(view.lower) is not None or _MASK_ACCESSOR.search(view.lower) is not None)


_SYNC_ARGUMENT = lazy_regex(rf"__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|reduce_\w+)_sync{_W}\("
                            rf"{_W}([A-Za-z_]\w*|(?:0x[0-9a-f']+|[\d']+)u?|-{_W}1|~{_W}0){_W},|__syncwarp{_W}\({_W}([A-Za-z_]\w*|(?:0x[0-9a-f']+|[\d']+)u?|-{_W}1|~{_W}0)"
                            rf"{_W}\)")


def _maybe_narrow_mask(view: Code) -> bool:
    """A warp sync call whose mask is an int literal other than an all-lanes one (`__shfl_sync(0xffffffff, ...)`: the
    whole argument, which _narrow_masks leaves to full-mask), or a name the file declares after a 32-bit type word:
    what _narrow_masks needs."""
    if _SYNC_NAMES.isdisjoint(view.words):
        return False
    for match in _SYNC_ARGUMENT.finditer(view.lower):
        argument = match.group(1) or match.group(2)
        if argument[0] in "-~":
            return True  # `-1`, `~0`: an int
        if argument[0].isdigit():
            # the lower-cased code hides `0XFFFFFFFF`, which _FULL_MASK does not take for all lanes
            if _FULL_MASK.match(argument.replace("'", "")) is None or argument[1:2] == "x" and "0X" in view.text:
                return True
            continue
        declared = rf"\b(?:u?int32_t|unsigned|int|uint|u32|uint32|unsigned_int)(?:{_W}const)?{_W}&?{_W}{re.escape(argument)}\b"
        if re.search(declared, view.lower):
            return True
    return False


_SIZE_VALUE = lazy_regex(rf"warp\w*{_W}(?:={_W}(?:[a-z_][\w:.<>]{{0,40}}{_W})?)?\(?{_W}(32|0x20|5|31|0x1f){_NUMBER_END}")
# _SIZE_FUNCTIONS' accessor: `warp_size() { return 32; }`, `int WarpThreads() const noexcept { return 32; }`
_SIZE_RETURN = lazy_regex(rf"warp\w*{_W}\({_W}\){_W}(?:(?:const|noexcept){_W})*\{{{_W}return{_W}\(?{_W}(32|0x20|5)"
                          rf"{_NUMBER_END}")


_SHORT_SIZE_TEXT = lazy_regex(r"#[ \t]*define[ \t]+WS[ \t]+\(?(?:32|0x20)\b")


_CAPPED_VALUE = lazy_regex(rf"warp\w*{_W}={_W}(?:std::|cuda::std::)?min{_W}(?:<{_W}\w+{_W}>)?{_W}\("
                           rf"(?:{_W}[\w:.]+{_W},{_W}(?:32|0x20)|{_W}(?:32|0x20)[ul]*{_W},)")


_TERNARY_VALUE = lazy_regex(rf"warp\w*{_W}={_W}[^;?=]{{0,80}}[<>]=?{_W}(?:32|0x20)[ul]*{_W}\)?{_W}\?")


def _maybe_size_constant(view: Code) -> bool:
    """A name that _size_constants takes for a warp size (or its log) given 32 (or 5), or the block size capped
    at 32 (`kWarpSize = std::min(kNThreads, 32)`, `warp_size = n < 32 ? n : 32`)."""
    code = view.lower
    if "WS" in view.text and _SHORT_SIZE_TEXT.search(view.text) is not None:
        return True
    if "?" in code and _TERNARY_VALUE.search(code) is not None:
        return True
    if "min" in code and (capped := _CAPPED_VALUE.search(code)) is not None:
        start = capped.start()
        while start and (code[start - 1].isalnum() or code[start - 1] == "_"):
            start -= 1
        if _SIZE_NAME.search(code[start:capped.end()].split("=")[0].strip().replace("_", "")):
            return True
    for match in (*_SIZE_VALUE.finditer(code), *_SIZE_RETURN.finditer(code)):
        start = match.start()
        while start and (code[start - 1].isalnum() or code[start - 1] == "_"):
            start -= 1
        name = re.match(r"\w+", code[start:]).group()  # type: ignore[union-attr]
        if match.group(1) in ("31", "0x1f"):
            if _LANE_MASK_NAME.search(name):
                return True
            continue
        if match.group(1) == "5" and _LOG_SIZE_NAME.search(name) or _SIZE_NAME.search(name.replace("_", "")):
            return True
    return False


def _maybe_literal_size(view: Code) -> bool:
    """A warp intrinsic or a call of a helper named for warps or shuffles, and one of _literal_sizes' shapes."""
    code = view.lower
    intrinsics = not _INTRINSIC_NAMES.isdisjoint(view.words) or "__reduce_" in code or "wmma" in code
    if not (intrinsics or "mma_sync" in code or _calls_helper(code) or _VOLATILE_DATA.search(code)):
        return False
    return any(p.search(code) for p in _WARP_SHAPES) or _maybe_tail_32(code)


# a volatile variable, not `asm volatile (...)`: see _VOLATILE_DECLARATIONS
_VOLATILE_DATA = lazy_regex(r"\bvolatile\s+(?![(\s])")
_TAIL_32 = lazy_regex(rf"[<>+]=?{_W}32u?{_NUMBER_END}")
_LOOP_END = lazy_regex(rf"{_W}[;)]")
_THREAD_NAME_FOLDED = lazy_regex(_THREAD_NAME.pattern, re.I)  # in the lower-cased code


def _word_before(code: str, offset: int) -> tuple[int, str]:
    """The word (ASCII letters, digits, `_`) that ends at OFFSET of CODE, or before it past blanks and line
    continuations, and where it starts."""
    end = _past_blanks(code, offset)
    start = end
    while start and (code[start - 1] in _WORD_CHARS):
        start -= 1
    return start, code[start:end]


def _past_blanks(code: str, offset: int) -> int:
    """Where the blanks and line continuations that end at OFFSET of CODE start."""
    while offset and code[offset - 1] in _BLANKS:
        offset -= 1
    return offset


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_BLANKS = frozenset(" \t\r\n\f\v\\")


def _maybe_tail_32(code: str) -> bool:
    """`< 32`, `<= 32`, `> 32`, `>= 32` or `+ 32` (in lower-cased CODE) where a 32 of _literal_sizes can be: at the
    end of a loop's condition (`i < 32;`, a halving `i > 32)`: _warp_sized_loop), or after a thread index or a
    block's thread count by its name (`tid < 32`, `threadIdx.x + 32`, `blockSize > 32`: _warp_tail), not a template's
    argument (`GemmShape<32, 64, 32>`) or another name's bound."""
    for match in _TAIL_32.finditer(code):
        if _LOOP_END.match(code, match.end()):
            return True
        start, name = _word_before(code, match.start())
        if name == "threadidx" or _THREAD_NAME_FOLDED.match(name) or _THREAD_COUNT.match(name):
            return True
        dot = _past_blanks(code, start)
        if name == "x" and code[dot - 1 : dot] == "." and _word_before(code, dot - 1)[1] == "threadidx":
            return True
    return False


def _calls_helper(code: str) -> bool:
    """A call of a function or macro named for warps or lane shuffles, in lower-cased code."""
    for pattern in _HELPER_CALLS:
        for found in pattern.finditer(code):
            if not _NOT_WARP_SHUFFLE.search(code, max(0, found.start() - 24), found.start()):
                return True
    return False


def _constant_names(text: str) -> set[str]:
    """The words of TEXT that \\b(?:[A-Z0-9_]*WARP[A-Z0-9_]*|k\\w*Warp\\w*)\\b finds: each word around a `WARP` or
    `Warp`, kept when the pattern matches all of it (a regex led by \\b would try every position of the text)."""
    found: set[str] = set()
    end = len(text)
    place = _WARP_PART.search(text)
    while place is not None:
        start, stop = place.start(), place.end()
        while start and is_word_char(text[start - 1]):
            start -= 1
        while stop < end and is_word_char(text[stop]):
            stop += 1
        if _CONSTANT_NAME.fullmatch(text, start, stop):
            found.add(text[start:stop])
        place = _WARP_PART.search(text, stop)
    return found


_WARP_PART = lazy_regex(r"W(?:ARP|arp)")
_CONSTANT_NAME = lazy_regex(r"[A-Z0-9_]*WARP[A-Z0-9_]*|k\w*Warp\w*")


def _maybe_size_name_use(view: Code) -> bool:
    """A constant-spelled name that _size_name_uses takes for a warp size."""
    return any(is_size_name(name) for name in _constant_names(view.text))


_ROW_BLOCK = lazy_regex(rf"dim3[^;]*[({{]{_W}32u?{_W},{_W}(?!1u?{_W}[,)}}])\w")


def _maybe_row_shuffle(view: Code) -> bool:
    """An indexed shuffle (or WARP_SHFL) and a dim3 block 32 wide with a second dimension other than 1."""
    return not _INDEXED_NAMES.isdisjoint(view.words) and _ROW_BLOCK.search(view.lower) is not None


_FUNCTION_MACRO_START = lazy_regex(r"#[ \t]*define[ \t]+\w+\(")


def _maybe_macro_body(view: Code) -> bool:
    """A function-like macro whose body (its logical line) holds what _macro_bodies reports: only the bodies are
    searched, not the whole file."""
    text = view.text
    for start in _FUNCTION_MACRO_START.finditer(text):
        end = text.find("\n", start.end())
        while end > 0 and text[end - 1 - (text[end - 1] == "\r")] == "\\":
            end = text.find("\n", end + 1)
        stop = len(text) if end < 0 else end
        if _MACRO_WARP.search(text, start.end(), stop) or _MACRO_NAMED_MASK.search(text, start.end(), stop):
            return True
    return False


_COMPARISON = lazy_regex(r"[!=]=")  # _MASK_COMPARES' operators


def _maybe_full_compare(view: Code) -> bool:
    """A ballot or __activemask() named, and an equality test somewhere in the file."""
    return not _COMPARED_NAMES.isdisjoint(view.words) and _COMPARISON.search(view.text) is not None


_LANE_MACRO_TEXT = lazy_regex(rf"#{_W}define[^\n]*threadIdx{_W}\.{_W}x{_W}(?:&|%|>>|/)")
_CANDIDATES: dict[str, CodeTest] = {
    "full-mask": _maybe_full_mask,
    "full-compare": _maybe_full_compare,
    "narrow-mask": _maybe_narrow_mask,
    "ballot-width": names_in(_BALLOT_NAMES | _BALLOT_WRAPPERS),
    "lane-math": _maybe_lane_math,
    "lane-macro": lambda view: _LANE_MACRO_TEXT.search(view.text) is not None,
    "size-constant": _maybe_size_constant,
    "literal-size": _maybe_literal_size,
    "warpsize-constant": names_in(frozenset({"warpSize"})),
    "size-name-use": _maybe_size_name_use,
    "row-shuffle": _maybe_row_shuffle,
    "macro-body": _maybe_macro_body,
}


def _validate(params: Mapping[str, Any]) -> None:
    if params.get("check") not in _CHECKS:
        raise ValueError(f"warp-size needs 'check': one of {', '.join(sorted(_CHECKS))}")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return _NEEDLES[params["check"]]


_IDENTIFIERS = {"full-mask": _SYNC_NAMES, "full-compare": _COMPARED_NAMES, "narrow-mask": _SYNC_NAMES,
                "ballot-width": _BALLOT_NAMES | _BALLOT_WRAPPERS, "literal-size": _INTRINSIC_NAMES,
                "warpsize-constant": frozenset({"warpSize"}), "row-shuffle": _INDEXED_NAMES}


@register("warp-size", validate=_validate, needles=_needles, candidates=lambda p: _CANDIDATES[p["check"]],
          identifiers=lambda p: _IDENTIFIERS.get(p["check"], frozenset()))
def match_warp_size(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The places where the rule's kind of warp-size-32 assumption shows."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    doc.expect(_QUERIES[params["check"]])  # now, before any rule's first query runs (the scan iterates them later)
    return _one_per_line(_CHECKS[params["check"]](doc))


def _one_per_line(hits: Iterator[Hit]) -> Iterator[Hit]:
    lines: set[int] = set()
    for hit in hits:
        if hit.line not in lines:  # one finding per line and rule keeps dense warp code readable
            lines.add(hit.line)
            yield hit
