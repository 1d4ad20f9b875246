"""CUDA / C / C++ rules on tiny inline sources: what must fire, what must not, and where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migrate import matchers
from migrate.config import Settings
from migrate.errors import RuleFileError
from migrate.model import FileKind, Finding, Severity, SourceFile
from migrate.parse.cuda import CudaDocument, parse_cuda
from migrate.ruleset import load, load_builtin
from migrate.assessment import assess
from migrate.report.json import render as render_json
from migrate.scan import scan, scan_file

from conftest import FIXTURES

KINDS = {".cu": FileKind.CUDA, ".cuh": FileKind.CUDA, ".cpp": FileKind.CPP, ".h": FileKind.CPP, ".c": FileKind.C}


def source_file(tmp_path: Path, code: str, name: str) -> SourceFile:
    path = tmp_path / name
    path.write_text(code, encoding="utf-8")
    return SourceFile(path, name, KINDS[path.suffix], path.stat().st_size)


def findings(tmp_path: Path, code: str, *, name: str = "k.cu", targets: tuple[str, ...] = ("gfx942",)) -> list[Finding]:
    result = scan_file(source_file(tmp_path, code, name), load_builtin(), Settings(targets=targets))
    assert result.skipped is None
    return sorted(result.findings)


def fired(tmp_path: Path, code: str, rule: str, **options: object) -> list[int]:
    """Lines where RULE fired."""
    return [f.line for f in findings(tmp_path, code, **options) if f.rule == rule]  # type: ignore[arg-type]


def document(tmp_path: Path, code: str) -> CudaDocument:
    source = source_file(tmp_path, code, "doc.cu")
    return parse_cuda(source, code)


REDUCE = """\
#define FULL_MASK 0xffffffff
__global__ void reduce(const float* in, float* out) {
  __shared__ float partial[32];
  int lane = threadIdx.x & 31;
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(FULL_MASK, v, o);
  if (lane == 0) partial[threadIdx.x >> 5] = v;
}
void host(const float* in, float* out) { reduce<<<1, 256>>>(in, out); }
"""


def test_reduction_kernel_gives_exactly_these_findings(tmp_path: Path) -> None:
    got = [(f.line, f.column, f.rule) for f in findings(tmp_path, REDUCE)]
    assert got == [
        (1, 9, "warp-full-mask"),
        (2, 17, "cuda-kernel-definition"),
        (3, 3, "warp-literal-32"),
        (4, 14, "warp-lane-math"),
        (6, 3, "warp-literal-32"),
        (6, 57, "warp-full-mask"),
        (7, 26, "warp-lane-math"),
        (9, 42, "cuda-kernel-launch"),
    ]


def test_warp_severity_follows_the_wavefront_of_the_target(tmp_path: Path) -> None:
    by_target = {
        target: {f.severity for f in findings(tmp_path, REDUCE, targets=(target,)) if f.rule.startswith("warp-")}
        for target in ("gfx942", "gfx1100")
    }
    assert by_target == {"gfx942": {Severity.HIGH}, "gfx1100": {Severity.LOW}}
    mixed = findings(tmp_path, REDUCE, targets=("gfx1100", "gfx90a"))
    assert {f.severity for f in mixed if f.rule == "warp-full-mask"} == {Severity.HIGH}


@pytest.mark.parametrize(
    "mask, expected",
    [
        ("0xffffffff", [2]), ("0xFFFFFFFFu", [2]), ("~0u", [2]), ("uint32_t(-1)", [2]), ("(unsigned)-1", [2]),
        ("static_cast<unsigned>(-1)", [2]), ("kFullMask", [2]), ("~0ull", []), ("-1", []), ("mask", []),
        ("__activemask()", []), ("0xffffffffffffffffull", []), ("0x0000ffff", []),
        # C++14 digit separators: the same 32-bit values, spelled in groups
        ("0xffff'ffffu", [2]), ("0xFFFF'FFFF", [2]), ("0xffff'ffff'ffff'ffffull", []), ("0x0000'ffff", []),
    ],
)
def test_full_mask_forms(tmp_path: Path, mask: str, expected: list[int]) -> None:
    code = f"__device__ float f(float v, unsigned mask) {{\n  return __shfl_xor_sync({mask}, v, 1);\n}}\n"
    assert fired(tmp_path, code, "warp-full-mask") == expected


@pytest.mark.parametrize(
    "mask, expected",
    [("~0", [2]), ("-1", [2]), ("~ 0", [2]), ("- 1", [2]), ("~0ull", []), ("-1ll", []), ("~0u", []), ("-1L", [])],
)
def test_int_all_ones_masks_are_32_bit(tmp_path: Path, mask: str, expected: list[int]) -> None:
    """`-1` and `~0` are ints: HIP's *_sync builtins assert a 64-bit mask type, so they are narrow, not full."""
    code = f"__device__ float f(float v) {{\n  return __shfl_xor_sync({mask}, v, 16);\n}}\n"
    assert fired(tmp_path, code, "warp-narrow-mask") == expected
    assert fired(tmp_path, code, "warp-full-mask") == ([2] if mask == "~0u" else [])


def test_digit_separated_masks_are_read_as_their_value(tmp_path: Path) -> None:
    code = """\
__global__ void carry(unsigned *words, unsigned n) {
  unsigned w = words[threadIdx.x];
  w += __shfl_down_sync(0x8000'0001u, w, 31);
  const unsigned int top = 0xFFFF'FFFFu;
  char tag = 'f';
  words[0] = w + (tag == 'a' ? top : 1'000u);
  __syncwarp(0xffff'ffff);
}
"""
    found = [(f.line, f.rule) for f in findings(tmp_path, code) if f.rule.startswith("warp-")]
    assert found == [(3, "warp-narrow-mask"), (7, "warp-full-mask")]


def test_mask_constant_is_resolved_through_its_definition(tmp_path: Path) -> None:
    code = (
        "#define ALL_LANES 0xffffffffu\n#define FULL_MASK __activemask()\n"
        "__device__ float f(float v) {\n  v += __shfl_sync(ALL_LANES, v, 0);\n"
        "  return __shfl_sync(FULL_MASK, v, 0);\n}\n"
    )
    assert fired(tmp_path, code, "warp-full-mask") == [1, 4]


def test_shuffle_mask_macros_by_name(tmp_path: Path) -> None:
    # the header that defines the mask, and a helper file that uses it unbound: both are the 32-lane mask; a
    # lower-case shfl_mask is a variable (a parameter here, 64-bit) and is not judged by its name
    assert fired(tmp_path, "#define SHFL_MASK 0xffffffff\n#define SHFL_LANES 0xffffffff\n", "warp-full-mask",
                 name="conv.cuh") == [1]
    code = (
        "__device__ float f(float v, unsigned long long shfl_mask) {\n  v += __shfl_xor_sync(SHFL_MASK, v, 16);\n"
        "  return v + __shfl_xor_sync(shfl_mask, v, 1);\n}\n"
    )
    assert fired(tmp_path, code, "warp-full-mask") == [2]


def test_multi_line_asm_is_reported_at_its_first_instruction(tmp_path: Path) -> None:
    code = (
        "__global__ void k(int *p) {\n  asm volatile(\n      \"{\\n\"\n      \".reg .pred q;\\n\"\n"
        "      \"setp.ne.b32 q, %0, 0;\\n\"\n      \"}\\n\" :: \"r\"(p[0]));\n"
        "  asm volatile(\"bar.sync 0;\");\n}\n"
    )
    assert fired(tmp_path, code, "inline-ptx") == [4, 7]


def test_ptx_blocks_a_line_of_portable_code_replaces_are_not_blockers(tmp_path: Path) -> None:
    """Video SIMD and register moves have their own rules (high, medium); mixed with other PTX it stays inline-ptx."""
    code = (
        '#define SAT(o, a, b) asm("vsub4.u32.u32.u32.sat %0, %1, %2, %3;" : "=r"(o) : "r"(a), "r"(b), "r"(0))\n'
        "__device__ unsigned long long join(unsigned lo, unsigned hi) {\n  unsigned long long r;\n"
        '  asm("mov.b64 %0, {%1, %2};" : "=l"(r) : "r"(lo), "r"(hi));\n'
        '  asm("{ mov.b64 %0, {%1, %2}; bar.sync 0; }" : "=l"(r) : "r"(lo), "r"(hi));\n  return r;\n}\n'
    )
    ptx = [(f.line, f.rule, f.severity) for f in findings(tmp_path, code) if f.category == "inline-ptx"]
    assert ptx == [(1, "ptx-simd-video", Severity.HIGH), (4, "ptx-register-move", Severity.MEDIUM),
                   (5, "inline-ptx", Severity.BLOCKER)]


def _ptx_of(tmp_path: Path, fixture: str) -> list[tuple[int, str, Severity]]:
    code = (Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "cuda" / fixture).read_text(encoding="utf-8")
    return [(f.line, f.rule, f.severity) for f in findings(tmp_path, code) if f.category == "inline-ptx"]


def test_ptx_big_integer_arithmetic_is_a_high_rewrite_of_its_helpers(tmp_path: Path) -> None:
    """A block of integer add/sub/mul/mad with or without the carry flag (one asm, or one instruction per helper or
    macro) is ptx-carry-chain's; a float add, or a chain beside a predicate, stays inline-ptx."""
    high, blocker = Severity.HIGH, Severity.BLOCKER
    assert _ptx_of(tmp_path, "ptx_carry_chain.cu") == [
        (7, "ptx-carry-chain", high), (13, "ptx-carry-chain", high), (14, "ptx-carry-chain", high),
        (19, "ptx-carry-chain", high), (26, "ptx-carry-chain", high), (35, "inline-ptx", blocker),
        (42, "inline-ptx", blocker)]


def test_ptx_bit_manipulation_is_high_and_a_lane_register_or_shuffle_beside_it_is_not(tmp_path: Path) -> None:
    high, blocker = Severity.HIGH, Severity.BLOCKER
    assert _ptx_of(tmp_path, "ptx_bit_manipulation.cu") == [
        (7, "ptx-bit-manipulation", high), (14, "ptx-bit-manipulation", high), (21, "ptx-bit-manipulation", high),
        (28, "ptx-bit-manipulation", high), (35, "ptx-bit-manipulation", high), (45, "inline-ptx", blocker),
        (53, "inline-ptx", blocker)]


def test_ballot_width(tmp_path: Path) -> None:
    code = """\
__device__ int f(bool p) {
  uint32_t a = __ballot_sync(~0ull, p);
  auto b = __ballot_sync(~0ull, p);
  unsigned long long c = __ballot(p);
  uint64_t d = __activemask();
  return __popc(b) + __popcll(c) + __popcll(d) + a + __ffs(__ballot(p));
}
"""
    assert fired(tmp_path, code, "warp-ballot-32bit") == [2, 6]


BALLOT_ASSIGNED = """\
struct Rows {
  unsigned active;
  unsigned long long wide;
  __device__ void take() { active = __activemask(); }
  __device__ void take_all() { wide = __activemask(); }
};
__device__ int spin(bool ready) {
  uint32_t seen = 0u;
  do { seen = __ballot_sync(~0ull, ready); } while (seen == 0);
  auto votes = 0ull;
  votes = __ballot_sync(~0ull, ready);
  return __popcll(votes) + __popc(seen);
}
"""


def test_ballot_assigned_to_a_name_declared_32_bit(tmp_path: Path) -> None:
    # the declaration holds no ballot (a field, a zero-initialised spin variable); the assignment is where lanes
    # 32-63 are dropped. A 64-bit or deduced name is the wavefront's mask; the count of the narrow one is reported too
    assert fired(tmp_path, BALLOT_ASSIGNED, "warp-ballot-32bit") == [4, 9, 12]


def test_lane_math_needs_a_thread_index(tmp_path: Path) -> None:
    code = """\
__device__ void f(int* out, int n, int lane_id) {
  int t = threadIdx.x;
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  out[0] = t % 32;
  out[1] = lane_id & 0x1f;
  out[2] = gid >> 5;
  out[3] = n & 31;
  out[4] = threadIdx.x % warpSize;
  out[5] = 31 & threadIdx.x;
}
int host_math(int tid) { return tid & 31; }
"""
    assert fired(tmp_path, code, "warp-lane-math") == [4, 5, 9]


def test_lane_macros_resolve_their_operand_in_the_file(tmp_path: Path) -> None:
    """A lane/warp id macro with a literal or a macro of the file defined once to 31, 32 or 5; not a shift by 4, an
    operand with two definitions (one per platform) or a literal that starts a longer expression."""
    code = """\
#define LOG_A 5
#define LOG_B 4
#ifdef USE_ROCM
#define LOG_C 6
#else
#define LOG_C 5
#endif
#define ID_1 (threadIdx.x & 0x1F)
#define ID_2 (threadIdx.x >> LOG_A)
#define ID_3 (threadIdx.x >> LOG_B)
#define ID_4 (threadIdx.x >> LOG_C)
#define ID_5 (threadIdx.x / 32 + 1)
#define ID_6 ( threadIdx.x / 32 )
"""
    assert fired(tmp_path, code, "warp-lane-macro") == [8, 9, 13]


def test_warp_code_in_a_multi_line_function_like_macro_is_reported_line_by_line(tmp_path: Path) -> None:
    """A statement macro's body is one unparsed preproc_arg: its all-lanes masks and lane maths are read from its
    text, each on its own line and column; a 64-bit mask, warpSize and a width of 16 stay quiet."""
    code = """\
#define COUNT_EMPTY(flag, n) \\
  int is_empty = (flag);   \\
  unsigned bits = __ballot_sync(0xffffffff, is_empty); \\
  if (threadIdx.x % 32 == 0) n += __popc(bits);
#define WIDE_SUM(x) \\
  x += __shfl_xor_sync(~0ull, x, 16); \\
  x += __shfl_xor_sync(0xffffffffffffffff, x, threadIdx.x % warpSize);
#define HALF_GROUP(x) (threadIdx.x / 16 + __shfl_up(x, 1, 16))
"""
    hits = [(f.line, f.column) for f in findings(tmp_path, code) if f.rule == "warp-macro-body"]
    assert hits == [(3, 19), (4, 7)]


def test_warp_size_constants(tmp_path: Path) -> None:
    code = """\
#define WARP_SIZE (32)
#define C10_WARP_SIZE 32
#define WARP_SIZE_LOG2 5
#define WARPS_PER_BLOCK 32
constexpr int kWarpSize = 64;
int warp_threads = 32;
template <int kThreadsPerWarp = 32> struct T {};
"""
    assert fired(tmp_path, code, "warp-size-constant", name="w.h") == [1, 2, 6, 7]



ACCESSORS = """\
namespace gpu {
__host__ __device__ constexpr inline int warp_size() { return 32; }
__host__ __device__ constexpr unsigned WarpFullMask() { return 0xffffffffu; }
struct Arch {
  static constexpr int ThreadsPerWarp() noexcept { return 32; }
  static constexpr unsigned int warp_converged_mask() { return 0xffffffff; }
};
constexpr int warps_per_block() { return 32; }
constexpr int warp_size_gfx9() { return 64; }
inline unsigned event_mask() { return 0xFFFFFFFF; }
inline int warp_width(int w) { if (w) return 32; return 64; }
}  // namespace gpu
"""


def test_warp_size_and_lane_mask_accessors(tmp_path: Path) -> None:
    # a function whose body returns 32 (or an all-lanes mask) is the constant in accessor form (RAFT, QUDA, XLA);
    # a count of warps, a 64, a mask not named for a warp and a body that chooses are not
    assert fired(tmp_path, ACCESSORS, "warp-size-constant", name="arch.cuh") == [2, 5]
    assert fired(tmp_path, ACCESSORS, "warp-full-mask", name="arch.cuh") == [3, 6]


ACCESSOR_CALLS = """\
__device__ float reduce(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(gpu::WarpFullMask(), v, o);
  return v;
}
__device__ unsigned long long warp_lanes_mask() { return ~0ull; }
__device__ float reduce_wave(float v) { return v + __shfl_xor_sync(warp_lanes_mask(), v, 1); }
__device__ float broadcast(float v, unsigned row) { return __shfl_sync(row_mask(row), v, 0); }
"""


def test_warp_mask_accessor_calls(tmp_path: Path) -> None:
    # an accessor named for the warp's mask, defined elsewhere, is the 32-bit constant (as FULL_MASK is); one this
    # file defines as 64-bit is the wavefront's, and a mask computed by another helper is not an all-lanes one
    assert fired(tmp_path, ACCESSOR_CALLS, "warp-full-mask") == [2]



NAMED_BLOCK = """\
__global__ void smooth(float* x) {
  float v = x[threadIdx.y * blockDim.x + threadIdx.x];
  v += __shfl_down_sync(~0ull, v, 1);
  x[threadIdx.y * blockDim.x + threadIdx.x] = v;
}
void launch(float* x, int rows) {
  const int width = 32;
  const int height = rows;
  dim3 block(width, 8);
  dim3 grid(height, 1);
  smooth<<<grid, block>>>(x);
}
void launch_wave(float* x) {
  constexpr int lanes = 64;
  dim3 block(lanes, 4);
  smooth<<<1, block>>>(x);
}
"""


def test_block_width_through_a_constant_of_32(tmp_path: Path) -> None:
    # a dim3 block whose width is a name bound to 32, in a file that shuffles across threadIdx.x: two block rows
    # share a 64-lane wavefront. A width bound to 64 (or to a run-time value) is not, nor the same launch in a file
    # without warp intrinsics
    assert fired(tmp_path, NAMED_BLOCK, "warp-literal-32") == [9]
    quiet = NAMED_BLOCK.replace("  v += __shfl_down_sync(~0ull, v, 1);\n", "")
    assert fired(tmp_path, quiet, "warp-literal-32") == []


def test_warp_size_capped_at_32_by_a_conditional(tmp_path: Path) -> None:
    # the softmax launch shape: a row of n <= 32 elements takes n lanes, longer rows one 32-lane warp
    code = """\
int warp_size = (n < 32) ? n : 32;
constexpr int kWarpWidth = kCols <= 32 ? kCols : 32;
int warp_lanes = (n >= 32) ? 32 : n;
int warp_size2 = (n < 32) ? m : 32;
int warp_size3 = (n < 64) ? n : 64;
int tile = (n < 32) ? n : 32;
"""
    assert fired(tmp_path, code, "warp-size-constant", name="w.cu") == [1, 2, 3]


def test_literal_32_only_in_functions_using_warp_intrinsics(tmp_path: Path) -> None:
    code = """\
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(~0ull, v, o);
  return v;
}
__global__ void uses_helper(float* x) {
  __shared__ float slots[32];
  slots[0] = warp_sum(x[0]);
}
__global__ void transpose(float* x) {
  __shared__ float tile[32];
  for (int i = 0; i < 32; ++i) tile[i] = x[i];
}
"""
    assert fired(tmp_path, code, "warp-literal-32") == [2, 6]


def test_fixed_32_lane_widths_and_tiles(tmp_path: Path) -> None:
    code = """\
__device__ float f(float v, cooperative_groups::thread_block block) {
  v += __shfl_xor_sync(~0ull, v, 1, 32);
  v += __shfl_down(v, 1, 32);
  v += __shfl_xor_sync(~0ull, v, 1, 16);
  auto tile = cooperative_groups::tiled_partition<32>(block);
  auto half = cooperative_groups::tiled_partition<16>(block);
  return v + tile.thread_rank() + half.thread_rank();
}
"""
    assert fired(tmp_path, code, "warp-literal-32") == [2, 3, 5]


def test_a_header_that_defines_the_device_pass_macros_by_cuda_arch(tmp_path: Path) -> None:
    # no device code in the header, but the branch #defines what the kernels including it expand
    code = """\
#pragma once
#ifdef __CUDA_ARCH__
#define GRID_CHECK(x) assert(x)
#else
#define GRID_CHECK(x) grid::fail_unless((x), #x)
#endif
#ifdef __CUDA_ARCH__
static const int kOnDevice = 1;
#endif
"""
    assert fired(tmp_path, code, "cuda-arch-device-pass", name="check.h") == [2, 7]
    quiet = "#pragma once\n#ifdef __CUDA_ARCH__\nstatic const int kOnDevice = 1;\n#endif\n"
    assert fired(tmp_path, quiet, "cuda-arch-device-pass", name="facts.h") == []


def test_a_cuda_build_switch_between_the_rows_of_a_table(tmp_path: Path) -> None:
    # tree-sitter leaves an #ifdef inside an initializer list out of the tree: the directive is still a test; the
    # #endif closing each block of the switch is where a port adds its HIP rows (not those of ZIP_WITH_CUDA_GRAPHS)
    code = """\
#ifdef ZIP_WITH_CUDA
void pack_gpu(void);
#endif
static void (*packers[2])(void) = {
  pack_cpu,
#ifdef ZIP_WITH_CUDA
  pack_gpu,
#endif
#ifdef ZIP_WITH_CUDA_GRAPHS
  pack_graph,
#endif
};
"""
    found = [f for f in findings(tmp_path, code) if f.rule == "cuda-build-switch"]
    assert [(f.line, [o.line for o in f.occurrences]) for f in found] == [(1, [1, 3, 6, 8])]


def test_a_warp_helper_given_a_literal_width_of_32(tmp_path: Path) -> None:
    # a reduction helper defined in another header, told its width by a literal; its type argument, a smaller
    # width, a name for no warp's lanes, a GEMM's warp tile and a kernel's address among its instantiations (the
    # launch picks the shape) are not a 32-lane width
    code = """\
__global__ void row_sums(const float* x, float* out) {
  float v = x[threadIdx.x];
  v = ops::warpReduceSum<32>(v);
  float m = warp_reduce_max<float, 32>(v);
  float h = warpReduceSum<16>(v);
  float t = warpReduceSum<float>(v);
  float c = tileLoad<32>(x);
  float g = warp_tile_copy<32>(x);
  auto k = &softmax_warp_forward<float, float, float, 2, 1, 32, 1>;
  out[blockIdx.x] = v + m + h + t + c + g;
}
"""
    assert fired(tmp_path, code, "warp-literal-32") == [3, 4]


def test_default_mask_parameter_and_default_warp_size(tmp_path: Path) -> None:
    code = """\
template <typename T, int W = warpSize>
__device__ T shfl(T v, int lane, int width = warpSize, unsigned mask = 0xffffffff, unsigned other = 0xffffffff) {
  return __shfl_sync(mask, v, lane, width);
}
"""
    assert fired(tmp_path, code, "warp-full-mask") == [2]
    assert fired(tmp_path, code, "warpsize-compile-time") == [1]


def test_warpsize_as_compile_time_constant(tmp_path: Path) -> None:
    code = """\
template <int N> struct Buf { float v[N]; };
__global__ void __launch_bounds__(warpSize * 4) k(float* x) {
  Buf<warpSize> buf;
  float slots[warpSize];
  constexpr int lanes = warpSize;
  int runtime = warpSize;
  for (int o = warpSize / 2; o > 0; o /= 2) x[o] = runtime;
}
"""
    assert fired(tmp_path, code, "warpsize-compile-time") == [2, 3, 4, 5]


def test_inline_ptx_in_device_code_macros_and_not_in_host_asm(tmp_path: Path) -> None:
    code = """\
#define LANE_ID(r) asm("mov.u32 %0, %%laneid;" : "=r"(r))
__device__ void d() { asm volatile("exit;"); asm volatile("s_nop 0"); }
void host() {
  asm volatile("pause");
  asm volatile("" ::: "memory");
  asm volatile("bar.sync 0;");
}
"""
    found = [(f.line, f.column) for f in findings(tmp_path, code, name="a.cpp") if f.rule == "inline-ptx"]
    assert found == [(1, 20), (2, 23), (6, 3)]


def test_device_side_launch_is_dynamic_parallelism(tmp_path: Path) -> None:
    code = """\
#define HOST_DEVICE __host__ __device__
__global__ void child(int* x) {}
__global__ void parent(int* x) { child<<<1, 1>>>(x); }
HOST_DEVICE void both(int* x) { child<<<1, 1>>>(x); }
void host(int* x) { child<<<1, 1>>>(x); }
"""
    rules = [(f.line, f.rule) for f in findings(tmp_path, code) if "launch" in f.rule or "parallelism" in f.rule]
    assert rules == [(3, "cuda-dynamic-parallelism"), (4, "cuda-dynamic-parallelism"), (5, "cuda-kernel-launch")]


def test_kernel_head_written_in_two_branches_opens_one_block(tmp_path: Path) -> None:
    # a kernel whose parameter list differs per #ifdef branch, each head with its own `{`: the braces of the first
    # branch alone count, so the host function after the kernel is host code again
    code = """\
#ifdef USE_TEXTURE
__global__ void fill(int n, int* out) {
#elif defined(USE_LDG)
__global__ void fill(int n, const int* in, int* out) {
#else
__global__ void fill(int n, const int* __restrict__ in, int* out) {
#endif
  if (threadIdx.x < n) out[threadIdx.x] = 0;
}
void run(int n, int* out) { fill<<<1, n>>>(n, out); }
__global__ void outer(int n, int* out) {
#if N_WAYS > 1
  if (n > 1) {
#else
  if (n > 0) {
#endif
    fill<<<1, n>>>(n, out);
  }
}
"""
    rules = [(f.line, f.rule) for f in findings(tmp_path, code) if "launch" in f.rule or "parallelism" in f.rule]
    assert rules == [(10, "cuda-kernel-launch"), (17, "cuda-dynamic-parallelism")]


def test_launch_in_a_macro_or_function_named_like_a_qualifier_is_host_code(tmp_path: Path) -> None:
    # a function or #define whose own name ends in _GLOBAL / _DEVICE (global alignment, a device check) is host
    # code; a qualifier macro before a function's name still makes it device code
    code = """\
__global__ void child(int* x) {}
#define RUN_GLOBAL(s) \\
  case s: { child<<<1, 1>>>(nullptr); break; }
void ALIGN_GLOBAL(int* x) { child<<<1, 1>>>(x); }
MY_DEVICE void nested(int* x) { child<<<1, 1>>>(x); }
#define ON_DEVICE(d, body) do { body; child<<<1, 1>>>(nullptr); } while (0)
"""
    rules = [(f.line, f.rule) for f in findings(tmp_path, code) if "launch" in f.rule or "parallelism" in f.rule]
    assert rules == [(3, "cuda-kernel-launch"), (4, "cuda-kernel-launch"), (5, "cuda-dynamic-parallelism"),
                     (6, "cuda-kernel-launch")]


@pytest.mark.parametrize(
    "opening, middle",
    [
        ("#ifdef __HIP_PLATFORM_AMD__", "#else"),
        ("#ifndef USE_ROCM", "#else"),
        ("#if defined(__HIP__) && !defined(FOO)", "#else"),
        ("#if !defined(USE_ROCM)", "#else"),
        ("#if __CUDA_ARCH__ >= 800", "#elif defined(__HIPCC__)"),
        ("#ifdef __CUDACC__", "#elifdef USE_HIP"),
    ],
)
def test_both_branches_of_a_hip_guard_are_guarded(tmp_path: Path, opening: str, middle: str) -> None:
    code = f"int a;\n{opening}\nint b;\n{middle}\nint c;\n#endif\nint d;\n"
    doc = document(tmp_path, code)
    assert [line for line in range(1, 8) if doc.is_guarded(line)] == [2, 3, 4, 5, 6]


def test_guard_on_another_macro_is_not_a_hip_guard(tmp_path: Path) -> None:
    doc = document(tmp_path, "#ifndef MY_HEADER_H\n#define MY_HEADER_H\n__global__ void k();\n#endif\n")
    assert doc.guarded_ranges == []


def test_guarded_findings_are_info_not_work(tmp_path: Path) -> None:
    code = '#ifndef USE_ROCM\n__device__ void f() { asm("exit;"); }\n#endif\n__device__ void g() { asm("exit;"); }\n'
    result = scan_file(source_file(tmp_path, code, "g.cu"), load_builtin(), Settings())
    # the #ifndef itself is the file's own ROCm handling: an info note, never a guarded site
    assert sorted((f.line, f.rule, f.severity) for f in result.findings) == [
        (1, "hip-branch-present", Severity.INFO), (4, "inline-ptx", Severity.BLOCKER)]
    assert [(f.line, f.rule, f.severity, f.status) for f in result.guarded_findings] == [
        (2, "inline-ptx", Severity.INFO, "guarded")]
    assert result.guarded == 1


def test_the_json_report_lists_guarded_sites_as_info(tmp_path: Path) -> None:
    (tmp_path / "g.cu").write_text(
        '#ifndef USE_ROCM\n__device__ void f() { asm("exit;"); }\n#endif\n__device__ void g() { asm("exit;"); }\n')
    data = json.loads(render_json(assess(scan(tmp_path, Settings()))))
    # the #ifndef is the file's own ROCm handling (hip-branch-present); in the branch a HIP build never compiles
    assert [(f["line"], f["rule"], f["severity"], f["status"]) for f in data["findings"]] == [
        (1, "hip-branch-present", "info", "guarded"), (2, "inline-ptx", "info", "guarded"),
        (4, "inline-ptx", "blocker", "remaining")]
    assert (data["summary"]["findings"], data["summary"]["guarded_findings"]) == (1, 2)


def test_compat_defines_silence_the_names_they_map(tmp_path: Path) -> None:
    code = """\
#ifdef USE_ROCM
#define cudaMalloc hipMalloc
using cudaStream_t = hipStream_t;
#endif
void f(void** p, cudaStream_t s) { cudaMalloc(p, 4); cudaFree(*p); }
"""
    assert [(f.line, f.symbol) for f in findings(tmp_path, code) if f.rule == "cuda-runtime-api"] == [(5, "cudaFree")]


def test_qualified_user_names_are_not_the_cuda_api(tmp_path: Path) -> None:
    code = "void f(void* p) { mylib::cudaFree(p); obj.cudaFree(p); ::cudaFree(p); cudaFree(p); }\n"
    assert [f.column for f in findings(tmp_path, code, name="u.cpp") if f.rule == "cuda-runtime-api"] == [58, 71]


def test_macro_bodies_are_code(tmp_path: Path) -> None:
    code = '#define CUDA_CHECK(x) do { if ((x) != cudaSuccess) puts(cudaGetErrorString(x)); } while (0)\n'
    assert [f.symbol for f in findings(tmp_path, code, name="m.h")] == ["cudaSuccess", "cudaGetErrorString"]


def test_suppression_on_the_line_or_the_line_above(tmp_path: Path) -> None:
    code = """\
__device__ void f() {
  asm("exit;");  // migrate: ignore[inline-ptx]
  // migrate: ignore[inline-ptx]
  asm("exit;");
  // migrate: ignore[warp-full-mask]
  asm("exit;");
  asm("exit;");  // migrate: ignore
}
"""
    assert fired(tmp_path, code, "inline-ptx") == [6]


def test_include_suggests_the_hip_header(tmp_path: Path) -> None:
    code = '#include <cuda_runtime.h>\n#include "cublas_v2.h"\n#include <cudnn.h>\n#include <cute/tensor.hpp>\n'
    got = [(f.rule, f.severity.label, f.hip) for f in findings(tmp_path, code)]
    assert got == [
        ("cuda-runtime-include", "low", "#include <hip/hip_runtime.h>"),
        ("cuda-library-include", "low", "#include <hipblas/hipblas.h>"),
        ("cudnn-include", "high", "#include <miopen/miopen.h> (MIOpen)"),
        ("cutlass-include", "high", "Composable Kernel (ck::), hipBLASLt, or rocWMMA"),
    ]


def test_device_qualifier_macros_make_device_functions(tmp_path: Path) -> None:
    code = """\
#define DEVICE_INLINE __device__ __forceinline__
DEVICE_INLINE float a() { return 0; }
C10_HOST_DEVICE float b() { return 0; }
struct S { __host__ __device__ int c() const { return 1; } };
void d() { auto l = [=] __device__ (int i) { return i; }; }
"""
    doc = document(tmp_path, code)
    assert [(doc.point(f.start_byte)[0], f.is_device) for f in doc.functions] == [
        (2, True), (3, True), (4, True), (5, False), (5, True),
    ]


def test_every_cuda_rule_feeds_the_prefilter() -> None:
    for rule in load_builtin().rules:
        if rule.source.rsplit("/", 1)[-1].startswith("cuda-"):
            matcher = matchers.get(rule.match["matcher"])
            assert matcher is not None and matcher.fast.needles is not None
            assert matcher.fast.needles(rule.match), rule.id


@pytest.mark.parametrize(
    "match, error",
    [
        ({"matcher": "cuda-query", "query": "(identifier) @name"}, "capture named @hit"),
        ({"matcher": "cuda-query", "query": "(no_such_node) @hit"}, "bad tree-sitter query"),
        ({"matcher": "cuda-query", "query": "(identifier) @hit", "where": "gpu"}, "'where'"),
        ({"matcher": "warp-size", "check": "everything"}, "warp-size needs 'check'"),
        ({"matcher": "inline-asm", "pattern": "("}, "missing"),
        ({"matcher": "cuda-include", "headers": []}, "non-empty 'headers'"),
        ({"matcher": "c-string", "needles": ["=sm_"], "pattern": "-arch=sm_"}, "opening quote"),
        ({"matcher": "c-string", "needles": ["=sm_"], "pattern": '"(['}, "bad 'pattern' regex"),
        ({"matcher": "c-string", "needles": [], "pattern": '"-arch=sm_"'}, "'needles'"),
        ({"matcher": "cuda-names", "names": ["rsqrtf"], "where": "kernel"}, "'where'"),
        ({"matcher": "cuda-mask-words", "names": ["x"]}, "takes no parameters"),
        ({"matcher": "cuda-compare", "names": ["CUDA_VERSION"], "uses": True, "branches": True}, "exclude each other"),
        ({"matcher": "cuda-compare", "names": ["CUDA_VERSION"], "tested": ["X"]}, "'tested' needs 'branches: true'"),
        ({"matcher": "cuda-compare", "names": ["CUDA_VERSION"], "branches": True, "tested": "X"}, "'tested' must"),
        ({"matcher": "cuda-compare", "names": ["__CUDA_ARCH__"], "bodies": "some"}, "'bodies' must be"),
        ({"matcher": "cuda-compare", "names": ["__CUDA_ARCH__"], "uses": True, "bodies": "only"}, "comparisons only"),
    ],
)
def test_broken_cuda_rules_name_the_file_and_rule(tmp_path: Path, match: dict[str, object], error: str) -> None:
    import yaml

    rule = {"id": "broken-rule", "title": "t", "category": "other", "languages": ["cuda"], "severity": "low",
            "message": "m", "match": match}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"rules": [rule]}), encoding="utf-8")
    with pytest.raises(RuleFileError, match=r"bad\.yaml: rule broken-rule: .*") as caught:
        load([tmp_path])
    assert error in str(caught.value)


def test_lambdas_inherit_the_execution_space_of_their_function(tmp_path: Path) -> None:
    code = """\
__global__ void k(int* x) {
  auto body = [&](int i) { x[i] = threadIdx.x; };
  body(0);
}
void host(int* x) {
  auto launch = [&]() { k<<<1, 1>>>(x); };
  launch();
}
"""
    doc = document(tmp_path, code)
    assert doc.in_device_code(code.index("x[i]")) and not doc.in_device_code(code.index("k<<<"))
    launches = [f.rule for f in findings(tmp_path, code) if "launch" in f.rule or "parallel" in f.rule]
    assert launches == ["cuda-kernel-launch"]


def test_needles_never_hide_a_finding_in_the_fixtures() -> None:
    from conftest import FIXTURES

    rules = [r for r in load_builtin().rules if r.source.rsplit("/", 1)[-1].startswith("cuda-")]
    for path in sorted((FIXTURES / "rules" / "cuda").iterdir()):
        text = path.read_text(encoding="utf-8")
        doc = parse_cuda(SourceFile(path, path.name, KINDS[path.suffix], len(text)), text)
        for rule in rules:
            matcher = matchers.get(rule.match["matcher"])
            assert matcher is not None and matcher.fast.needles is not None
            if list(matcher.function(doc, rule.match)):
                assert any(n in text for n in matcher.fast.needles(rule.match)), (path.name, rule.id)


def test_helpers_named_for_warps_mark_warp_code(tmp_path: Path) -> None:
    code = """\
__global__ void k(float* x) {
  __shared__ float sums[32];
  sums[threadIdx.y] = warp_reduce_sum(x[threadIdx.x]);
}
"""
    assert fired(tmp_path, code, "warp-literal-32") == [2]


def test_intrinsics_redefined_by_a_hip_compat_macro_are_not_flagged(tmp_path: Path) -> None:
    code = """\
#ifdef GGML_USE_HIP
#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)
#endif
__device__ float f(float x) { return __shfl_xor_sync(0xffffffff, x, 1, 64) + __shfl_sync(0xffffffff, x, 0); }
"""
    assert [f.column for f in findings(tmp_path, code) if f.rule == "warp-full-mask"] == [90]


# --- the corrected API map (shared reference README, Corrections) ---

CORRECTED = """\
__device__ float2 f(float a, __nv_bfloat16 b, __half2 h) {
  __nv_bfloat16 c = __float2bfloat16(a);
  float d = __bfloat162float(b) + __low2bfloat16(__float22bfloat162_rn(make_float2(a, a)));
  __half2 m = __hmax2(h, __hmin2(h, make_half2(a, a)));
  return make_float2(saturate(d), __shfl_xor_sync(~0ull, d, 1));
}
"""


def test_names_the_corrected_map_declares_are_never_no_hip_equivalent(tmp_path: Path) -> None:
    got = findings(tmp_path, CORRECTED)
    assert [f for f in got if f.rule == "cuda-unsupported-api"] == []
    assert not any("no HIP" in f.message for f in got)


def test_a_name_with_no_hip_name_needs_a_look_at_medium(tmp_path: Path) -> None:
    got = [f for f in findings(tmp_path, "__device__ float f(float a) { return __fadd_rd(a, a); }\n")
           if f.rule == "cuda-unsupported-api"]
    assert [(f.line, f.severity, f.symbol) for f in got] == [(1, Severity.MEDIUM, "__fadd_rd")]
    assert "check your ROCm release's headers" in got[0].message and "rewrite this use by hand" not in got[0].message


def test_the_bf16_pair_type_is_a_rename_not_a_name_hip_lacks(tmp_path: Path) -> None:
    code = "__global__ void k(const __nv_bfloat162* x, __nv_bfloat162_raw r) { __nv_bfloat162 v = x[0]; }\n"
    got = [(f.rule, f.severity, f.symbol, f.hip) for f in findings(tmp_path, code)
           if f.rule in ("cuda-runtime-api", "cuda-unsupported-api")]
    assert got == [("cuda-runtime-api", Severity.LOW, "__nv_bfloat162", "__hip_bfloat162"),
                   ("cuda-unsupported-api", Severity.MEDIUM, "__nv_bfloat162_raw", None),
                   ("cuda-runtime-api", Severity.LOW, "__nv_bfloat162", "__hip_bfloat162")]


def test_the_names_hip_declares_are_the_ports_own_renames() -> None:
    from migrate.engine_rules import engine_rules
    rules = {r.id: r for r in load_builtin().rules}
    declared = rules["cuda-runtime-api"].match["hip_declares"]
    assert declared == rules["cuda-unsupported-api"].match["hip_declares"]
    renames = engine_rules().versioned_renames
    assert {name: renames[name][1] for name in declared} == declared


def test_hip_declares_must_name_a_cuda_name_of_the_map(tmp_path: Path) -> None:
    rule = ("rules:\n  - {id: x, title: t, category: other, languages: [cuda], severity: low, message: m,\n"
            "     match: {matcher: cuda-api, libraries: [device], with_hip: true, hip_declares: {__nv_madeup: __hip_madeup}}}\n")
    (tmp_path / "r.yaml").write_text(rule, encoding="utf-8")
    with pytest.raises(RuleFileError, match="__nv_madeup"):
        load([tmp_path])


def test_a_name_absent_from_the_map_is_not_reported_as_unsupported(tmp_path: Path) -> None:
    code = "__device__ float f(float a) { return __nv_made_up_intrinsic(a); }\n"
    assert fired(tmp_path, code, "cuda-unsupported-api") == []


# --- build words and link libraries outside C++ (setup.py, Python build helpers, Makefiles) ---

def build_findings(tmp_path: Path, code: str, name: str, kind: FileKind) -> list[tuple[int, str]]:
    path = tmp_path / name
    path.write_text(code, encoding="utf-8")
    result = scan_file(SourceFile(path, name, kind, path.stat().st_size), load_builtin(), Settings())
    assert result.skipped is None
    return sorted((f.line, f.rule) for f in result.findings if f.rule in BUILD_RULES)


BUILD_RULES = {"nvcc-only-flags", "cuda-link-library", "tensorrt-link", "arch-specific-sources", "clang-cuda-arch-flag",
               "nvcc-flag-hipcc-rejects", "nvcc-flag-hipcc-ignores"}


def test_nvrtc_options_hiprtc_rejects_are_whole_literals(tmp_path: Path) -> None:
    """The options hipRTC stops on, whole literals or with their value appended; not clang's spelling, a message
    naming one or a comment."""
    code = (FIXTURES / "rules" / "cuda" / "rtc_options.cpp").read_text(encoding="utf-8")
    found = [f for f in findings(tmp_path, code, name="rtc_options.cpp") if f.rule == "nvrtc-option-hiprtc-rejects"]
    assert [(f.line, f.severity, f.symbol) for f in found] == [
        (10, Severity.MEDIUM, '"--use_fast_math"'), (12, Severity.MEDIUM, '"--extra-device-vectorization"'),
        (15, Severity.MEDIUM, '"--maxrregcount="'), (17, Severity.MEDIUM, '"--include-path="')]


def test_extra_device_vectorization_stops_hipcc_in_an_extension_build_and_a_cmake_list(tmp_path: Path) -> None:
    """--extra-device-vectorization (hipcc 5.2: "unsupported option") in a load() flag list is high, in a CMake
    option list the build rule's low; not a message that names it."""
    helper = (
        "from torch.utils.cpp_extension import load\n"
        "cflags = ['-O3', '--extra-device-vectorization']\n"
        "print('add --extra-device-vectorization for speed')\n"
        "mod = load('scan', ['scan.cu'], extra_cuda_cflags=cflags)\n"
    )
    assert build_findings(tmp_path, helper, "jit.py", FileKind.PYTHON) == [(2, "nvcc-flag-hipcc-rejects")]
    cmake = "target_compile_options(kern PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extra-device-vectorization>)\n"
    assert build_findings(tmp_path, cmake, "CMakeLists.txt", FileKind.CMAKE) == [(1, "nvcc-only-flags")]


def test_nvcc_long_debug_and_line_info_options_in_build_files(tmp_path: Path) -> None:
    # nvcc's long spellings of -G and -lineinfo, which hipcc rejects; a comment naming one and a CMake
    # variable that only contains the words stay quiet
    cmake = (
        "# build with --device-debug to step through kernels\n"
        "set(USE_DEVICE_DEBUG_INFO OFF)\n"
        "target_compile_options(ann PRIVATE -g --device-debug)\n"
        "list(APPEND CUDA_NVCC_FLAGS --generate-line-info)\n"
    )
    assert build_findings(tmp_path, cmake, "CMakeLists.txt", FileKind.CMAKE) == [(3, "nvcc-only-flags"), (4, "nvcc-only-flags")]
    make = "NVFLAGS := -O2 --lineinfo\nDEBUG_NOTE = device-debug-build\n"
    assert build_findings(tmp_path, make, "Makefile", FileKind.MAKEFILE) == [(1, "nvcc-only-flags")]


def test_nvcc_flags_in_a_python_build_helper_but_not_in_other_python(tmp_path: Path) -> None:
    helper = (
        "from torch.utils.cpp_extension import load\n"
        "flags = ['-O3']\n"
        "flags += ['-use_fast_math', '-lineinfo']\n"
        "print('pass -lineinfo to profile')\n"
        "ext = load('k', ['k.cu'], extra_cuda_cflags=flags + ['--expt-relaxed-constexpr'])\n"
    )
    assert build_findings(tmp_path, helper, "jit.py", FileKind.PYTHON) == [
        (3, "nvcc-flag-hipcc-ignores"), (5, "nvcc-flag-hipcc-rejects")]
    plain = "OPTIONS = ['-lineinfo', '--use_fast_math']\n"
    assert build_findings(tmp_path, plain, "cli.py", FileKind.PYTHON) == []


def test_setup_py_link_libraries_in_every_shape(tmp_path: Path) -> None:
    setup = (
        "from setuptools import setup, Extension\n"
        "libraries = ['m']\n"
        "libraries.append('nvrtc')\n"
        "LIBS = ['cudart', 'nvinfer_plugin']\n"
        "ext = Extension('k', ['k.cpp'], libraries=LIBS, extra_link_args=['-lcuda', '-Wl,-rpath,/opt'])\n"
        "srcs = ['csrc/gemm_sm90a.cu', 'csrc/gemm.cu']\n"
    )
    assert build_findings(tmp_path, setup, "setup.py", FileKind.SETUP_PY) == [
        (3, "cuda-link-library"), (4, "cuda-link-library"), (4, "tensorrt-link"), (5, "cuda-link-library"),
        (6, "arch-specific-sources")]


def test_setup_py_short_library_lists_named_libs(tmp_path: Path) -> None:
    """`libs`, `cuda_libs` and a dict's "libs" entry are library lists as `libraries` is; a list of library
    directories or of other libraries stays quiet."""
    setup = (
        "from setuptools import setup, Extension\n"
        "build = {'libs': [], 'dirs': []}\n"
        "build['libs'].append('cudart')\n"
        "cuda_libs = ['cublas']\n"
        "lib_dirs = ['/usr/local/cuda/lib64']\n"
        "build['dirs'].append('cudart')\n"
        "other_libs = ['m', 'pthread']\n"
        "ext = Extension('k', ['k.cpp'], libraries=build['libs'] + cuda_libs)\n"
    )
    assert build_findings(tmp_path, setup, "setup.py", FileKind.SETUP_PY) == [
        (3, "cuda-link-library"), (4, "cuda-link-library")]


def test_makefile_link_line_and_flags(tmp_path: Path) -> None:
    makefile = "LDLIBS = -lcudart -lcuda -lm\nNVFLAGS = --use_fast_math -O3\nall:\n\tclang++ --cuda-gpu-arch=sm_80 k.cu\n"
    assert build_findings(tmp_path, makefile, "Makefile", FileKind.MAKEFILE) == [
        (1, "cuda-link-library"), (2, "nvcc-only-flags"), (4, "clang-cuda-arch-flag")]


_WARP_USES = "__device__ int lane_of(int tid) { return tid % WARP_SIZE; }\n"


@pytest.mark.parametrize(("header", "targets", "severity"), [
    ("#define WARP_SIZE 32\n", ("gfx942",), Severity.LOW),
    ("#ifdef __HIP_PLATFORM_AMD__\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n", ("gfx942",),
     Severity.INFO),
    ("#define WARP_SIZE 32\n", ("gfx1100",), Severity.INFO),
    ("// WARP_SIZE comes from a library header\n", ("gfx942",), Severity.INFO),
    # a C++ constant in a shared header, behind its include guard, fixes it as a #define does
    ("#ifndef WARP_H\n#define WARP_H\nstatic constexpr unsigned int WARP_SIZE = 32;\n#endif\n", ("gfx942",),
     Severity.LOW),
    ("const int WARP_SIZE = 32;  // lanes per warp\n", ("gfx942",), Severity.LOW),
    # per platform (declared under an #if) or not 32: not fixed
    ("#if defined(__HIP_PLATFORM_AMD__)\nconstexpr int WARP_SIZE = 64;\n#else\nconstexpr int WARP_SIZE = 32;\n#endif\n",
     ("gfx942",), Severity.INFO),
    ("constexpr int WARP_SIZE = 64;\n", ("gfx942",), Severity.INFO),
    ("constexpr int WARP_SIZE = 32;\n", ("gfx1100",), Severity.INFO),
    # a string or a comment that reads like a declaration declares nothing
    ('const char* doc = "const int WARP_SIZE = 32;";\n', ("gfx942",), Severity.INFO),
])
def test_a_warp_size_constant_defined_in_another_file_is_low_only_where_the_repository_fixes_it_at_32(
    tmp_path: Path, header: str, targets: tuple[str, ...], severity: Severity
) -> None:
    (tmp_path / "warp.h").write_text(header, encoding="utf-8")
    (tmp_path / "k.cu").write_text('#include "warp.h"\n' + _WARP_USES, encoding="utf-8")
    uses = [f for f in scan(tmp_path, Settings(jobs=1, targets=targets)).findings if f.rule == "warp-size-name-use"]
    assert [(f.path, f.line, f.severity) for f in uses] == [("k.cu", 2, severity)]


def test_cmake_cuda_sources_and_variables_are_one_finding_per_file_with_every_place(tmp_path: Path) -> None:
    cmake = ("set(CMAKE_CUDA_STANDARD 17)\nadd_library(k src/a.cu src/b.cpp)\n"
             "target_include_directories(k PRIVATE ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})\n"
             "list(APPEND SRCS src/c.cu src/d.hip)\nmessage(STATUS \"${CUDAToolkit_VERSION}\")\n")
    path = tmp_path / "CMakeLists.txt"
    path.write_text(cmake, encoding="utf-8")
    source = SourceFile(path, "CMakeLists.txt", FileKind.CMAKE, path.stat().st_size)
    result = scan_file(source, load_builtin(), Settings())
    places = {f.rule: [o.line for o in f.occurrences] for f in result.findings
              if f.rule in ("cmake-cuda-sources", "cmake-cuda-variables")}
    assert places == {"cmake-cuda-sources": [2, 4], "cmake-cuda-variables": [1, 3]}


LIBRARY_LAYER = """\
#include "cudnn_utils.h"
namespace cublas_gemmex {  // wraps cublasGemmEx
void gemm(cublasHandle_t handle, int n) {
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, 0, 0, n, 0, n, 0, 0, n));
}
}
const char* name = "cudnn";
size_t get_cudnn_version();
"""


def test_library_named_code_is_one_finding_with_every_place(tmp_path: Path) -> None:
    found = [f for f in findings(tmp_path, LIBRARY_LAYER, name="gemm.cpp") if f.rule == "cuda-library-named-code"]
    assert [(f.line, f.symbol, [o.line for o in f.occurrences]) for f in found] == [(2, "cublas_gemmex", [2, 4, 8])]


def test_a_query_alone_stays_out_of_the_bundle_and_still_fires(tmp_path: Path) -> None:
    from migrate.parse import cuda as cuda_parse

    rule = next(r for r in load_builtin().rules if r.id == "syncwarp-without-mask")
    assert rule.match["alone"] is True and rule.match["query"] not in cuda_parse._REGISTERED
    assert fired(tmp_path, "__device__ void f() { __syncwarp(); }\n", "syncwarp-without-mask") == [1]


def test_a_comment_in_syncwarp_is_no_mask(tmp_path: Path) -> None:
    """Comments and a line continuation between the parentheses leave __syncwarp without its mask; a mask with a
    comment beside it is one."""
    code = ("__device__ void f(unsigned m) {\n  __syncwarp(/* all */);\n  __syncwarp(// every lane\n  );\n"
            "  __syncwarp( \\\n );\n  __syncwarp(m /* the active lanes */);\n  __syncwarp(/* lanes */ m);\n}\n")
    assert fired(tmp_path, code, "syncwarp-without-mask") == [2, 3, 5]


def test_comments_in_a_device_min_parameter_list_are_no_parameters(tmp_path: Path) -> None:
    """Comments beside the two parameters leave them two; a comment does not make one parameter two, nor three
    parameters fewer."""
    code = ("template <typename T>\n__device__ T min(/* lhs */ T a, // rhs\n  T b) { return a < b ? a : b; }\n"
            "__device__ float max(float a, float b /* second */) { return a > b ? a : b; }\n"
            "template <typename T>\n__device__ T max(T a /* only */) { return a; }\n"
            "template <typename T>\n__device__ T max(T a, T b /* mid */, T c) { return a; }\n")
    assert fired(tmp_path, code, "device-min-max-redefined") == [2, 4]


def test_alone_must_be_a_boolean() -> None:
    with pytest.raises(ValueError, match="'alone' must be true or false"):
        matchers.get("cuda-query").validate({"query": "((identifier) @hit)", "alone": "yes"})


PTX_EMITTER = """\
// the NVIDIA lowering: "cvt.rn.f16x2.f32 $0, $1, $2;" once lived here
void lower(Builder& b) {
  b.create("cvt.rn.f16x2.f32 $0, $1, $2;");
  auto ld = b.create("ld.global.nc.v4.u32");
  b.create(std::string("add.u32 a0, a0, 1;\\n") +
           "prmt.b32 $0, a0, a1, 0x7531;");
}
__device__ unsigned lane() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }
const char* kSource = R"(asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));)";
const char* kTemplate = "mma.sync.aligned{.shape}.row.col{.dtype} {templates};";
const char* kProse = "ld.global.nc.u32 loads bypass L1 when supported";
"""


def test_ptx_in_strings_is_one_finding_with_every_line_outside_asm_and_comments(tmp_path: Path) -> None:
    found = [f for f in findings(tmp_path, PTX_EMITTER, name="lower.cpp") if f.rule == "ptx-in-string"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [
        (3, Severity.HIGH, [3, 4, 5, 6, 9, 10])]


KERNEL_SOURCE_BRANCHES = """\
std::string kernels() {
  return std::string("void add_f(volatile global float* a, const float v) {\\n")
    + "#if cl_nv_compute_capability >= 20\\n"
    + "  float r; asm volatile(\\"red.global.add.f32 [%0], %1;\\" :: \\"l\\"(a), \\"f\\"(v));\\n"
    + "#else\\n"
    + "  atomic_add_cas(a, v);\\n"
    + "#endif\\n}\\n"
    + "#ifdef __CUDA_ARCH__\\n"
    + "  asm(\\"membar.gl.sync;\\");\\n"
    + "#endif\\n";
}
"""


def test_ptx_in_an_nvidia_only_branch_of_emitted_source_with_a_fallback_is_low(tmp_path: Path) -> None:
    """The #if on cl_nv_compute_capability has an #else the AMD compiler takes: low. The __CUDA_ARCH__ block has
    none, so the NVIDIA path is all there is: the file's finding stays high."""
    found = [f for f in findings(tmp_path, KERNEL_SOURCE_BRANCHES, name="kernels.cpp") if f.rule == "ptx-in-string"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [(4, Severity.HIGH, [4, 9])]
    fallback_only = KERNEL_SOURCE_BRANCHES.replace('#ifdef __CUDA_ARCH__', '#ifndef __CUDA_ARCH__')
    guarded = [f for f in findings(tmp_path, fallback_only.replace('membar.gl.sync', 'membar.gl'), name="k2.cpp")
               if f.rule == "ptx-in-string"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in guarded] == [(4, Severity.LOW, [])]


WEAK_ALIASES = """\
struct testEngine { int (*run)(int); };
static int run(int n) { return n; }
struct testEngine reduceEngine = { run };
#pragma weak ncclTestEngine=reduceEngine
#pragma weak ncclTestHook = reduceHook
int reduceHook(int rank) { return reduceEngine.run(rank); }
#pragma weak optionalOnly
"""


def test_weak_alias_is_one_finding_with_each_pragma_and_the_definition_of_its_target(tmp_path: Path) -> None:
    found = [f for f in findings(tmp_path, WEAK_ALIASES, name="reduce.cu") if f.rule == "pragma-weak-alias-device"]
    assert [(f.line, [o.line for o in f.occurrences]) for f in found] == [(3, [3, 4, 5, 6])]


RETIRED_HIP_MACROS = """\
#include "rows.h"
#ifdef __HIP_PLATFORM_HCC__
#define LANES 64
#endif
// #ifdef __HIP_PLATFORM_HCC__
#if defined(__HIP_ROCclr__) && HIP_VERSION > 305
#define FAST 1
#elif __HCC__
#define FAST 2
#endif
"""


def test_retired_hip_macro_is_one_finding_with_each_test_of_it(tmp_path: Path) -> None:
    found = [f for f in findings(tmp_path, RETIRED_HIP_MACROS, name="rows.cu") if f.rule == "retired-hip-platform-macro"]
    assert [(f.line, f.severity, f.status, [o.line for o in f.occurrences]) for f in found] == [
        (2, Severity.MEDIUM, "remaining", [2, 6, 8])]


@pytest.mark.parametrize("guard", ["#if defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)",
                                   "#ifdef __HIP_PLATFORM_AMD__"])
def test_retired_hip_macro_is_quiet_once_the_file_tests_the_current_name(tmp_path: Path, guard: str) -> None:
    code = f"{guard}\n#define LANES 64\n#endif\n#ifdef __HIP_PLATFORM_HCC__\n#define FAST 1\n#endif\n"
    assert fired(tmp_path, code, "retired-hip-platform-macro", name="rows.cu") == []


VERSION_BRANCHES = """\
__device__ float pick(float a) {
#if __CUDA_ARCH__ >= 900
  return a;
#elif __CUDA_ARCH__ >= 800
  return a + 1;
#else
  return a + 2;
#endif
}
#if defined(USE_ROCM) || CUDA_VERSION >= 12000
int ported = 1;
#else
int ported = 0;
#endif
#ifdef __CUDA_FP8_TYPES_EXIST__
int fp8 = 1;
#endif
#if HAVE_FEATURE
#else
#endif
#if CUDART_VERSION >= 11000
#ifdef NESTED
#else
#endif
#endif
#if defined(__CUDA_ARCH__) && \\
    __CUDA_ARCH__ >= 900
#endif
"""


def test_version_branch_ends_are_one_finding_with_each_later_branch_and_endif(tmp_path: Path) -> None:
    """Every #elif / #else / #endif after a compared condition of its chain, the nested chain's not; a chain that names
    HIP is guarded, and one that compares nothing is quiet."""
    result = scan_file(source_file(tmp_path, VERSION_BRANCHES, "pick.cu"), load_builtin(), Settings())
    found = [f for f in result.findings if f.rule == "cuda-version-branch-end"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [
        (4, Severity.LOW, [4, 6, 8, 17, 25, 28])]
    held = [f for f in result.guarded_findings if f.rule == "cuda-version-branch-end"]
    assert sorted(o.line for f in held for o in (f.occurrences or [f])) == [12, 14]


TF_OP_BLOCKS = """\
#if GOOGLE_CUDA
#include "cuda_runtime.h"
#endif  // GOOGLE_CUDA
int gpus() {
  int n = 0;
#if GOOGLE_CUDA
  cudaGetDeviceCount(&n);
#else
  n = 0;
#endif
#ifdef WITH_TIMING
  report(n);
#endif
  return n;
}
"""


def test_tf_gpu_switch_branch_ends_are_one_finding_with_each_later_branch_and_endif(tmp_path: Path) -> None:
    """Every #else / #endif of a GOOGLE_CUDA chain, low, once per file; a chain that tests something else is quiet."""
    found = [f for f in findings(tmp_path, TF_OP_BLOCKS, name="op.cpp") if f.rule == "tf-gpu-switch-branch-end"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [(3, Severity.LOW, [3, 8, 10])]


def test_a_tf_op_that_tests_the_rocm_build_has_no_gpu_switch_branch_end(tmp_path: Path) -> None:
    ported = TF_OP_BLOCKS.replace("#endif  // GOOGLE_CUDA", "#elif TENSORFLOW_USE_ROCM\n#include <hip/hip_runtime.h>\n#endif")
    assert fired(tmp_path, ported, "tf-gpu-switch-branch-end", name="op.cpp") == []


def test_a_version_macro_the_file_defines_has_no_branch_end(tmp_path: Path) -> None:
    code = "#define CUDA_VERSION 0\n#if CUDA_VERSION >= 11000\nint a;\n#else\nint b;\n#endif\n"
    assert fired(tmp_path, code, "cuda-version-branch-end") == []


MASK_WORDS = """\
struct State { unsigned int *bits; };
__global__ void fwd(State s, const float* x) {
  unsigned int *const bits = s.bits + blockIdx.x;
  unsigned int mask = 0;
  unsigned int vote = __ballot_sync(0xffffffffu, x[threadIdx.x] > 0.f);
  if (threadIdx.x % 32 == 0) mask = vote;
  bits[threadIdx.x / 32] = mask;
}
__global__ void bwd(State s, float* dy) {
  const unsigned int *const bits = s.bits + blockIdx.x;
  unsigned int m = bits[threadIdx.x / 32];
  dy[threadIdx.x] *= (m >> (threadIdx.x % 32)) & 1u;
}
__global__ void pack(const float* x, unsigned* out, float* other) {
  unsigned votes[2];
  votes[0] = __ballot_sync(0xffffffffu, x[threadIdx.x] > 0.f);
  out[blockIdx.x] = votes[0];
  out[0] += 1u;
  other[threadIdx.x] = 0.f;
}
__global__ void scale(float* out) { out[threadIdx.x] *= 2.f; }
"""


def test_ballot_masks_in_32_bit_words_are_one_finding_with_each_declaration_and_index(tmp_path: Path) -> None:
    """The buffer a 32-bit mask is copied into (through another variable), read back in another kernel; a local array
    of masks; not a name the file also gives another type (`out` is a float* in scale: its declaration only)."""
    found = [f for f in findings(tmp_path, MASK_WORDS) if f.rule == "warp-mask-words"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [
        (1, Severity.MEDIUM, [1, 3, 7, 10, 11, 14, 15, 16, 17])]


def test_ballot_masks_in_32_bit_words_are_info_on_wave32(tmp_path: Path) -> None:
    found = [f for f in findings(tmp_path, MASK_WORDS, targets=("gfx1100",)) if f.rule == "warp-mask-words"]
    assert [f.severity for f in found] == [Severity.INFO]


def test_a_64_bit_mask_buffer_is_not_a_32_bit_word(tmp_path: Path) -> None:
    code = MASK_WORDS.replace("unsigned int", "unsigned long long").replace("unsigned votes", "uint64_t votes")
    code = code.replace("unsigned* out", "uint64_t* out")
    assert fired(tmp_path, code, "warp-mask-words") == []


def test_nvcc_driver_tests_are_one_finding_listing_each_test_that_names_no_hip(tmp_path: Path) -> None:
    """#ifdef / #if defined / #ifndef / #elif on __NVCC__ are the places of one finding; a condition that names
    __HIPCC__ or USE_ROCM, a comment and a longer macro name are not among them."""
    from conftest import FIXTURES

    code = (FIXTURES / "rules" / "cuda" / "nvcc_driver_tests.cuh").read_text(encoding="utf-8")
    found = [f for f in findings(tmp_path, code, name="helpers.cuh") if f.rule == "nvcc-macro-test"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [
        (5, Severity.MEDIUM, [5, 12, 17, 24, 54])]


def test_launch_bounds_with_a_second_argument_are_one_finding_with_each_kernel(tmp_path: Path) -> None:
    """Two arguments are the places; one argument (the block size) and three (a cluster bound) are not."""
    code = ("__global__ void __launch_bounds__(256, 2) a() {}\n__global__ void __launch_bounds__(256) b() {}\n"
            "__global__ void __launch_bounds__(128, 4, 1) c() {}\n__global__ void __launch_bounds__(N * 32, M) d() {}\n")
    found = [f for f in findings(tmp_path, code) if f.rule == "launch-bounds-min-blocks"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [(1, Severity.LOW, [1, 4])]


def test_a_comment_in_launch_bounds_is_no_argument(tmp_path: Path) -> None:
    """A comment beside the block size is not a second argument; comments beside two real arguments (or after a
    line continuation) leave them two, and three stay three."""
    code = ("__global__ void __launch_bounds__(256 /* threads */) a() {}\n"
            "__global__ void __launch_bounds__(512 // the block\n) b() {}\n"
            "__global__ void __launch_bounds__(/* x */ 128 /* y, z */) c() {}\n"
            "__global__ void __launch_bounds__(256 /* t */, /* min */ 2 /* blocks */) d() {}\n"
            "__global__ void __launch_bounds__(MAX_THREADS, // per block\n  MIN_BLOCKS) e() {}\n"
            "__global__ void __launch_bounds__(MAX_THREADS, \\\n  MIN_BLOCKS) f() {}\n"
            "__global__ void __launch_bounds__(128, 4, 1 /* cluster */) g() {}\n")
    found = [f for f in findings(tmp_path, code) if f.rule == "launch-bounds-min-blocks"]
    assert [(f.line, [(o.line, o.column) for o in f.occurrences]) for f in found] == [
        (5, [(5, 58), (7, 3), (9, 3)])]


def test_the_launch_bounds_fixture_lists_the_two_argument_kernels_only(tmp_path: Path) -> None:
    """The fixture's kernels with two arguments are the places, with or without comments beside them; one argument
    with a comment after it is not."""
    from conftest import FIXTURES

    code = (FIXTURES / "rules" / "cuda" / "launch_bounds.cu").read_text(encoding="utf-8")
    found = [f for f in findings(tmp_path, code) if f.rule == "launch-bounds-min-blocks"]
    assert [(f.line, [o.line for o in f.occurrences]) for f in found] == [(5, [5, 12, 33])]


@pytest.mark.parametrize(("code", "parsed"), [
    ("__global__ void __launch_bounds__(256, 2) k() {}", True),
    ("__global__ void __launch_bounds__ \\\n  (MAX_THREADS, \\\n MIN_BLOCKS) k() {}", True),
    ("__global__ void __launch_bounds__(MAX(64, N), 2) k() {}", True),  # an inner (: the commas are not counted
    ("__global__ void __launch_bounds__(256 /* threads, */) k(float* x, int n) {}", False),
    ("__global__ void __launch_bounds__(512 // blocks, threads\n) k(float* x, int n) {}", False),
    ("__global__ void __launch_bounds__(WARPS * 32) k(float* x, int n) {}", False),
])
def test_only_files_with_a_comma_in_launch_bounds_are_parsed_for_its_second_argument(code: str, parsed: bool) -> None:
    """The rule's code test reads the code with comments blanked: a comma in a comment, or in the kernel's own
    parameters, is none in __launch_bounds__."""
    from migrate.matchers.cuda_query import code_candidates
    from migrate.parse.lexer import lex

    rule = next(r for r in load_builtin().rules if r.id == "launch-bounds-min-blocks")
    assert code_candidates(rule.match)(matchers.Code(lex(code, frozenset()).code, ())) is parsed


def test_nvjitlink_uses_are_one_finding_with_each_line(tmp_path: Path) -> None:
    """Every nvJitLink type and call is a place; a name that only contains the word is not."""
    code = ("nvJitLinkHandle h;\nvoid f() { nvJitLinkCreate(&h, 0, nullptr); nvJitLinkDestroy(&h); }\n"
            "int my_nvJitLink_count();\n")
    found = [f for f in findings(tmp_path, code, name="link.cpp") if f.rule == "nvjitlink-api"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [(1, Severity.MEDIUM, [1, 2])]


BACKWARD_GEMMS = """\
template <typename T>
void linear_backward(cublasHandle_t h, const T* dy, const T* x, T* dx, T* dw, int m, int n, int k) {
  gemm_wrapper(h, m, n, k, dy, x, dw);
  if (dx != nullptr) {
    cublas_gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, m, k, n, dy, x, dx);
  }
}
void softmax_grad_bwd_cuda(cublasHandle_t h, const half* dy, half* dx, int n) {
  strided_gemm_fp32acc<half>(h, n, dy, dx);
  at::cuda::blas::gemm<at::Half>('n', 'n', n, n, n, 1.f, dy, n, dx, n, 0.f, dx, n);
}
void fused_dense_fwd(cublasHandle_t h, const half* x, half* y, int n) { cublasHgemm(h, n, x, y); }
void scale_backward(float* g, int n) { run_gemm(g, n); }
void fp16_instantiation(half* p) { linear_backward<half>(nullptr, p, p, p, p, 1, 1, 1); }
void get_mlp_bp_workspace(half* p) { compute_sizes(p); }
void mlp_bp(cublasHandle_t h, half* dy, half* dx) {
  mlp_gemm(h, dy, dx);
}
void dense_wgrad(cublasHandle_t h, const at::BFloat16* x, at::BFloat16* dw) { dense_gemm_lt(h, x, dw); }
"""


def test_backward_gemms_on_half_data_are_one_finding_with_each_call(tmp_path: Path) -> None:
    """Every GEMM in a backward function on half data (a template's element type from the file's fp16 use), wrappers
    included; not ATen's gemm (PyTorch passes the flag), a forward function or an fp32 backward pass."""
    found = [f for f in findings(tmp_path, BACKWARD_GEMMS) if f.rule == "fp16-backward-gemm"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [
        (3, Severity.LOW, [3, 5, 9, 17, 19])]


def test_backward_gemms_are_quiet_where_the_file_picks_the_alternate_fp16_path(tmp_path: Path) -> None:
    code = BACKWARD_GEMMS + "int flags = at::BackwardPassGuard::is_backward_pass() ? 4 : 0;\n"
    assert fired(tmp_path, code, "fp16-backward-gemm") == []


def test_backward_gemms_need_half_data(tmp_path: Path) -> None:
    code = BACKWARD_GEMMS.replace("half", "float").replace("at::Half", "float").replace("Hgemm", "Sgemm")
    code = code.replace("at::BFloat16", "float")
    assert fired(tmp_path, code, "fp16-backward-gemm") == []


@pytest.mark.parametrize(("fixture", "rule", "places"), [
    ("jit_images.cpp", "cuda-jit-nvidia-image", [10, 12, 20]),
    ("optix_pipeline.cpp", "optix-api", [13, 15, 19]),
    ("optix6_scene.cpp", "optix-legacy-api", [10, 16, 19]),
    ("flashinfer_headers.cu", "flashinfer-include", [3, 5]),
    ("video_codec_sessions.cpp", "nvidia-video-decode", [3, 23, 28]),
    ("video_codec_sessions.cpp", "nvidia-video-encode", [5, 33, 35]),
    ("video_codec_sessions.cpp", "npp-usage", [7, 41]),
    ("cvcuda_preprocess.cpp", "cvcuda-usage", [3, 17, 23]),
    ("image_codecs.cpp", "nvjpeg-usage", [3, 24, 25, 30]),
    ("image_codecs.cpp", "nvimagecodec-usage", [5, 35]),
    ("image_codecs.cpp", "cufile-usage", [7, 40, 41]),
    ("media_pipeline.cpp", "nvidia-media-pipeline-string", [9, 11, 13, 19, 25]),
    ("telemetry.cpp", "nvml-include", [4, 12]),
    ("jetson_frames.cpp", "jetson-multimedia-api", [3, 4, 15, 18, 23]),
    ("ffmpeg_hw_decode.cpp", "ffmpeg-cuda-hwaccel", [5, 11, 12, 17]),
    ("peer_memory_module.c", "nvidia-peer-memory-kernel-api", [4, 16, 21]),
    ("vpi_stereo.cpp", "vpi-usage", [3, 4, 5, 17, 18, 25]),
    ("deepstream_app.c", "deepstream-element-string", [5, 11, 12, 13, 25]),
    ("opencv_cuda_device.cu", "opencv-cuda-module", [3, 4, 5, 16, 21, 25, 27]),
])
def test_per_file_library_rules_list_every_place(tmp_path: Path, fixture: str, rule: str, places: list[int]) -> None:
    """One finding per file, every use of the JIT input types, OptiX calls and FlashInfer headers an occurrence."""
    code = (FIXTURES / "rules" / "cuda" / fixture).read_text(encoding="utf-8")
    found = [f for f in findings(tmp_path, code, name=fixture) if f.rule == rule]
    assert [[o.line for o in f.occurrences] or [f.line] for f in found] == [places]


@pytest.mark.parametrize("body, severity", [
    # mma.h included by habit (generated kernels), no wmma / nvcuda in the file: a line to delete
    ("__global__ void gemv(int *c) { constexpr int wmma_K = 32; c[threadIdx.x] = wmma_K; }\n", Severity.LOW),
    # the API used in the same file: the include is part of a real port
    ("using namespace nvcuda;\n__global__ void g() { wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc; }\n",
     Severity.HIGH),
])
def test_an_mma_include_with_nothing_of_it_used_is_low(tmp_path: Path, body: str, severity: Severity) -> None:
    found = [f for f in findings(tmp_path, "#include <mma.h>\n" + body) if f.rule == "cuda-wmma" and f.line == 1]
    assert [f.severity for f in found] == [severity]


def test_unused_include_needs_an_include_pattern(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "r.yaml").write_text(
        "rules:\n  - id: r\n    title: t\n    category: cuda-library\n    languages: [cuda]\n    severity: high\n"
        "    message: m\n    match: {matcher: cuda-namespace, namespaces: [nvcuda], unused_include: low}\n")
    with pytest.raises(RuleFileError, match="unused_include"):
        load([rules])


TEXTURES = """\
cudaTextureDesc smooth_desc() {
  cudaTextureDesc desc = {};
  desc.filterMode = cudaFilterModeLinear;
  return desc;
}
cudaTextureDesc label_desc() {
  cudaTextureDesc desc = {};
  desc.filterMode = cudaFilterModePoint;  // not cudaFilterModeLinear: labels stay exact
  return desc;
}
void driver_desc(CUDA_TEXTURE_DESC* desc) { desc->filterMode = CU_TR_FILTER_MODE_LINEAR; }
__global__ void upsample(cudaTextureObject_t t, float* out) { out[threadIdx.x] = tex2D<float>(t, 0.5f, 0.5f); }
"""


@pytest.mark.parametrize(("target", "severity"), [("gfx90a", Severity.MEDIUM), ("gfx942", Severity.MEDIUM),
                                                  ("gfx1100", Severity.LOW)])
def test_linear_texture_filtering_is_one_finding_per_file_by_target(tmp_path: Path, target: str,
                                                                   severity: Severity) -> None:
    # CDNA (wave64) GPUs refuse linear filtering where RDNA accepts it; the comment on line 8 is no use
    found = [f for f in findings(tmp_path, TEXTURES, targets=(target,)) if f.rule == "texture-linear-filter"]
    # the fetch on line 12 is where a port blends four point samples instead
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [(3, severity, [3, 11, 12])]


def test_texture_fetches_without_linear_filtering_are_quiet(tmp_path: Path) -> None:
    point_only = TEXTURES.replace("cudaFilterModeLinear;", "cudaFilterModePoint;").replace("CU_TR_FILTER_MODE_LINEAR",
                                                                                          "CU_TR_FILTER_MODE_POINT")
    assert fired(tmp_path, point_only, "texture-linear-filter") == []


def test_the_header_that_defines_the_filter_modes_is_quiet(tmp_path: Path) -> None:
    header = ("typedef enum CUfilter_mode_enum {\n  CU_TR_FILTER_MODE_POINT = 0,\n  CU_TR_FILTER_MODE_LINEAR = 1\n}"
              " CUfilter_mode;\nCUresult cuTexRefSetFilterMode(CUtexref hTexRef, CUfilter_mode fm);\n")
    assert fired(tmp_path, header, "texture-linear-filter", name="cuda.h") == []


JIT_LAYERS = """\
#include "jit/jitify.hpp"
struct Cache {
  jitify::JitCache cache;
  void go(const char* src) { jitify::Program p = cache.program(src); }
};
void run2(const char* name, const char* src) {
  auto k = jitify2::Program(name, src)->preprocess({})->get_kernel("k");
}
struct jitify_settings { int level; };
const char* note = "jitify::Program";  // jitify2::Program in a comment
"""


def test_jitify_layers_give_exactly_these_findings(tmp_path: Path) -> None:
    """The first jitify API (no HIP port) is high, jitify2 (ROCm/jitify keeps it over hipRTC) medium, each one
    finding per file with every line that uses it; a name that starts the same, a string and a comment stay quiet."""
    found = [f for f in findings(tmp_path, JIT_LAYERS, name="jit.cpp") if f.rule.startswith("jitify")]
    assert [(f.rule, f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [
        ("jitify-usage", 1, Severity.HIGH, [1, 3, 4]),
        ("jitify2-usage", 7, Severity.MEDIUM, []),  # one place: no occurrence list
    ]


def test_a_jitify_include_with_nothing_used_is_low(tmp_path: Path) -> None:
    found = [f for f in findings(tmp_path, '#include <jitify2.hpp>\nint f();\n', name="a.h") if f.rule == "jitify2-usage"]
    assert [(f.line, f.severity) for f in found] == [(1, Severity.LOW)]


ROCM_GAPS = """\
void f(bool ok) {
#ifdef USE_ROCM
  TORCH_CHECK(false, "sparse gather is not supported on HIP");
#endif
  TORCH_CHECK(ok, "fused path isn't available with ROCm");
  TORCH_CHECK(ok, "built without HIP: ROCm not available");
}
"""


def test_the_projects_own_rocm_gaps_give_exactly_these_findings(tmp_path: Path) -> None:
    """A refusal that names HIP/ROCm is the project's statement even in its HIP branch (never guarded); a build
    describing its own configuration is none."""
    found = [f for f in findings(tmp_path, ROCM_GAPS, name="ops.cpp") if f.rule == "rocm-gap-message"]
    assert [(f.line, f.severity, f.status) for f in found] == [(3, Severity.MEDIUM, "remaining"), (5, Severity.MEDIUM, "remaining")]


SLAB_COPY = """\
/* Slab copies for a volume renderer. */
#define SLAB 64

#include "slab.h"
#include <cstdio>

int upload(const float* host, float** device, size_t count) {
  cudaError_t status = cudaMalloc((void**)device, count * sizeof(float));
  return status == cudaSuccess ? 0 : 1;
}
"""


def test_a_cuda_file_that_leans_on_the_implicit_runtime_header_fires_at_its_first_include(tmp_path: Path) -> None:
    found = [(f.line, f.severity) for f in findings(tmp_path, SLAB_COPY)
             if f.rule == "cuda-implicit-runtime-header"]
    assert found == [(4, Severity.LOW)]


@pytest.mark.parametrize("include", ['#include "cuda_runtime.h"', "#include <cuda_runtime_api.h>",
                                     "#include <hip/hip_runtime.h>", "#include <torch/extension.h>",
                                     "#include <ATen/cuda/CUDAContext.h>"])
def test_a_file_that_includes_a_runtime_or_torch_header_itself_is_quiet(tmp_path: Path, include: str) -> None:
    code = SLAB_COPY.replace("#include <cstdio>", include)
    assert fired(tmp_path, code, "cuda-implicit-runtime-header") == []


def test_no_runtime_call_a_hip_name_torch_code_or_a_cpp_file_is_quiet(tmp_path: Path) -> None:
    kernels_only = SLAB_COPY.replace("cudaError_t", "int").replace("cudaMalloc", "alloc_slab").replace(
        "cudaSuccess", "0")
    assert fired(tmp_path, kernels_only, "cuda-implicit-runtime-header") == []
    with_compat = SLAB_COPY.replace("return status", "hipDeviceSynchronize();\n  return status")
    assert fired(tmp_path, with_compat, "cuda-implicit-runtime-header") == []
    torch_code = SLAB_COPY.replace("return status", "AT_CUDA_CHECK(cudaGetLastError());\n  return status")
    assert fired(tmp_path, torch_code, "cuda-implicit-runtime-header") == []
    assert fired(tmp_path, SLAB_COPY, "cuda-implicit-runtime-header", name="k.cpp") == []


@pytest.mark.parametrize("head, line", [
    ("#define SLAB_SIZE(n) \\\n  ((n) * 64)\n#pragma once\n", 4),  # a continued #define and a #pragma: still the head
    ("#ifndef SLAB_H\n#define SLAB_H\n", None),  # a header guard's include is the guard's
    ("static int slabs = 0;\n", None),  # code before it: not where a port puts its header
])
def test_only_an_include_that_heads_the_file_is_the_place(tmp_path: Path, head: str, line: int | None) -> None:
    code = head + '#include "slab.h"\nint up(float** p) { return cudaMalloc((void**)p, 64) != cudaSuccess; }\n'
    code += "#endif\n" if head.startswith("#ifndef") else ""
    assert fired(tmp_path, code, "cuda-implicit-runtime-header", name="slab.cuh") == ([line] if line else [])


def test_block_rounded_to_whole_warps(tmp_path: Path) -> None:
    """A thread count rounded up to 32s is the block reduction's warp count: medium on wave64, info on wave32;
    the same rounding of bytes or bit words is alignment."""
    code = (
        "void plan(int n, int bits) {\n"
        "  dim3 block(n);\n"
        "  block.x = 32 * ((block.x + 31) / 32);\n"
        "  int nthreads = ((n + 31) >> 5) << 5;\n"
        "  int mask_words = (bits + 31) / 32;\n"
        "  size_t pad_bytes = (n + 31) / 32 * 32;\n"
        "  (void)nthreads; (void)mask_words; (void)pad_bytes;\n"
        "}\n"
    )
    found = [(f.line, f.severity) for f in findings(tmp_path, code) if f.rule == "warp-rounded-block"]
    assert found == [(3, Severity.MEDIUM), (4, Severity.MEDIUM)]
    wave32 = [(f.line, f.severity) for f in findings(tmp_path, code, targets=("gfx1100",)) if f.rule == "warp-rounded-block"]
    assert wave32 == [(3, Severity.INFO), (4, Severity.INFO)]


def test_include_by_absolute_path_into_a_cuda_install(tmp_path: Path) -> None:
    code = """\
#include "/usr/local/cuda-10.2/include/cublas_v2.h"
#include "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4/include/cuda.h"
#include <cuda_runtime.h>
#include "kernels/cuda/reduce.cuh"
#include "/home/user/cudnn_frontend/include/graph.h"
"""
    assert fired(tmp_path, code, "cuda-include-absolute-path", name="a.cu") == [1, 2]


def test_mask_definitions_used_only_in_the_cuda_branch_of_a_hip_guard_are_not_work(tmp_path: Path) -> None:
    # the ROCm branch calls the mask-free __shfl forms: the mask macro and the wrapper's 32-bit mask parameter
    # serve the CUDA branch only; a mask macro also used outside a guard is still the line to widen
    code = """\
#define LANES_ALL 0xffffffff
#define LANES_OPEN 0xffffffff
template <typename T>
__device__ T lane_read(unsigned lanes, T v, int src) {
#if defined(USE_ROCM)
  return __shfl(v, src);
#else
  return __shfl_sync(lanes, v, src);
#endif
}
__device__ float total(float v) {
#ifdef USE_ROCM
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down(v, o);
#else
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(LANES_ALL, v, o);
#endif
  return v + __shfl_sync(LANES_OPEN, v, 0);
}
template <typename T>
__device__ T xor_read(T v, int lane_mask, unsigned int mask = 0xffffffff) {
#ifndef USE_ROCM
  return __shfl_xor_sync(mask, v, lane_mask);
#else
  return __shfl_xor(v, lane_mask);
#endif
}
template <typename T>
__device__ T xor_open(T v, int lane_mask, unsigned int mask = 0xffffffff) {
  return __shfl_xor_sync(mask, v, lane_mask);
}
"""
    masks = [(f.line, f.rule) for f in findings(tmp_path, code)
             if f.rule in ("warp-full-mask", "warp-narrow-mask") and f.severity.label != "info"]
    assert masks == [(2, "warp-full-mask"), (17, "warp-full-mask"), (28, "warp-full-mask")]


HALF2_RECIPROCAL = """\
#include <cuda_fp16.h>
#if defined(USE_ROCM)
__device__ __forceinline__ __half one_recip(__half v) {
    return __half_raw{static_cast<_Float16>(__builtin_amdgcn_rcph(static_cast<__half_raw>(v).data))};
}
__device__ __forceinline__ __half2 pair_recip(__half2 v) {
    return _Float16_2{static_cast<_Float16>(__builtin_amdgcn_rcph(v.x)),
                      static_cast<_Float16>(__builtin_amdgcn_rcph(v.y))};
}
__device__ __forceinline__ __half2 pair_recip_vector(__half2 v) {
    return _Float16_2{_Float16_2{static_cast<_Float16>(1.0f), static_cast<_Float16>(1.0f)} / v.data};
}
#define h2rcp pair_recip
#endif
"""


def test_half2_lane_reciprocal_is_high_in_the_projects_own_hip_branch(tmp_path: Path) -> None:
    # each lane read off the __half2 (lines 7, 8) stops hipcc on ROCm 6.0; the scalar and vector forms compile
    found = [f for f in findings(tmp_path, HALF2_RECIPROCAL, name="compat.cuh") if f.rule == "hip-half2-rcp-lanes"]
    assert [(f.line, f.severity, f.status) for f in found] == [
        (7, Severity.HIGH, "remaining"), (8, Severity.HIGH, "remaining")]


CG_INTERNALS = """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ void spin_barrier() {
    volatile unsigned int* word = &cooperative_groups::details::get_grid_workspace()->barrier;
    (void)word;
}
__device__ unsigned long long rank_of_thread() {
    return cooperative_groups::details::grid::thread_rank();
}
__device__ unsigned long long public_rank() {
    return cg::this_grid().thread_rank();
}
namespace own { namespace details { __device__ int one() { return 1; } } }
__device__ int own_details() { return own::details::one(); }
"""


def test_cooperative_groups_internals_are_high_and_the_public_api_is_not(tmp_path: Path) -> None:
    # the private namespace (lines 4 and 8); this_grid() and a project's own `details` namespace stay quiet
    found = [f for f in findings(tmp_path, CG_INTERNALS) if f.rule == "cuda-cg-internals"]
    assert [(f.line, f.severity) for f in found] == [(4, Severity.HIGH), (8, Severity.HIGH)]


def test_faiss_gpu_headers_are_one_medium_finding_per_file(tmp_path: Path) -> None:
    """Every faiss/gpu/ include is one medium finding at the first (the faiss build is decided once); CPU faiss
    headers, a project's own gpu/ folder, and the header named in a comment or a string are quiet."""
    from conftest import FIXTURES

    code = (FIXTURES / "rules" / "cuda" / "faiss_gpu_search.cu").read_text(encoding="utf-8")
    found = [f for f in findings(tmp_path, code, name="search.cu") if f.rule == "faiss-gpu-include"]
    assert [(f.line, f.severity, [o.line for o in f.occurrences]) for f in found] == [(4, Severity.MEDIUM, [4, 5])]
    quiet = (FIXTURES / "rules" / "cuda" / "faiss_gpu_search_quiet.cpp").read_text(encoding="utf-8")
    assert fired(tmp_path, quiet, "faiss-gpu-include", name="index.cpp") == []


def test_the_short_warp_size_macro_ws_is_a_warp_size_constant_in_device_code_only(tmp_path: Path) -> None:
    """`#define WS 32` beside device code is the warp size under its short name; the same define in a C header with
    no device code (a whitespace character), a WS of 64, a longer name and a comment are quiet."""
    from conftest import FIXTURES

    folder = FIXTURES / "rules" / "cuda"
    code = (folder / "warp_size_short_name.cuh").read_text(encoding="utf-8")
    found = [(f.line, f.severity, f.symbol) for f in findings(tmp_path, code, name="search.cuh")
             if f.rule == "warp-size-constant"]
    assert found == [(6, Severity.HIGH, "WS")]
    plain_c = (folder / "warp_size_short_name_quiet.h").read_text(encoding="utf-8")
    assert fired(tmp_path, plain_c, "warp-size-constant", name="table.h") == []
    others = (folder / "warp_size_short_name_other.cu").read_text(encoding="utf-8")
    assert fired(tmp_path, others, "warp-size-constant", name="scale.cu") == []


def test_faiss_gpu_headers_in_faiss_own_gpu_tree_are_not_reported(tmp_path: Path) -> None:
    """faiss's own faiss/gpu/ and c_api/gpu/ sources include their own headers (their port is faiss's ROCm build);
    a user of the same headers elsewhere in the tree is still one finding."""
    from conftest import tree_findings

    include = "#include <faiss/gpu/GpuResources.h>\n#include <faiss/gpu/utils/DeviceUtils.h>\nint f();\n"
    files = {"faiss/gpu/GpuIndex.cu": include, "c_api/gpu/GpuResources_c.cpp": include, "tools/knn.cpp": include}
    found = [f for f in tree_findings(tmp_path, files) if f[2] == "faiss-gpu-include"]
    assert found == [("tools/knn.cpp", 1, "faiss-gpu-include", "medium", (1, 2))]


ARCH_GATED_BODIES = """\
__global__ void fill(float* out) {
#if __CUDA_ARCH__ >= 530
  out[threadIdx.x] = 1.0f;
#endif
}
__global__ void fill_or_say(float* out) {
  #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  out[threadIdx.x] = 2.0f;
  #else
  printf("needs sm_70\\n");
  #endif
}
__global__ void fill_or_fallback(float* out) {
#if __CUDA_ARCH__ >= 700
  out[threadIdx.x] = 3.0f;
#else
  out[threadIdx.x] = 4.0f;
#endif
}
__global__ void fill_then_more(float* out) {
#if __CUDA_ARCH__ >= 700
  out[threadIdx.x] = 5.0f;
#endif
  out[0] = 6.0f;
}
"""


def test_a_gate_around_a_whole_kernel_body_is_high_and_the_others_stay_medium(tmp_path: Path) -> None:
    """A kernel body wholly inside a __CUDA_ARCH__ comparison (no #else, or one that only prints) compiles empty under
    hipcc: cuda-arch-empty-body, high; a gate with a fallback or beside other code stays cuda-arch-check, medium."""
    result = scan_file(source_file(tmp_path, ARCH_GATED_BODIES, "gates.cu"), load_builtin(), Settings())
    found = sorted((f.line, f.rule, f.severity) for f in result.findings if f.rule.startswith("cuda-arch-"))
    assert found == [
        (2, "cuda-arch-empty-body", Severity.HIGH), (7, "cuda-arch-empty-body", Severity.HIGH),
        (14, "cuda-arch-check", Severity.MEDIUM), (21, "cuda-arch-check", Severity.MEDIUM)]


def test_a_file_that_sets_cuda_arch_itself_keeps_its_gates_medium(tmp_path: Path) -> None:
    """A header that gives __CUDA_ARCH__ a value for its HIP build (ggml's sets 1300) keeps the body: medium."""
    code = "#ifdef __HIP_PLATFORM_AMD__\n#define __CUDA_ARCH__ 1300\n#endif\n" + ARCH_GATED_BODIES
    result = scan_file(source_file(tmp_path, code, "gates.cu"), load_builtin(), Settings())
    assert not [f for f in [*result.findings, *result.guarded_findings] if f.rule == "cuda-arch-empty-body"]


def test_an_editor_stand_in_for_cuda_arch_leaves_the_gate_high(tmp_path: Path) -> None:
    """`#ifdef __INTELLISENSE__ / #define __CUDA_ARCH__ 500` (ccminer) is for an editor: no compiler sets it."""
    code = "#ifdef __INTELLISENSE__\n#define __CUDA_ARCH__ 500\n#endif\n" + ARCH_GATED_BODIES
    result = scan_file(source_file(tmp_path, code, "gates.cu"), load_builtin(), Settings())
    assert [f.line for f in result.findings if f.rule == "cuda-arch-empty-body"] == [5, 10]


def test_a_cuda_build_switch_spelled_with_using(tmp_path: Path) -> None:
    # hypre's HYPRE_USING_CUDA, arrayfire's and NeoPZ's USING_CUDA name the CUDA build as USE_CUDA does (hypre's HIP
    # port added `|| defined(HYPRE_USING_HIP)` to each test); a CUDA feature level or a CUDA-aware MPI switch does not
    code = """\
#if defined(SOLVER_USING_CUDA) || defined(SOLVER_USING_DEVICE_OPENMP)
int on_device = 1;
#else
int on_device = 0;
#endif
#ifdef USING_CUDA12
int graphs = 1;
#endif
#ifdef SOLVER_USING_CUDA_AWARE_MPI
int direct = 1;
#endif
#ifndef USING_CUDA
int host_only = 1;
#endif
"""
    found = [f for f in findings(tmp_path, code, name="vec.c") if f.rule == "cuda-build-switch"]
    assert [(f.line, f.severity.label, [o.line for o in f.occurrences]) for f in found] == [
        (1, "info", [1, 3, 5, 12, 14])]
