"""`migrate translate`, `migrate apply` and `migrate verify`: the port, and the engine that translates it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from migrate.commands.common import target_option, tty
from migrate.commands.output import EXIT_FINDINGS, EXIT_OK
from migrate.defaults import STRATEGIES
from migrate.errors import InputError


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--hipify-perl", type=click.Path(dir_okay=False, path_type=Path), help="hipify-perl to use.")(func)
    func = click.option("--hipify-clang", type=click.Path(dir_okay=False, path_type=Path), help="hipify-clang to use.")(func)
    return click.option(
        "--engine", type=click.Choice(["auto", "clang", "perl", "builtin"]), default="auto", show_default=True,
        help="auto: hipify-clang, then hipify-perl, then the builtin engine.",
    )(func)


def strategy_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--strategy", type=click.Choice(STRATEGIES), default="auto", show_default=True,
        help="auto: from the build (extension: guards only; cmake/make: a HIP build path and a compat header; "
             "header: the compat header alone); fork: translate every source to HIP.",
    )(func)


def _engine(root: Path | None, engine: str, hipify_clang: Path | None, hipify_perl: Path | None, options: Any = None,
            *, release: Callable[[], Any] | None = None) -> Any:
    """The engine --engine names; the builtin one translates for the ROCm release RELEASE() picks, and says so."""
    from dataclasses import replace

    from migrate.port.translate import Options, select_engine

    chosen = select_engine(engine, hipify_clang=hipify_clang, hipify_perl=hipify_perl, root=root, options=options or Options())
    line = f"engine: {chosen.name}" + (f" ({chosen.executable})" if chosen.executable else "")
    if release is not None and chosen.name == "builtin":  # hipify-perl and hipify-clang have no release option
        target = release()
        chosen = replace(chosen, options=replace(chosen.options, rocm=target.version))
        line += f"; {target.describe()}"
    click.echo(line, err=True)
    return chosen


def _release(path: Path, rocm: str | None, *, hipcc: Path | None = None) -> Callable[[], Any]:
    """What picks the ROCm release: --rocm, the repository's `rocm` setting, or the installed toolchain's."""

    def choose() -> Any:
        from migrate.config import load_settings
        from migrate.toolchain import choose_rocm

        settings = load_settings(path, {})
        return choose_rocm(rocm, settings.rocm, settings.config_file, hipcc=hipcc)

    return choose


def rocm_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--rocm", metavar="VERSION",
        help="ROCm release to port for (default: the repository's `rocm` setting, else the installed ROCm's).",
    )(func)


def _echo_findings(findings: Any, skipped: Any = ()) -> None:
    from migrate.escape import visible

    for f in findings:
        click.echo(visible(f"{f.path}:{f.line}:{f.column}: {f.severity.label}: {f.message} [{f.rule}]"), err=True)
    for s in skipped:
        click.echo(visible(f"{s.path}: skipped: {s.reason}"), err=True)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the one translated file here.")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path), help="Write a translated mirror of the tree here.")
@click.option("--in-place", is_flag=True, help="Rewrite the files where they are.")
@rocm_option
@click.option("--roc", is_flag=True, help="ROCm library names (rocBLAS, rocSPARSE, rocRAND, MIOpen) instead of hip* wrappers.")
@click.option("--launch-syntax", type=click.Choice(["cuda", "hipLaunchKernelGGL"]), default="cuda", show_default=True,
              help="Keep kernel<<<...>>> launches, or write hipLaunchKernelGGL calls.")
@engine_options
def translate(paths: tuple[Path, ...], output: Path | None, out_dir: Path | None, in_place: bool, rocm: str | None,
              roc: bool, launch_syntax: str, engine: str, hipify_clang: Path | None, hipify_perl: Path | None) -> None:
    """Translate CUDA sources to HIP (hipify-clang, hipify-perl or the builtin engine)."""
    from migrate.port.translate_paths import translate_paths
    from migrate.port.translate import make_options

    base = paths[0] if len(paths) == 1 and paths[0].is_dir() else None
    options = make_options(rocm=rocm, roc=roc, launch_syntax=launch_syntax)
    chosen = _engine(base, engine, hipify_clang, hipify_perl, options, release=_release(paths[0], rocm))
    done = translate_paths(paths, chosen, output=output, out_dir=out_dir, in_place=in_place)
    _echo_findings(done.findings, done.skipped)
    click.echo(f"translated {len(done.translated)} file(s) with {done.engine}; wrote {len(done.written)} under {done.destination}")
    sys.exit(EXIT_OK)


@click.command("apply")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print the port as one unified diff; change nothing.")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path), help="Write a ported copy here instead.")
@click.option("--branch", default="rocm-port", show_default=True, help="Git branch the port is committed on.")
@click.option("--allow-dirty", is_flag=True, help="Write even with uncommitted changes in the work tree.")
@click.option("--in-place", is_flag=True, help="Edit requirements, Dockerfiles and compose files instead of adding side files.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply the Python fixes labelled unsafe.")
@click.option("--sources-only", is_flag=True, help="Translate sources only; no side files or fixes.")
@click.option("--max-file-size", type=click.IntRange(min=1), default=None, help="Skip files larger than this (bytes).")
@target_option
@engine_options
@strategy_option
@rocm_option
def apply_command(path: Path, dry_run: bool, out_dir: Path | None, branch: str, allow_dirty: bool, in_place: bool,
                  unsafe_fixes: bool, sources_only: bool, max_file_size: int | None, targets: tuple[str, ...] | None, engine: str,
                  hipify_clang: Path | None, hipify_perl: Path | None, strategy: str, rocm: str | None) -> None:
    """Port a repository: the whole change as a diff (--dry-run), on a git branch, or into a copy."""
    from contextlib import nullcontext

    from migrate.config import load_settings
    from migrate.port.apply import plan_port, prepared, render_diff, write_port
    from migrate.port.plan import PortOptions
    from migrate.port.translate import make_options

    settings = load_settings(path, {"max_file_size": max_file_size, "targets": targets})
    translation = make_options(rocm=rocm)
    if dry_run and sys.stdout is None:
        raise InputError("stdout is closed: --dry-run has nowhere to print the diff")
    in_tree = not dry_run and out_dir is None
    with prepared(path, branch=branch, allow_dirty=allow_dirty) if in_tree else nullcontext() as lock:
        chosen = _engine(path, engine, hipify_clang, hipify_perl, translation, release=_release(path, rocm))
        options = PortOptions(chosen, strategy=strategy, side_files=not sources_only, in_place=in_place,
                              unsafe_fixes=unsafe_fixes)
        plan = plan_port(path, settings, options)
        click.echo(f"strategy: {plan.strategy} ({plan.reason})", err=True)
        _echo_findings(plan.findings, plan.skipped)
        if dry_run:
            click.echo(render_diff(plan, color=tty(sys.stdout)), nl=False)
            click.echo(f"{len(plan.changes)} file(s) would change (dry run: nothing written)", err=True)
            sys.exit(EXIT_OK)
        done = write_port(plan, out_dir=out_dir, branch=branch, allow_dirty=allow_dirty, lock=lock)
    where = f" on branch {done.branch} (commit {done.commit})" if done.branch else ""
    where += f" into {done.out_dir}" if done.out_dir else ""
    click.echo(f"wrote {len(done.written)} file(s){where}")
    sys.exit(EXIT_OK)



@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@target_option
@click.option("--hipcc", type=click.Path(dir_okay=False, path_type=Path), help="hipcc to use.")
@click.option("--max-file-size", type=click.IntRange(min=1), default=None, help="Skip files larger than this (bytes).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, help="Parallel compiles (0: one per core).")
@engine_options
@strategy_option
@rocm_option
def verify(path: Path, targets: tuple[str, ...] | None, hipcc: Path | None, max_file_size: int | None, jobs: int,
           engine: str, hipify_clang: Path | None, hipify_perl: Path | None, strategy: str, rocm: str | None) -> None:
    """Port into a temp dir (by --strategy) and compile each unit with hipcc -fsyntax-only for the target(s)."""
    from migrate.config import load_settings
    from migrate.port.plan import PortOptions
    from migrate.port.translate import make_options
    from migrate.port.verify import find_hipcc, verify as run_verify

    settings = load_settings(path, {"targets": targets, "max_file_size": max_file_size})
    translation = make_options(rocm=rocm)
    find_hipcc(hipcc)
    chosen = _engine(path, engine, hipify_clang, hipify_perl, translation, release=_release(path, rocm, hipcc=hipcc))
    options = PortOptions(chosen, strategy=strategy)
    failed = 0
    for gfx in settings.targets:
        result = run_verify(path, gfx, settings, options, hipcc=hipcc, jobs=jobs)
        _echo_findings(result.findings, result.skipped)
        failed += len(result.failed)
        ok = len(result.units) - len(result.failed)
        click.echo(f"{gfx}: {ok}/{len(result.units)} unit(s) compile with hipcc ({result.compiler}, "
                   f"strategy {result.strategy}), "
                   f"{len(result.findings)} error(s)")
    sys.exit(EXIT_FINDINGS if failed else EXIT_OK)

