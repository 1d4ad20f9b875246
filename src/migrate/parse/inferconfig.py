"""Inference configs: DeepStream's (nvinfer `[property]`, deepstream-app `[primary-gie]`: INI sections and keys) and
Triton Inference Server model configs (config.pbtxt: the backend that serves the model)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import FACT, Item, ManifestDocument

# Keys only the nvinfer plugin (and the gie groups of deepstream-app) read: a [property] section with none of
# them is some other INI file.
NVINFER_KEYS = frozenset(
    {"model-engine-file", "onnx-file", "tlt-encoded-model", "uff-file", "int8-calib-file", "network-mode",
     "gie-unique-id", "parse-bbox-func-name", "engine-create-func-name", "custom-lib-path", "network-type",
     "infer-dims", "output-blob-names", "num-detected-classes"}
)
INFER_SECTION = re.compile(r"^(?:property|primary-gie|secondary-gie\d*)$")
ENGINE_FILE = re.compile(r"\.(?:engine|plan)$", re.I)
_SECTION = re.compile(r"^\s*\[\s*([\w.-]+)\s*\]")
_KEY = re.compile(r"^\s*([\w.-]+)\s*[=:]\s*(.*?)\s*$")
# gst-nvinferserver (DeepStream's Triton element) reads protobuf text, not INI: its top block is `infer_config {`.
_INFERSERVER_BLOCK = re.compile(r"^(\s*)infer_config\s*\{")
# A Triton model config names the backend that serves the model at its top level: `platform: "tensorrt_plan"`,
# `backend: "tensorrt"` (protobuf text; the value may be quoted with either quote or not at all).
_TRITON_BACKEND = re.compile(r"""^(platform|backend)\s*:\s*["']?([\w.-]+)["']?\s*(?:#.*)?$""")
Entry = tuple[str, str, int, int]  # key, value, line, column
Section = tuple[str, int, int, list[Entry]]  # name, line, column, entries


def infer_sections(sections: Iterable[Section]) -> Iterator[Item]:
    """A `deepstream-infer` fact at each inference section that sets a key only nvinfer reads."""
    for name, line, column, entries in sections:
        if INFER_SECTION.match(name) and any(key in NVINFER_KEYS for key, *_ in entries):
            yield Item(FACT, "deepstream-infer", line, column, value=name)


def engine_files(entries: Iterable[Entry]) -> Iterator[Item]:
    """A `tensorrt-engine-file` fact at each value that names a serialized TensorRT engine (.engine, .plan)."""
    for key, value, line, column in entries:
        if ENGINE_FILE.search(value) or (key == "model-engine-file" and value):
            yield Item(FACT, "tensorrt-engine-file", line, column, value=f"{key}={value}")


def inferserver_blocks(text: str) -> Iterator[Item]:
    """A `deepstream-infer` fact at each top-level `infer_config {` block of an nvinferserver (Triton) config."""
    for number, line in enumerate(text.splitlines(), start=1):
        block = _INFERSERVER_BLOCK.match(line)
        if block:
            yield Item(FACT, "deepstream-infer", number, len(block.group(1)) + 1, value="infer_config")


def triton_backends(text: str) -> Iterator[Item]:
    """A `triton-backend` fact at each top-level `platform:` / `backend:` of a Triton model config: its value."""
    if "platform" not in text and "backend" not in text:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        found = _TRITON_BACKEND.match(line)
        if found:
            yield Item(FACT, "triton-backend", number, 1, value=found.group(2))


def _sections(text: str) -> Iterator[Section]:
    current: Section | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("#", ";")):
            continue
        header = _SECTION.match(line)
        if header:
            if current:
                yield current
            current = (header.group(1).lower(), number, line.index("[") + 1, [])
            continue
        entry = _KEY.match(line)
        if entry and current is not None:
            value = entry.group(2).split(" #", 1)[0].strip()
            current[3].append((entry.group(1).lower(), value, number, entry.start(1) + 1))
    if current:
        yield current


@register(FileKind.INFER_CONFIG)
def parse_infer_config(source: SourceFile, text: str) -> ManifestDocument:
    """An inference config: DeepStream inference sections and the TensorRT engines it names, or the backend a
    Triton model config serves its model with."""
    sections = list(_sections(text))
    found = [*infer_sections(sections), *engine_files(entry for *_, entries in sections for entry in entries),
             *inferserver_blocks(text), *triton_backends(text)]
    return ManifestDocument(source=source, text=text, manifest=sorted(found, key=lambda i: (i.line, i.column)))
