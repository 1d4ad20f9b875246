"""package.xml: a ROS / ROS 2 package manifest's dependencies (<depend>, <build_depend>, <exec_depend> ...) as
package items, read as text (the elements are flat and one per line; XML comments are blanked first)."""

from __future__ import annotations

import re

from migrate.model import FileKind, SourceFile
from migrate.parse.document import blank_match, register
from migrate.parse.manifest import PACKAGE, Item, ManifestDocument

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DEPEND = re.compile(
    r"<((?:build_|build_export_|buildtool_|buildtool_export_|exec_|run_|test_|doc_)?depend)\b[^>]*>\s*([^<\s]+)\s*</\1\s*>")
_OPTIONAL = frozenset({"test_depend", "doc_depend"})


def depend_items(text: str) -> list[Item]:
    """One item per dependency element: name = the key in lower case with `_` as `-`, args = (the element,)."""
    text = _COMMENT.sub(blank_match, text)
    found = []
    for match in _DEPEND.finditer(text):
        line = text.count("\n", 0, match.start(2)) + 1
        column = match.start(2) - (text.rfind("\n", 0, match.start(2)) + 1) + 1
        name = match.group(2).lower().replace("_", "-")
        found.append(Item(PACKAGE, name, line, column, value=match.group(2), args=(match.group(1),),
                          optional=match.group(1) in _OPTIONAL))
    return found


@register(FileKind.ROS_PACKAGE)
def parse_ros_package(source: SourceFile, text: str) -> ManifestDocument:
    """A package.xml: the package's dependencies."""
    return ManifestDocument(source=source, text=text, manifest=depend_items(text))
