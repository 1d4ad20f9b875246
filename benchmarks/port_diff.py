#!/usr/bin/env python3
"""How much of real ROCm ports `migrate scan` points at and `migrate apply --dry-run` reproduces, against a grep.

    python benchmarks/port_diff.py MIRRORS                       # every pair of benchmarks/port_pairs.json
    python benchmarks/port_diff.py MIRRORS --only apex --json out.json --missed missed.txt
    python benchmarks/port_diff.py MIRRORS --migrate ~/venv/bin/migrate --keep /tmp/trees

MIRRORS holds git mirrors or clones of the pairs' repositories, as MIRRORS/<owner>+<name>/repo (what the fetch
tool brings), MIRRORS/<owner>+<name> or MIRRORS/<owner>/<name>. Each pair names an upstream and a fork (the same
repository for an in-tree porting commit), a base commit (the merge base, or the commit before the port) and a
head commit (the fork's branch, or the port's last commit). The diff base → head is the port; its hunks in files
that exist at base are the lines a port had to change. The benchmark scans the base tree, greps it, and runs
`migrate apply --dry-run` on it; it runs nothing from the repositories. See docs/recall.md for the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import port_diff_families  # noqa: E402  (same directory)
from port_diff_figures import (  # noqa: E402
    KINDS, SEVERITIES, WINDOW, FileDiff, Hunk, Mark, PortTruth, Tally, apply_overlap, grep_marks, parse_diff,
    port_truth, scan_marks, sum_counts, tally, total,
)

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
PAIRS = Path(__file__).resolve().parent / "port_pairs.json"
TOOLS = {  # name: (min severity of a finding, least severity counted for focus)
    "migrate": ("low", "high"),
    "migrate+info": ("info", "high"),
}
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}
# Attributes of the scanned trees must not change what git writes or diffs: no export-ignore, filters or eol.
NEUTRAL_ATTRIBUTES = "* !text !eol !filter !ident !diff !export-ignore !export-subst !working-tree-encoding\n"


class BenchError(Exception):
    """Bad input: a missing mirror or commit, a bad pairs file, a command that failed."""


@dataclass(frozen=True)
class Pair:
    """One real port: where its repositories are and which commits bound it."""

    name: str
    upstream: str
    fork: str
    base: str
    head: str
    upstream_ref: str | None
    note: str
    upstream_mirror: str | None = None  # where upstream's commits are read when not from its own mirror

    @property
    def kind(self) -> str:
        """fork (merge base → fork branch) or commit (an in-tree porting commit or series)."""
        return "commit" if self.upstream == self.fork else "fork"


def load_pairs(path: Path) -> list[Pair]:
    """The pairs of a pairs file (a JSON list of objects with the fields of Pair)."""
    try:
        rows = json.loads(path.read_text())
        return [Pair(r["name"], r["upstream"], r["fork"], r["base"], r["head"], r.get("upstream_ref"),
                     r.get("note", ""), r.get("upstream_mirror")) for r in rows]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BenchError(f"{path}: not a pairs file ({error})") from error


# -- git ---------------------------------------------------------------------------------------------------------------


def git(git_dir: Path, *args: str) -> str:
    """Run git on GIT_DIR without user or system configuration; its stdout."""
    done = subprocess.run(["git", "--git-dir", str(git_dir), "-c", "core.quotePath=false", *args],
                          capture_output=True, env={**os.environ, **GIT_ENV})
    if done.returncode:
        raise BenchError(f"git {' '.join(args[:3])}: {done.stderr.decode(errors='replace').strip()[:200]}")
    return done.stdout.decode("utf-8", "replace")


def mirror_git_dir(mirrors: Path, repo: str) -> Path:
    """The git directory of REPO (owner/name) under MIRRORS."""
    owner, _, name = repo.partition("/")
    for place in (mirrors / f"{owner}+{name}" / "repo", mirrors / f"{owner}+{name}", mirrors / owner / name):
        if (place / ".git" / "objects").is_dir():
            return place / ".git"
        if (place / "objects").is_dir() and (place / "HEAD").is_file():
            return place
    raise BenchError(f"no mirror of {repo} under {mirrors}")


def open_pair(pair: Pair, mirrors: Path, work: Path) -> Path:
    """A bare repository in WORK that sees the objects of both mirrors (by alternates), with neutral attributes."""
    repos = (pair.upstream_mirror or pair.upstream, pair.fork)
    stores = {str((mirror_git_dir(mirrors, repo) / "objects").resolve()) for repo in repos}
    git_dir = work / "pair.git"
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True, env={**os.environ, **GIT_ENV})
    (git_dir / "objects" / "info" / "alternates").write_text("".join(f"{s}\n" for s in sorted(stores)))
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text(NEUTRAL_ATTRIBUTES)
    for sha in (pair.base, pair.head, *([pair.upstream_ref] if pair.upstream_ref else [])):
        git(git_dir, "cat-file", "-e", f"{sha}^{{commit}}")
    _check_base(git_dir, pair)
    return git_dir


def _check_base(git_dir: Path, pair: Pair) -> None:
    if pair.upstream_ref:
        found = git(git_dir, "merge-base", pair.upstream_ref, pair.head).strip()
        if found != pair.base:
            raise BenchError(f"{pair.name}: merge base of {pair.upstream_ref[:12]} and the fork is {found[:12]}")
    else:
        git(git_dir, "merge-base", "--is-ancestor", pair.base, pair.head)


def port_changes(git_dir: Path, base: str, head: str) -> PortTruth:
    """The port base → head: hunks in files that exist at base (renames followed; whitespace and blank lines not)."""
    text = git(git_dir, "diff", "-U0", "-M", "-w", "--ignore-blank-lines", "--no-color", "--no-ext-diff",
               "--no-textconv", base, head)
    return port_truth(parse_diff(text))


def extract(git_dir: Path, commit: str, dest: Path) -> list[str]:
    """Write the regular files of COMMIT into DEST; the paths whose blobs the mirror lacks (left out)."""
    dest.mkdir(parents=True)
    listing = git(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit).split("\0")
    files = [(entry.split()[0], entry.split()[2], entry.partition("\t")[2]) for entry in listing if entry]
    missing = []
    batch = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, env={**os.environ, **GIT_ENV})
    assert batch.stdin and batch.stdout
    for mode, sha, path in files:
        if mode not in ("100644", "100755") or ".." in path.split("/"):
            continue  # links and submodules are not part of the scanned tree
        batch.stdin.write(f"{sha}\n".encode())
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if header[1:2] != [b"blob"]:
            missing.append(path)
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if mode == "100755" else 0o644)
    batch.stdin.close()
    batch.wait()
    return missing


def index_tree(tree: Path) -> None:
    """Make TREE a git work tree whose index holds every file written, as a clone's does: a scan reads it as it
    reads a checkout (git's file list, so a tracked `build/` folder is read, as it is in a clone)."""
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", str(tree)], check=True, env=env)
    (tree / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (tree / ".git" / "info" / "attributes").write_text(NEUTRAL_ATTRIBUTES)
    done = subprocess.run(["git", "-C", str(tree), "add", "-A", "-f", "."], capture_output=True, env=env)
    if done.returncode:
        raise BenchError(f"git add in {tree.name}: {done.stderr.decode(errors='replace').strip()[:200]}")


# -- migrate -----------------------------------------------------------------------------------------------------------


def run_scan(migrate: str, tree: Path, out: Path) -> Json:
    """`migrate scan TREE --format json --output OUT --no-cache`, read back."""
    done = subprocess.run([migrate, "scan", str(tree), "--format", "json", "--output", str(out), "--no-cache"],
                          capture_output=True, text=True)
    if done.returncode not in (0, 1) or not out.is_file():
        raise BenchError(f"migrate scan {tree.name} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    report: Json = json.loads(out.read_text())
    return report


def run_apply(migrate: str, tree: Path) -> str:
    """`migrate apply TREE --dry-run` (default strategy): the unified diff it prints."""
    done = subprocess.run([migrate, "apply", str(tree), "--dry-run"], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise BenchError(f"migrate apply {tree.name} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return done.stdout


# -- one pair ----------------------------------------------------------------------------------------------------------


def measure(pair: Pair, mirrors: Path, migrate: str, work: Path) -> Json:
    """Every figure of one pair: the port, the tools' recall and focus, apply's overlap, the missed hunks."""
    git_dir = open_pair(pair, mirrors, work)
    truth = port_changes(git_dir, pair.base, pair.head)
    missing = extract(git_dir, pair.base, work / "tree")
    index_tree(work / "tree")
    marks, applied, seconds = _run_tools(migrate, work)
    tools, missed = {}, {}
    for name, found in marks.items():
        focus = SEVERITIES.index(TOOLS[name][1]) if name in TOOLS else 0
        tools[name], missed[name] = tally(truth, found, focus_rank=focus)
    return {
        "name": pair.name, "kind": pair.kind, "upstream": pair.upstream, "fork": pair.fork, "base": pair.base,
        "head": pair.head, "note": pair.note, "hunks": len(truth.hunks), "files": len(truth.touched),
        "added_files": len(truth.added), "excluded": {k: len(v) for k, v in truth.excluded.items()},
        "excluded_files": truth.excluded, "missing_blobs": missing,
        "tools": {name: _tool_json(by_kind) for name, by_kind in tools.items()},
        "apply": apply_overlap(truth, applied),
        "missed": _missed_json(missed["migrate"], missed["migrate+info"], missed["grep"]),
        "seconds": seconds,
    }


def _run_tools(migrate: str, work: Path) -> tuple[dict[str, list[Mark]], list[FileDiff], dict[str, float]]:
    """The marks of each tool on WORK/tree, the diff apply would make, and the seconds each took."""
    tree, clock, seconds = work / "tree", time.perf_counter(), {}
    report = run_scan(migrate, tree, work / "scan.json")
    marks = {name: scan_marks(report, min_severity=floor) for name, (floor, _) in TOOLS.items()}
    seconds["scan"], clock = round(time.perf_counter() - clock, 1), time.perf_counter()
    marks["grep"] = grep_marks(tree)
    seconds["grep"], clock = round(time.perf_counter() - clock, 1), time.perf_counter()
    applied = parse_diff(run_apply(migrate, tree))
    seconds["apply"] = round(time.perf_counter() - clock, 1)
    return marks, applied, seconds


def _tool_json(by_kind: dict[str, Tally]) -> Json:
    return {"total": total(by_kind).figures(), "by_kind": {k: v.figures() for k, v in by_kind.items()}}


def _missed_json(missed: list[Hunk], missed_any: list[Hunk], missed_grep: list[Hunk]) -> list[Json]:
    """The hunks no finding at low or above is near, with what grep and info findings did there."""
    any_missed, grep_missed = set(missed_any), set(missed_grep)
    return [{"path": h.path, "old": [h.block.start, h.block.end], "insertion": h.block.insertion, "kind": h.kind,
             "removed": [line[:160] for line in h.block.removed[:3]],
             "added": [line[:160] for line in h.block.added[:3]], "info_hit": h not in any_missed,
             "grep_hit": h not in grep_missed, "family": port_diff_families.family(h)} for h in missed]


# -- totals and rendering ----------------------------------------------------------------------------------------------


def totals(results: list[Json]) -> Json:
    """Figures summed over the pairs (ratios of the sums, not means of ratios)."""
    tools: Json = {}
    for name in (*TOOLS, "grep"):
        by_kind = {kind: Tally() for kind in KINDS}
        for result in results:
            for kind, counts in result["tools"][name]["by_kind"].items():
                by_kind[kind].add(Tally(**{k: counts[k] for k in vars(Tally())}))
        tools[name] = _tool_json(by_kind)
    missed = [m for r in results for m in r["missed"]]
    return {"pairs": len(results), "hunks": sum(r["hunks"] for r in results),
            "files": sum(r["files"] for r in results), "tools": tools,
            "apply": sum_counts(r["apply"] for r in results),
            "missed_families": port_diff_families.count(missed)}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


_RECALL_HEAD = (f"{'hunks':>6}{'named':>6}{'files':>6} | {'migrate: hunk':>13}{'named':>6}{'file':>6}{'focus':>6}"
                f"{'findings':>9} | {'grep: hunk':>10}{'named':>6}{'file':>6}{'findings':>9} | {'+info: hunk':>11}")


def _recall_row(label: str, width: int, tools: dict[str, Json]) -> str:
    m, g, a = tools["migrate"], tools["grep"], tools["migrate+info"]
    return (f"{label:<{width}}{m['hunks']:>6}{m['named_hunks']:>6}{m['files']:>6} | {_pct(m['hunk_recall']):>13}"
            f"{_pct(m['named_hunk_recall']):>6}{_pct(m['file_recall']):>6}{_pct(m['focus']):>6}{m['findings']:>9} | "
            f"{_pct(g['hunk_recall']):>10}{_pct(g['named_hunk_recall']):>6}{_pct(g['file_recall']):>6}"
            f"{g['findings']:>9} | {_pct(a['hunk_recall']):>11}")


def render(results: list[Json], whole: Json) -> str:
    """A readable table: per pair and in total, then by kind of file, then apply's overlap."""
    rows = [*results, {"name": "TOTAL", **whole}]
    lines = [f"{'pair':<22}{_RECALL_HEAD}", "-" * (22 + len(_RECALL_HEAD))]
    lines += [_recall_row(str(r["name"]), 22, {t: v["total"] for t, v in r["tools"].items()}) for r in rows]
    lines += ["", f"{'kind':<22}{_RECALL_HEAD}"]
    tools = whole["tools"]
    lines += [_recall_row(kind, 22, {t: v["by_kind"][kind] for t, v in tools.items()}) for kind in KINDS]
    lines += ["", f"{'apply --dry-run':<22}{'files both':>11}{'apply only':>11}{'port only':>10}"
              f"{'port hunks near apply':>23}{'apply hunks near port':>23}"]
    for row in rows:
        a = row["apply"]
        near_port = f"{a['port_hunks_near_apply']}/{a['port_hunks']}"
        near_apply = f"{a['apply_hunks_near_port']}/{a['apply_hunks']}"
        lines.append(f"{row['name']:<22}{a['files_both']:>11}{a['files_apply_only']:>11}{a['files_port_only']:>10}"
                     f"{near_port:>23}{near_apply:>23}")
    return "\n".join(lines)


def render_missed(results: list[Json]) -> str:
    """The missed hunks, one block each: pair, path:lines, kind, family, whether grep or info findings reach it."""
    out = []
    for result in results:
        for m in result["missed"]:
            where = f"{m['old'][0]}" + ("" if m["old"][0] == m["old"][1] else f"-{m['old'][1]}")
            flags = "".join((" [grep]" if m["grep_hit"] else "", " [info]" if m["info_hit"] else ""))
            out.append(f"{result['name']}  {m['path']}:{where}{' (insert)' if m['insertion'] else ''}  {m['kind']}  "
                       f"{m['family']}{flags}")
            out += [f"    - {line}" for line in m["removed"]] + [f"    + {line}" for line in m["added"]]
    return "\n".join(out) + "\n"


# -- command line ------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mirrors", type=Path, help="folder of git mirrors or clones")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="pairs file (default benchmarks/port_pairs.json)")
    parser.add_argument("--only", action="append", default=[], help="run this pair only (repeatable)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--missed", type=Path, help="write the missed hunks here, readable")
    parser.add_argument("--migrate", default=str(ROOT / ".venv" / "bin" / "migrate"), help="the migrate to measure")
    parser.add_argument("--keep", type=Path, help="keep each pair's tree and scan report under this folder")
    args = parser.parse_args(argv)
    try:
        pairs = _chosen(load_pairs(args.pairs), args.only)
        if not shutil.which(args.migrate):
            raise BenchError(f"no migrate at {args.migrate} (--migrate PATH)")
        for pair in pairs:  # every mirror is there before the first long scan starts
            for repo in (pair.upstream_mirror or pair.upstream, pair.fork):
                mirror_git_dir(args.mirrors, repo)
    except BenchError as error:
        print(f"port_diff: {error}", file=sys.stderr)
        return 2
    results, failed = [], 0
    for pair in pairs:
        try:
            results.append(_measure_one(pair, args))
        except BenchError as error:  # the other pairs still count; the exit status says one failed
            print(f"port_diff: {pair.name}: {error}", file=sys.stderr)
            failed += 1
    if not results:
        return 2
    whole = totals(results)
    print(render(results, whole))
    try:
        if args.json:
            report = {"schema": "port-diff/1", "window": WINDOW, "pairs": results, "total": whole}
            args.json.write_text(json.dumps(report, indent=1) + "\n")
        if args.missed:
            args.missed.write_text(render_missed(results))
    except OSError as error:
        print(f"port_diff: {error}", file=sys.stderr)
        return 2
    return 2 if failed else 0


def _chosen(pairs: list[Pair], only: list[str]) -> list[Pair]:
    unknown = set(only) - {p.name for p in pairs}
    if unknown:
        raise BenchError(f"no pair named {', '.join(sorted(unknown))}")
    return [p for p in pairs if not only or p.name in only]


def _measure_one(pair: Pair, args: argparse.Namespace) -> Json:
    print(f"{pair.name}: {pair.upstream} {pair.base[:12]} -> {pair.fork} {pair.head[:12]}", file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix=f"port_diff_{pair.name}_"))
    try:
        return measure(pair, args.mirrors, args.migrate, work)
    finally:
        if args.keep:
            shutil.rmtree(args.keep / pair.name, ignore_errors=True)
            shutil.copytree(work, args.keep / pair.name, symlinks=True, ignore=shutil.ignore_patterns("pair.git"))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
