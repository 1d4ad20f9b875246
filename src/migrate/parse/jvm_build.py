"""JVM builds: a Maven pom.xml's <dependency> elements and a Gradle build script's (build.gradle, build.gradle.kts)
dependency coordinates, as package items named `group:artifact` in lower case. Read as text: comments are blanked
first; a test-scoped or <optional> dependency is an optional item."""

from __future__ import annotations

import re

from migrate.model import FileKind, SourceFile
from migrate.parse.document import blank_match, register
from migrate.parse.manifest import PACKAGE, Item, ManifestDocument, Positions

_XML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_POM_DEPENDENCY = re.compile(r"<dependency>(.*?)</dependency>", re.S)


def _element(body: str, tag: str) -> re.Match[str] | None:
    return re.search(rf"<{tag}>\s*([^<\s]+)\s*</{tag}>", body)


# Gradle: // and /* */ comments (a URL's // inside a string is kept), then quoted coordinates `group:artifact[:...]`
# given to a dependency configuration (implementation, api, compile, runtimeOnly, testImplementation, ...), and the
# map form `group: 'g', name: 'a'`
_GRADLE_COMMENT = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|//[^\n]*|/\*.*?\*/""", re.S)
_GRADLE_COORDINATE = re.compile(
    r"""^[ \t]*([A-Za-z]\w*)[ \t]*\(?[ \t]*(?:platform\()?["']([\w.-]+):([\w.${}-]+)(?::[^"'\n]*)?["']""", re.M)
_GRADLE_MAP = re.compile(
    r"""^[ \t]*([A-Za-z]\w*)[ \t]*\(?[ \t]*group[ \t]*[:=][ \t]*["']([\w.-]+)["'][ \t]*,[ \t]*name[ \t]*[:=][ \t]*"""
    r"""["']([\w.${}-]+)["']""", re.M)


def _pom_items(text: str) -> list[Item]:
    code = _XML_COMMENT.sub(blank_match, text)
    positions = Positions(code)
    found = []
    for block in _POM_DEPENDENCY.finditer(code):
        group, artifact = _element(block.group(1), "groupId"), _element(block.group(1), "artifactId")
        if group is None or artifact is None:
            continue
        scope, optional = _element(block.group(1), "scope"), _element(block.group(1), "optional")
        start = block.start(1) + artifact.start(1)
        found.append(Item(PACKAGE, f"{group.group(1)}:{artifact.group(1)}".lower(), *positions.at(start),
                          value=f"{group.group(1)}:{artifact.group(1)}", args=("maven",),
                          optional=(scope is not None and scope.group(1) == "test")
                          or (optional is not None and optional.group(1) == "true")))
    return found


def _gradle_items(text: str) -> list[Item]:
    code = _GRADLE_COMMENT.sub(lambda m: m.group() if m.group(1) else blank_match(m), text)
    positions = Positions(code)
    found = []
    for pattern in (_GRADLE_COORDINATE, _GRADLE_MAP):
        for match in pattern.finditer(code):
            configuration, group, artifact = match.groups()
            found.append(Item(PACKAGE, f"{group}:{artifact}".lower(), *positions.at(match.start(2)),
                              value=f"{group}:{artifact}", args=("gradle", configuration),
                              optional=configuration.startswith("test")))
    return sorted(found, key=lambda i: (i.line, i.column))


@register(FileKind.JVM_BUILD)
def parse_jvm_build(source: SourceFile, text: str) -> ManifestDocument:
    """A pom.xml or Gradle build script: its dependencies."""
    pom = source.relpath.lower().endswith(".xml")
    return ManifestDocument(source=source, text=text, manifest=_pom_items(text) if pom else _gradle_items(text))
