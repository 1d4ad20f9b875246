"""A shallow clone of one repository at one ref, with git hardened as every git run of migrate is (gitcmd: no
hooks, filters, fsmonitor, pagers or helpers), one commit fetched and no submodule."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from migrate import gitcmd
from migrate.writer import make_dirs, remove_tree

_NO_SUBMODULES = ("-c", "submodule.recurse=false", "-c", "fetch.recurseSubmodules=false")


def clone(url: str, ref: str, dest: Path) -> str:
    """DEST holding URL at REF (the remote's HEAD when empty) as one shallow commit; returns its commit id.
    Whatever DEST held (a clone a killed run left) is removed first. GitError says what failed."""
    dest = dest.absolute()
    if dest.exists() or dest.is_symlink():
        remove_tree(dest)
    make_dirs(dest.parent)
    try:
        _git(dest.parent, "init", "-q", "--template=", "--", str(dest), what="create the clone")
        _git(dest, *transport(url), *_NO_SUBMODULES, "fetch", "--depth", "1", "--no-tags", "--no-recurse-submodules",
             "--", url, ref or "HEAD", what=f"fetch {ref or 'HEAD'}")
        _git(dest, *_NO_SUBMODULES, "checkout", "-q", "--detach", "FETCH_HEAD", what="check out the fetched commit")
        return _git(dest, "rev-parse", "HEAD", what="read the commit").decode("ascii", "replace").strip()
    except BaseException:
        if dest.exists():
            remove_tree(dest)
        raise


def _git(root: Path, *args: str, what: str) -> bytes:
    """Stdout of `git ARGS` in ROOT; GitError with git's first fatal line (the one that says why) on failure."""
    done = gitcmd.run(root, *args)
    if done.ok:
        return done.stdout
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    why = next((line for line in lines if line.startswith(("fatal:", "error:"))), done.describe())
    raise gitcmd.GitError(f"git could not {what}: {why}")


def transport(url: str) -> tuple[str, ...]:
    """The -c options that let git use URL's transport, and that one only (gitcmd allows none)."""
    scheme = urlsplit(url).scheme.lower() if "://" in url else "ssh"
    allow = ("-c", f"protocol.{scheme}.allow=always")
    if scheme == "ssh":  # gitcmd turns ssh off (a repository's config could name the command): plain ssh, no prompt
        return (*allow, "-c", "core.sshCommand=ssh -o BatchMode=yes")
    return allow


def commit_of(root: Path) -> str:
    """The commit a local checkout has checked out; empty when ROOT is not the top of a git work tree."""
    top = gitcmd.toplevel(root)
    if top is None or top.resolve() != root.resolve():
        return ""
    done = gitcmd.run(root, "rev-parse", "--verify", "-q", "HEAD")
    return done.stdout.decode("ascii", "replace").strip() if done.ok else ""
