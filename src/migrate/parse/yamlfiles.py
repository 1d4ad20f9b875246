"""YAML manifests: conda environments, docker compose, Kubernetes (by content) and CI workflows."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from itertools import chain

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from migrate.model import FileKind, SourceFile
from migrate.parse.document import ParseError, register
from migrate.parse.inferconfig import ENGINE_FILE, engine_files, infer_sections
from migrate.parse.manifest import ENV, FACT, IMAGE, INDEX, Item, ManifestDocument, requirement_item
from migrate.parse.requirements import requirement_items
from migrate.parse.shell import assignment_items, conda_item, image_reference, shell_items

Path_ = tuple[str, ...]
_GPU_RESOURCE_KEYS = ("nvidia.com/gpu", "nvidia.com/mig")


MAX_EXPANDED_NODES = 100_000  # nodes that aliases add (one per path through them): a "billion laughs" bound
_SIZE_CAP = 1 << 62  # expanded sizes stop growing here: the bound is long passed, and the numbers stay small


# libyaml's parser where PyYAML has it: the same nodes and marks, ~15 times faster (CUTLASS + CCCL's 64 YAML files:
# 0.35 -> 0.02 CPU s). What it refuses is composed again by the pure-Python loader, whose errors the report names.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose(text: str) -> list[Node]:
    global _COMPOSED
    try:
        roots = _composed(text, _FAST_LOADER)
    except yaml.YAMLError:
        roots = _composed_or_refused(text)
    _COMPOSED = text
    _bound_aliases(roots)
    return roots


def _composed(text: str, loader: type) -> list[Node]:
    return [node for node in yaml.compose_all(text, Loader=loader) if node is not None]


def _composed_or_refused(text: str) -> list[Node]:
    try:
        return _composed(text, yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParseError(f"invalid YAML{where}: {problem}") from None


_COMPOSED = ""  # the text _compose read last: the marks of libyaml's nodes hold no buffer


def _bound_aliases(roots: list[Node]) -> None:
    """ParseError when aliases make the documents expand past MAX_EXPANDED_NODES or refer to themselves.

    The composer shares one node per anchor, so the tree is small; every walk over it follows each alias
    again, and nested aliases multiply. What counts is what the aliases add, the expanded size less the nodes
    the file itself holds: a list of 110,000 plain items adds nothing. Sizes are memoised per node: linear in
    the composed graph."""
    sizes: dict[int, int] = {}
    expanded = 0
    for root in roots:
        expanded += _expanded_size(root, sizes, set())
        if expanded - len(sizes) > MAX_EXPANDED_NODES:  # sizes holds every node seen once
            raise ParseError(f"YAML aliases expand too far (more than {MAX_EXPANDED_NODES:,} nodes): refused")


def _expanded_size(root: Node, sizes: dict[int, int], active: set[int]) -> int:
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:  # iterative: deep YAML must not overflow the Python stack here
        node, done = stack.pop()
        key = id(node)
        children = node.value if isinstance(node, SequenceNode) else []
        if isinstance(node, MappingNode):
            children = [part for pair in node.value for part in pair]
        if done:
            active.discard(key)
            size = 1 + sum(sizes[id(child)] for child in children)
            sizes[key] = min(size, _SIZE_CAP)
            continue
        if key in sizes:
            continue
        if key in active:
            raise ParseError("YAML alias refers to itself: refused")
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _pos(node: Node) -> tuple[int, int]:
    quoted = isinstance(node, ScalarNode) and node.style in ("'", '"')
    return node.start_mark.line + 1, node.start_mark.column + 1 + (1 if quoted else 0)


def _walk(node: Node, path: Path_ = ()) -> Iterator[tuple[Path_, Node | None, Node]]:
    """(path, key node or None, value node) for every mapping entry and sequence item, depth first."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, ScalarNode) else "?"
            yield path + (str(name),), key, value
            yield from _walk(value, path + (str(name),))
    elif isinstance(node, SequenceNode):
        for item in node.value:
            yield path + ("[]",), None, item
            yield from _walk(item, path + ("[]",))


def _get(node: Node, key: str) -> Node | None:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == key:
                return v  # type: ignore[no-any-return]
    return None


def _scalar(node: Node | None) -> str | None:
    return str(node.value) if isinstance(node, ScalarNode) else None


def _env_items(node: Node) -> Iterator[Item]:
    """`environment:`/`env:` as a mapping, a list of NAME=value strings, or a list of {name, value}."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            yield from assignment_items(str(key.value), _scalar(value) or "", _pos(key))
    elif isinstance(node, SequenceNode):
        for item in node.value:
            text = _scalar(item)
            name_node = _get(item, "name")
            if text is not None:
                yield Item(ENV, text.split("=", 1)[0], *_pos(item), value=text.partition("=")[2])
            elif isinstance(name_node, ScalarNode):
                yield Item(ENV, str(name_node.value), *_pos(name_node), value=_scalar(_get(item, "value")) or "")


def _script_items(node: Node) -> list[Item]:
    """The shell inside a `run:`/`script:` scalar (or list of scalars), located in the file."""
    scalars = node.value if isinstance(node, SequenceNode) else [node]
    found: list[Item] = []
    for scalar in scalars:
        if isinstance(scalar, ScalarNode):
            found.extend(shell_items(str(scalar.value), _scalar_origin(scalar)))
    return found


def _scalar_origin(node: ScalarNode) -> Callable[[int], tuple[int, int]]:
    """Offset in a scalar's value -> (line, column) in the file; block scalars start on the next line."""
    value = str(node.value)
    block = node.style in ("|", ">")
    first_line = node.start_mark.line + (2 if block else 1)
    breaks, index = [], value.find("\n")
    while index != -1:  # where each line of the value starts, found once: a step's script has many items
        breaks.append(index)
        index = value.find("\n", index + 1)
    indent = _block_indent(node) if block else 0

    def origin(offset: int) -> tuple[int, int]:
        line = bisect.bisect_left(breaks, offset)  # the newlines before OFFSET
        column = offset - (breaks[line - 1] + 1 if line else 0)
        if block:
            return first_line + line, column + 1 + indent
        # past a quote: a plain scalar's style is None (PyYAML) or "" (libyaml)
        return node.start_mark.line + 1 + line, node.start_mark.column + column + 1 + (1 if node.style else 0)

    return origin


def _block_indent(node: ScalarNode) -> int:
    lines = _text_lines(_COMPOSED)
    line_no = node.start_mark.line + 1
    if line_no >= len(lines):
        return 0
    line = lines[line_no]
    return len(line) - len(line.lstrip())


def _text_lines(text: str) -> list[str]:
    """The lines of the composed TEXT, split once per file (a CI file has a block scalar per step)."""
    global _LINES
    if _LINES[0] is not text:
        _LINES = (text, text.splitlines())
    return _LINES[1]


_LINES: tuple[str | None, list[str]] = (None, [])


# conda-build recipes (meta.yaml) are Jinja templates: statements and comments ({% set %}, {% if %}, {# #}) and
# expressions ({{ version }}, {{ compiler('cuda') }}) that are no YAML until conda-build renders them.
_JINJA = re.compile(r"\{%.*?%\}|\{#.*?#\}|\{\{.*?\}\}", re.S)
# the recipe sections that list packages: requirements of the recipe and of each of its outputs
_RECIPE_SECTIONS = ("build", "host", "run", "run_constrained")
# {{ compiler('cuda') }}: conda-forge renders it as nvcc (CUDA 11) or cuda-nvcc (CUDA 12 and later), NVIDIA's compiler
_CUDA_COMPILER = re.compile(r"\{\{\s*compiler\(\s*['\"]cuda['\"]\s*\)\s*\}\}")
_CUDA_COMPILER_PACKAGE = "cuda-nvcc"


def _without_jinja(text: str) -> str:
    """TEXT with each Jinja statement and comment blanked and each expression made a run of zeros of its length: a
    package line keeps its name (`cuda-toolkit {{ v }}` reads `cuda-toolkit 000000`), and every line and column of
    the rest stays where it was (newlines inside a tag are kept). `{{ compiler('cuda') }}` reads as the package it
    renders to (cuda-nvcc)."""
    if "{%" not in text and "{{" not in text and "{#" not in text:
        return text

    def blank(match: re.Match[str]) -> str:
        if _CUDA_COMPILER.fullmatch(match.group()):  # the package it renders to, at the same place
            return _CUDA_COMPILER_PACKAGE.ljust(len(match.group()))
        fill = "0" if match.group().startswith("{{") else " "
        return "".join(c if c == "\n" else fill for c in match.group())
    return _JINJA.sub(blank, text)


def _recipe_requirements(root: Node) -> Iterator[Node]:
    """The package specs of a conda-build recipe: requirements/{build,host,run,run_constrained} of the recipe and of
    each of its outputs."""
    for owner in [root, *_sequence(_get(root, "outputs"))]:
        requirements = _get(owner, "requirements")
        for section in _RECIPE_SECTIONS:
            yield from _sequence(_get(requirements, section) if requirements is not None else None)


def conda_items(root: Node, problems: list[str] | None = None) -> Iterator[Item]:
    """environment.yml: channels and dependencies, including the nested pip list (a pip line pip would reject is
    left out and described in PROBLEMS); meta.yaml: the packages its requirements list."""
    for channel in _sequence(_get(root, "channels")):
        if _scalar(channel):
            yield Item(INDEX, str(channel.value), *_pos(channel), value="conda-channel")
    for dep in _recipe_requirements(root):
        if _scalar(dep):
            yield conda_item(str(dep.value), *_pos(dep))
    yield from _dependency_file_items(root)
    for dep in _sequence(_get(root, "dependencies")):
        if _scalar(dep):
            yield conda_item(str(dep.value), *_pos(dep))
        for pip_line in _sequence(_get(dep, "pip")):
            if _scalar(pip_line):
                line, column = _pos(pip_line)
                rejected: list[str] = []
                for item in requirement_items(str(pip_line.value), problems=rejected):
                    yield Item(item.kind, item.name, line, column, value=item.value, args=item.args,
                               positions=tuple((line, column) for _ in item.positions), local=item.local, url=item.url)
                if problems is not None:
                    problems.extend(f"line {line} skipped: {p.split(' skipped: ', 1)[-1]}" for p in rejected)


def _dependency_file_items(root: Node) -> Iterator[Item]:
    """dependencies.yaml of rapids-dependency-file-generator: `files:` and, per dependency set, `common` and
    `specific` entries whose `packages:` (directly or in `matrices:`) are conda specs where the entry's output_types
    name conda, else pip requirements."""
    dependency_sets = _get(root, "dependencies")
    if not isinstance(_get(root, "files"), MappingNode) or not isinstance(dependency_sets, MappingNode):
        return
    for _, dependency_set in dependency_sets.value:
        for section in ("common", "specific"):
            for entry in _sequence(_get(dependency_set, section)):
                types = _get(entry, "output_types")
                conda = "conda" in ([_scalar(t) for t in _sequence(types)] if isinstance(types, SequenceNode)
                                    else [_scalar(types)])
                lists = [_get(entry, "packages"), *(_get(m, "packages") for m in _sequence(_get(entry, "matrices")))]
                for package in (p for listed in lists for p in _sequence(listed) if _scalar(p)):
                    yield _dependency_item(str(package.value), *_pos(package), conda=conda)


def _dependency_item(spec: str, line: int, column: int, *, conda: bool) -> Item:
    """One package of a dependency file: a conda spec, or the first item a pip line makes (a line pip rejects, such
    as an anchor's bare name with a conda pin, is read as conda)."""
    if not conda:
        for item in requirement_items(spec, problems=[]):
            return Item(item.kind, item.name, line, column, value=item.value, args=item.args, local=item.local,
                        url=item.url)
    return conda_item(spec, line, column)


def _sequence(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def compose_items(root: Node) -> Iterator[Item]:
    """docker compose: images, runtime, GPU device reservations, environment, commands."""
    for path, key, value in _walk(root):
        name = path[-1]
        if name == "image" and _scalar(value):
            yield Item(IMAGE, str(value.value), *_pos(value))
        elif name == "runtime" and _scalar(value):
            yield Item(FACT, "container-runtime", *_pos(value), value=str(value.value))
        elif name == "driver" and "devices" in path and _scalar(value):
            yield Item(FACT, "gpu-reservation-driver", *_pos(value), value=str(value.value))
        elif name == "environment" and key is not None:
            yield from _env_items(value)


def kubernetes_items(root: Node) -> Iterator[Item]:
    """Kubernetes objects: nvidia.com/gpu resources, images, env, runtimeClassName, node selectors."""
    for path, key, value in _walk(root):
        name = path[-1]
        if key is not None and name in _GPU_RESOURCE_KEYS and ("limits" in path or "requests" in path):
            yield Item(FACT, "gpu-resource", *_pos(key), value=name)
        elif name == "image" and _scalar(value):
            yield Item(IMAGE, str(value.value), *_pos(value))
        elif name == "runtimeClassName" and _scalar(value):
            yield Item(FACT, "container-runtime", *_pos(value), value=str(value.value))
        elif name == "env" and key is not None:
            yield from _env_items(value)


def workflow_items(root: Node) -> Iterator[Item]:
    """CI workflows: container and service images, `uses:` actions, runner labels, env, and the shell of run/script
    steps."""
    for path, key, value in _walk(root):
        name = path[-1]
        if (name in ("image", "container") or (name == "name" and path[-2:-1] == ("image",))) and _scalar(value):
            yield Item(IMAGE, str(value.value), *_pos(value))
        elif name == "uses" and _scalar(value):
            yield Item(FACT, "ci-action", *_pos(value), value=str(value.value))
        elif name in ("env", "variables") and key is not None:
            yield from _env_items(value)
        elif name in ("run", "script", "before_script", "after_script") and key is not None:
            yield from _script_items(value)
        elif name == "options" and "container" in path and isinstance(value, ScalarNode):
            yield from _container_options(value)
        elif name == "runs-on" and key is not None:
            yield from _runner_labels(value)


def _runner_labels(node: Node) -> Iterator[Item]:
    """`runs-on:` as one label, a list of labels, or a mapping with `labels:` (GitHub's runner groups)."""
    labels = _get(node, "labels") if isinstance(node, MappingNode) else node
    for label in _sequence(labels) if isinstance(labels, SequenceNode) else [labels] if labels else []:
        if _scalar(label):
            yield Item(FACT, "ci-runner", *_pos(label), value=str(label.value))


def _container_options(node: ScalarNode) -> list[Item]:
    """GitHub's `container.options` are `docker create` flags: read them as such."""
    prefix = "docker create "
    origin = _scalar_origin(node)
    return shell_items(prefix + str(node.value), lambda offset: origin(max(0, offset - len(prefix))))


def is_kubernetes(root: Node) -> bool:
    return _scalar(_get(root, "apiVersion")) is not None and _scalar(_get(root, "kind")) is not None


def _document(source: SourceFile, text: str, extract: Callable[[Node], Iterator[Item]]) -> ManifestDocument:
    found = [item for root in _compose(text) for item in extract(root)]
    return ManifestDocument(source=source, text=text, manifest=found)


@register(FileKind.CONDA)
def parse_conda(source: SourceFile, text: str) -> ManifestDocument:
    """A conda environment file."""
    problems: list[str] = []
    found = [item for root in _compose(_without_jinja(text)) for item in conda_items(root, problems)]
    doc = ManifestDocument(source=source, text=text, manifest=found)
    doc.problems = problems
    return doc


@register(FileKind.COMPOSE)
def parse_compose(source: SourceFile, text: str) -> ManifestDocument:
    """A docker compose file."""
    return _document(source, text, compose_items)


@register(FileKind.CI_WORKFLOW)
def parse_workflow(source: SourceFile, text: str) -> ManifestDocument:
    """A GitHub Actions or GitLab CI file."""
    return _document(source, text, workflow_items)


def cog_items(root: Node) -> Iterator[Item]:
    """Replicate cog.yaml: `build.gpu`, `build.cuda`, `build.python_packages` and the `build.run` commands."""
    build = _get(root, "build")
    if build is None:
        return
    for key in ("gpu", "cuda"):
        node = _get(build, key)
        value = _scalar(node)
        if node is not None and value is not None:
            yield Item(FACT, f"cog-{key}", *_pos(node), value=value.lower())
    for package in _sequence(_get(build, "python_packages")):
        item = requirement_item(_scalar(package) or "", *_pos(package), strict=False)
        if item is not None:
            yield item
    for command in _sequence(_get(build, "run")):
        yield from _script_items(_get(command, "command") or command)


def image_items(root: Node) -> Iterator[Item]:
    """Any YAML (launcher configs, Helm values): values of `*image*` keys that read as image references, and values
    that name a serialized TensorRT engine."""
    for path, _key, value in _walk(root):
        text = _scalar(value)
        if not text:
            continue
        image = image_reference(text) if "image" in path[-1].lower() else None
        if image:
            yield Item(IMAGE, image, *_pos(value))
        elif ENGINE_FILE.search(text):
            yield from engine_files([(path[-1], text, *_pos(value))])


def infer_config_items(root: Node) -> Iterator[Item]:
    """A DeepStream YAML config: its inference sections (`property:`, `primary-gie:`)."""
    if not isinstance(root, MappingNode):
        return
    sections = [
        (str(key.value).lower(), *_pos(key), [(str(k.value).lower(), _scalar(v) or "", *_pos(k)) for k, v in value.value
                                              if isinstance(k, ScalarNode)])
        for key, value in root.value if isinstance(key, ScalarNode) and isinstance(value, MappingNode)
    ]
    yield from infer_sections(sections)


# a training or inference config key that picks an attention backend, and the values that pick a CUDA-built one
# (AnimateDiff's enable_xformers_memory_efficient_attention: True, axolotl's flash_attention: true, TRL recipes'
# attn_implementation: flash_attention_2, LLaMA-Factory's flash_attn: fa2)
_ATTENTION_KEY = re.compile(r"^(?:enable_|use_)?(?:xformers(?:_attention|_memory_efficient_attention)?|"
                            r"flash_?attn(?:_2)?|flash_attention(?:_2)?|attn_implementation)$", re.IGNORECASE)
_ATTENTION_ON = re.compile(r"^(?:true|yes|on|fa2|fa3|flash_attention_[23])$", re.IGNORECASE)


def attention_switch_items(root: Node) -> Iterator[Item]:
    """Config keys that turn on flash-attn or xFormers (a CUDA-built attention package) by value."""
    for path, _key, value in _walk(root):
        text = _scalar(value)
        if text and _ATTENTION_KEY.match(path[-1]) and _ATTENTION_ON.match(text.strip()):
            yield Item(FACT, "attention-switch", *_pos(value), value=f"{path[-1]}={text.strip()}")


def _other_yaml(root: Node) -> Iterator[Item]:
    if is_kubernetes(root):
        return kubernetes_items(root)
    return chain(image_items(root), infer_config_items(root), attention_switch_items(root))


_OTHER_YAML_WORDS = ("apiversion", "image", ".engine", ".plan", "property", "-gie", "xformers", "flash_att", "flashatt")


@register(FileKind.KUBERNETES, FileKind.YAML)
def parse_yaml(source: SourceFile, text: str) -> ManifestDocument:
    """Any other YAML: a Kubernetes manifest (apiVersion + kind), or else only its image references, DeepStream
    inference sections and TensorRT engine files."""
    low = text.lower()
    if not any(word in low for word in _OTHER_YAML_WORDS):
        return ManifestDocument(source=source, text=text)  # nothing could yield an item: spare the YAML parse
    return _document(source, text, _other_yaml)


@register(FileKind.COG)
def parse_cog(source: SourceFile, text: str) -> ManifestDocument:
    """Replicate's cog.yaml."""
    return _document(source, text, cog_items)
