"""Visual Studio projects: in C++ ones (.vcxproj, .props) the CUDA build customisation, nvcc targets and CUDA
libraries; in .NET ones (.csproj, .fsproj, .vbproj) the NuGet packages and projects they reference, as package items
(a referenced project by its file name: `..\\ManagedCUDA\\ManagedCuda.netCore.csproj` is `managedcuda.netcore`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import blank_match, register
from migrate.parse.manifest import FACT, PACKAGE, Item, ManifestDocument, Positions

# XML comments are blanked (same length, newlines kept) so that positions stay valid and nothing in them counts
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# NVIDIA's Visual Studio integration: `<Import Project="$(VCTargetsPath)\BuildCustomizations\CUDA 12.3.props" />`
_CUSTOMIZATION = re.compile(r"<Import\s+Project\s*=\s*\"[^\"]*BuildCustomizations[\\/]+CUDA[ \d.]*\.(?:props|targets)\"",
                            re.I)
# `<CudaCompile Include="kernel.cu" />`: a source that the customisation hands to nvcc
_CUDA_COMPILE = re.compile(r"<CudaCompile\s+Include\s*=\s*\"[^\"]+\"")
# `<CodeGeneration>compute_75,sm_75;compute_86,sm_86</CodeGeneration>`: the nvcc targets of a configuration
_CODE_GENERATION = re.compile(r"<CodeGeneration>\s*([^<]*?\b(?:compute|sm)_\d+[^<]*?)\s*</CodeGeneration>")
# `<AdditionalDependencies>cudart_static.lib;cublas.lib;...`: CUDA toolkit import libraries on the link line
_DEPENDENCIES = re.compile(r"<AdditionalDependencies>([^<]*)</AdditionalDependencies>")
_CUDA_LIBRARY = re.compile(
    r"(?<![\w.-])(cuda|cudart(?:_static)?|cudadevrt|nvrtc|cublas(?:Lt)?|cufft|curand|cusparse|cusolver|nvToolsExt\w*"
    r"|nvml|cudnn|npp\w+|nvjpeg|nvinfer\w*)\.lib\b", re.I)

# `<PackageReference Include="TorchSharp-cuda-linux" Version="..." />`, `<ProjectReference Include="..\x\Y.csproj">`
_REFERENCE = re.compile(r"<(PackageReference|ProjectReference)\s+Include\s*=\s*\"([^\"]+)\"")
_PROJECT_NAME = re.compile(r"([^\\/]+?)\.(?:cs|fs|vb)proj$", re.I)


def reference_items(code: str, positions: Positions) -> Iterator[Item]:
    """The packages and projects a .NET project references, named in lower case."""
    for match in _REFERENCE.finditer(code):
        value = match.group(2).strip()
        project = _PROJECT_NAME.search(value) if match.group(1) == "ProjectReference" else None
        if match.group(1) == "ProjectReference" and project is None:
            continue
        name = (project.group(1) if project else value).lower()
        yield Item(PACKAGE, name, *positions.at(match.start(2)), value=value, args=(match.group(1),))


def msbuild_items(text: str) -> Iterator[Item]:
    """The CUDA facts of a project file, in the order they appear."""
    code = _COMMENT.sub(blank_match, text)
    positions = Positions(code)
    for pattern, fact in ((_CUSTOMIZATION, "msbuild-cuda-build"), (_CUDA_COMPILE, "msbuild-cuda-build")):
        for match in pattern.finditer(code):
            yield Item(FACT, fact, *positions.at(match.start()), value=match.group())
    for match in _CODE_GENERATION.finditer(code):
        yield Item(FACT, "nvcc-arch-flag", *positions.at(match.start(1)), value=match.group(1))
    for match in _DEPENDENCIES.finditer(code):
        for library in _CUDA_LIBRARY.finditer(match.group(1)):
            yield Item(FACT, "msbuild-cuda-library", *positions.at(match.start(1) + library.start()),
                       value=library.group())
    yield from reference_items(code, positions)


@register(FileKind.MSBUILD)
def parse_msbuild(source: SourceFile, text: str) -> ManifestDocument:
    """A Visual Studio project or property sheet reduced to its CUDA facts."""
    found = sorted(msbuild_items(text), key=lambda i: (i.line, i.column))
    return ManifestDocument(source=source, text=text, manifest=found)
