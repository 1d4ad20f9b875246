"""C integer literals in #define and #if: octal and malformed spellings never stop a scan."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.scan import scan

KERNEL = """\
{directive}
__global__ void reduce(float *v) {{
  float x = v[threadIdx.x];
  x += __shfl_xor_sync(0xffffffff, x, 16);
  v[threadIdx.x] = x;
}}
"""


@pytest.mark.parametrize("directive", [
    "#define UNIX_DIR_MODE 0040000  /* an octal file mode, as zip and tar code spells it */",
    "#define MODE 0755\n#if MODE == 493\n#endif",
    "#if 010 == 8\n#endif",
    "#define ODD 09",  # not a valid C literal: its value is unknown, not an error
    "#if 0x1F > 017\n#endif",
])
def test_octal_and_malformed_literals_are_read_not_fatal(tmp_path: Path, directive: str) -> None:
    (tmp_path / "k.cu").write_text(KERNEL.format(directive=directive))
    result = scan(tmp_path, Settings(jobs=1))
    lines = directive.count("\n") + 1
    assert any(f.path == "k.cu" and f.line == lines + 3 and f.severity.name in ("HIGH", "BLOCKER")
               for f in result.findings)
