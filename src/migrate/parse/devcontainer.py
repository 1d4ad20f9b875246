"""devcontainer.json (VS Code / Codespaces dev containers): the images it names, read from JSONC text. The file's
`"image"` and the image-valued build arguments (`"BASE_IMAGE"`, `"baseImage"`) are image items at their value;
`//` and `/* */` comments are blanked first, so an alternative image left in a comment names nothing."""

from __future__ import annotations

import re

from migrate.model import FileKind, SourceFile
from migrate.parse.document import as_spaces, register
from migrate.parse.manifest import IMAGE, Item, ManifestDocument, Positions

# a JSON string, a line comment or a block comment: one alternation, so a `//` inside a string is not a comment
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
# a key that names an image (`image`, `BASE_IMAGE`, `baseImage`) and its string value
_IMAGE_ENTRY = re.compile(r'"(\w*image\w*)"\s*:\s*"([^"\\\n]+)"', re.I)


def _without_comments(text: str) -> str:
    """TEXT with each comment's characters blanked (newlines kept): lines and columns stay where they were."""

    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token.startswith('"') else as_spaces(token)

    return _TOKEN.sub(blank, text)


def devcontainer_items(text: str) -> list[Item]:
    """The image items of a devcontainer.json's TEXT."""
    code = _without_comments(text)
    positions = Positions(code)
    return [Item(IMAGE, match.group(2).strip(), *positions.at(match.start(2))) for match in _IMAGE_ENTRY.finditer(code)]


@register(FileKind.DEVCONTAINER)
def parse_devcontainer(source: SourceFile, text: str) -> ManifestDocument:
    """A dev container definition."""
    return ManifestDocument(source=source, text=text, manifest=devcontainer_items(text))
