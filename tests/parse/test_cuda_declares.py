"""Which names a CUDA document declares itself (its own overloads and wrappers of CUDA names are never reported or
renamed): each declaring shape, and the same names used, commented or quoted, which declare nothing."""

from __future__ import annotations

from pathlib import Path

from migrate.model import FileKind
from migrate.parse import cuda

from conftest import parse_file

CODE = """\
#define kMacro 4
#define kFunctionMacro(x) ((x) + 1)
cudaError_t cudaWrapped(void* p);
namespace mine { int qualified(int); }
int mine::qualified(int v) { return v; }
struct Holder { void method(); float member; };
int plainVariable;
int initialised = 3, *pointed = nullptr;
void takes(int parameter, float* pointerParameter);
using Alias = int;
typedef float Typedef;
struct Defined { int x; };
class Klass { };
enum Colour { kRed };
struct Forward;
int caller() { return used(3) + cudaMalloc(nullptr, 0) + Forward::value; }
// int commented;
const char* text = "int quoted;";
#define WRAP(y) int inMacro = y
"""

DECLARED = {"kMacro", "kFunctionMacro", "cudaWrapped", "qualified", "method", "member", "plainVariable",
            "initialised", "pointed", "takes", "parameter", "pointerParameter", "Alias", "Typedef", "Defined",
            "Klass", "kRed", "caller", "text", "Holder", "WRAP", "x", "p", "v"}
NOT_DECLARED = {"used", "cudaMalloc", "Forward", "value", "commented", "quoted", "inMacro", "mine", "y",
                "nullptr", "float", "Colour", ""}


def test_each_declaring_shape_declares_and_uses_comments_and_strings_do_not(tmp_path: Path) -> None:
    document = parse_file(tmp_path, "declares.cu", FileKind.CUDA, CODE)
    assert isinstance(document, cuda.CudaDocument)
    assert {name for name in DECLARED | NOT_DECLARED if document.declares(name)} == DECLARED


def test_a_name_qualified_twice_or_a_struct_without_body_declares_nothing(tmp_path: Path) -> None:
    document = parse_file(tmp_path, "nested.cu", FileKind.CUDA,
                          "int a::b::deep(int);\nstruct Named;\nvoid use(Named* n) { deep(1); }\n")
    assert isinstance(document, cuda.CudaDocument)
    assert [document.declares(name) for name in ("deep", "Named", "use", "n")] == [False, False, True, True]
