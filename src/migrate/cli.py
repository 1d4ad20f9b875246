"""The `migrate` command: options -> Settings -> one core call -> render -> exit code.

Exit codes: 0 done; 1 findings at or above --fail-on; 2 usage or input error; 3 internal error;
130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from migrate import __version__
from migrate.defaults import DEFAULT_BASELINE, DEFAULT_TARGETS, DEFAULT_TIME_BUDGET, STRATEGIES
from migrate.errors import InputError, MigrateError, interrupted
from migrate.model import Severity
from migrate.report.formats import FORMATS, REPORT_SUFFIXES, format_of

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
SEVERITIES = [s.label for s in Severity]


class _Group(click.Group):
    """Turns MigrateError into a one-line message and exit 2, anything unexpected into exit 3."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MigrateError as exc:
            if exc.exit_code != EXIT_INTERRUPTED and interrupted(exc):  # an error a Ctrl-C caused is the interrupt
                _exit_interrupted(ctx)
            click.echo(f"migrate: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except click.exceptions.UsageError as exc:  # one line, like every other input error
            hint = f" (see 'migrate {exc.ctx.info_name} --help')" if exc.ctx and exc.ctx.parent else ""
            click.echo(f"migrate: error: {exc.format_message()}{hint}", err=True)
            ctx.exit(EXIT_USAGE)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            _exit_interrupted(ctx)
        except BrokenPipeError:  # the reader went away (`migrate scan . | head -1`): nothing more to say
            _quiet_stdout()
            ctx.exit(EXIT_USAGE)
        except Exception as exc:  # a bug of ours: say so in one line, exit 3
            if interrupted(exc):
                _exit_interrupted(ctx)
            if os.environ.get("MIGRATE_DEBUG"):
                raise
            click.echo(f"migrate: internal error: {type(exc).__name__}: {exc} (set MIGRATE_DEBUG=1 for details)", err=True)
            ctx.exit(EXIT_INTERNAL)


def _exit_interrupted(ctx: click.Context) -> None:
    click.echo("migrate: interrupted", err=True)
    ctx.exit(EXIT_INTERRUPTED)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so flushing it at exit does not fail a second time."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="migrate")
def cli() -> None:
    """Find what stands between a CUDA codebase and AMD ROCm, and port the mechanical part."""


def _targets(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...] | None:
    from migrate.targets import validate

    names = tuple(t.strip() for v in value for t in v.split(",") if t.strip())
    return validate(names) or None


def _report_path(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None and format_of(value) is None:
        raise click.BadParameter(f"cannot tell the format of {value.name!r}: use one of {', '.join(REPORT_SUFFIXES)}")
    return value


def target_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--target", "targets", multiple=True, callback=_targets, metavar="GFX[,GFX...]",
        help="AMD GPU targets (gfx names), default gfx942.",
    )(func)


def fail_on_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--fail-on", type=click.Choice(SEVERITIES), default=None,
        help="Exit 1 when a finding is at or above this severity.",
    )(func)


def cache_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--no-cache", is_flag=True, default=None, help="Neither read nor write the result cache.")(func)
    return click.option(
        "--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="Result cache directory (default $XDG_CACHE_HOME/rocm-migrate).",
    )(func)


def scan_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """What any command that scans takes besides its own options: extra rules and the time budget."""
    func = click.option(
        "--rule-dir", "rule_dirs", multiple=True, metavar="DIR",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Also load the rule files (*.yaml) in DIR; repeatable. Any directory, unlike rule-dirs in the "
             "repository's own config, which must stay inside it.",
    )(func)
    return click.option(
        "--time-budget", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
        help=f"Stop the scan after this long and report what it found, the files not reached listed as skipped "
             f"(default {DEFAULT_TIME_BUDGET:g}).",
    )(func)


def narrow_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="Leave out the findings recorded in this baseline file.",
    )(func)
    return click.option(
        "--diff-base", metavar="REF", default=None, help="Only findings on lines changed since this git ref."
    )(func)


@cli.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="terminal", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here.")
@click.option(
    "--report", type=click.Path(dir_okay=False, path_type=Path), callback=_report_path, metavar="FILE",
    help="Also write a report to FILE, its format following the suffix (.md, .html, .sarif, .json, .txt).",
)
@target_option
@fail_on_option
@click.option("--max-file-size", type=click.IntRange(min=1), default=None, help="Skip files larger than this (bytes).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None, help="Worker processes (0: one per core).")
@narrow_options
@scan_options
@cache_options
def scan(path: Path, fmt: str, output: Path | None, report: Path | None, **options: Any) -> None:
    """Scan a repository for what needs porting to ROCm."""
    from migrate.config import load_settings
    from migrate.memo import Request, scan_reports

    settings = load_settings(path, options)
    color = _tty(sys.stdout)
    requests = [Request(fmt, color and fmt == "terminal", path=output)]
    if output is not None:
        requests.append(Request("terminal", color))
    if report is not None:
        requests.append(Request(format_of(report) or "terminal", path=report))
    reports = scan_reports(path, settings, requests, progress=_progress_bar())
    if output is None:
        click.echo(reports.texts[0], nl=False)
    else:
        click.echo(reports.texts[1], nl=False)
        click.echo(f"report written to {output}")
    if report is not None:
        click.echo(f"report written to {report}", err=True)
    _warn_unscanned(reports.unscanned, settings.time_budget)
    failing = settings.fail_on is not None and reports.worst is not None and reports.worst >= settings.fail_on
    sys.exit(EXIT_FINDINGS if failing else EXIT_OK)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@target_option
@fail_on_option
@narrow_options
@scan_options
@cache_options
def check(files: tuple[Path, ...], **options: Any) -> None:
    """Fail on new findings at or above --fail-on (default high) in FILES (all tracked files if none)."""
    from migrate.config import check_settings
    from migrate.scan import scan as run_scan

    root = _work_tree()
    settings = check_settings(root, options)
    _refuse_unstaged_in_hook(root, files)
    result = run_scan(root, settings, files=files, substitutions=False)
    _warn_unscanned(result.unscanned, settings.time_budget)
    from migrate.escape import visible

    failing = [f for f in result.findings if settings.fail_on is not None and f.severity >= settings.fail_on]
    for finding in failing:
        click.echo(visible(f"{finding.path}:{finding.line}:{finding.column}: {finding.rule} {finding.message}"))
    if failing:
        accepted = f" ({result.baselined} more in the baseline)" if result.baselined else ""
        label = settings.fail_on.label if settings.fail_on is not None else ""
        click.echo(f"migrate: {len(failing)} new finding(s) at or above {label}{accepted}", err=True)
    sys.exit(EXIT_FINDINGS if failing else EXIT_OK)


@cli.command("baseline")
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Default PATH/.migrate-baseline.json."
)
@target_option
@scan_options
@cache_options
def baseline_command(path: Path, output: Path | None, **options: Any) -> None:
    """Record the current findings as accepted, so check and --baseline report only new ones."""
    from dataclasses import replace

    from migrate.baseline import render as render_baseline
    from migrate.config import load_settings
    from migrate.scan import scan as run_scan

    settings = replace(load_settings(path, options), baseline=None, diff_base=None)
    result = run_scan(path, settings, substitutions=False)
    _warn_unscanned(result.unscanned, settings.time_budget)
    target = output or path / DEFAULT_BASELINE
    _write(target, render_baseline(result.findings))
    click.echo(f"recorded {len(result.findings)} finding(s) in {target}")


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def doctor(fmt: str) -> None:
    """Show what this machine has for a port: hipify, hipcc, ROCm, GPUs, the PyTorch build."""
    from migrate import doctor as diagnosis

    report = diagnosis.diagnose()
    click.echo(diagnosis.render_json(report) if fmt == "json" else diagnosis.render_text(report), nl=False)


@cli.command()
@click.argument("item_id", metavar="ID")
@target_option
def explain(item_id: str, targets: tuple[str, ...] | None) -> None:
    """Print a rule, a substitution (install commands filled in for --target) or a gfx target in full."""
    from migrate.explain import explain as describe
    from migrate.ruleset import load_builtin

    click.echo(describe(item_id, load_builtin(), targets or DEFAULT_TARGETS), nl=False)


@cli.command("rules")
def rules_command() -> None:
    """List the rules: id, severity, category, title."""
    from migrate.explain import rules_table
    from migrate.ruleset import load_builtin

    click.echo(rules_table(load_builtin()), nl=False)


def _warn_unscanned(unscanned: int, budget: float) -> None:
    if unscanned:
        click.echo(f"migrate: warning: the scan stopped at its time budget ({budget:g} s): {unscanned} file(s) not "
                   "scanned, listed as skipped (raise it with --time-budget)", err=True)


def _work_tree() -> Path:
    """The git work tree around the current directory (pre-commit runs hooks there), else the directory."""
    from migrate.gitcmd import toplevel

    return toplevel(Path.cwd()) or Path.cwd()


def _refuse_unstaged_in_hook(root: Path, files: tuple[Path, ...]) -> None:
    """check reads the work tree. Run by git as a hook (git sets GIT_INDEX_FILE), the commit holds the index: a
    checked file with unstaged changes would be judged on text that is not committed, so it is refused. The
    pre-commit framework stashes unstaged changes before its hooks run, so there it never is."""
    from migrate.gitcmd import toplevel, unstaged

    if not os.environ.get("GIT_INDEX_FILE") or toplevel(root) is None:
        return
    named = [os.path.relpath(os.path.abspath(f), root).replace(os.sep, "/") for f in files]
    differ = [p for p in unstaged(root) if not named or any(n in (".", p) or p.startswith(n + "/") for n in named)]
    if differ:
        from migrate.escape import visible

        raise InputError(visible(
            f"{len(differ)} checked file(s) have unstaged changes, and git runs check as a hook on what is staged: "
            f"{', '.join(differ)}; stage them, or stash them (git stash --keep-index) before committing, or run "
            "check through the pre-commit framework, which stashes them for its hooks"))


def _write(path: Path, text: str) -> None:
    from migrate.writer import write_report

    write_report(path, (text,))


def _tty(stream: Any) -> bool:
    """True for a terminal; False also for a closed stream (`migrate scan . >&-` leaves sys.stdout None)."""
    return stream is not None and stream.isatty()


def _progress_bar() -> Callable[[int, int], None] | None:
    """A rich progress bar on stderr for long scans on a terminal; None otherwise."""
    if not _tty(sys.stderr):
        return None
    from migrate.report.progress import ProgressBar

    return ProgressBar()


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


@cli.command()
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


@cli.command("apply")
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
            click.echo(render_diff(plan, color=_tty(sys.stdout)), nl=False)
            click.echo(f"{len(plan.changes)} file(s) would change (dry run: nothing written)", err=True)
            sys.exit(EXIT_OK)
        done = write_port(plan, out_dir=out_dir, branch=branch, allow_dirty=allow_dirty, lock=lock)
    where = f" on branch {done.branch} (commit {done.commit})" if done.branch else ""
    where += f" into {done.out_dir}" if done.out_dir else ""
    click.echo(f"wrote {len(done.written)} file(s){where}")
    sys.exit(EXIT_OK)


@cli.command()
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


@cli.command()
@click.argument("sources", type=click.Path(exists=True, path_type=Path))
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for fleet.db, fleet.html, fleet.json, fleet.csv and repos/ (a run there resumes).")
@click.option("--workers", type=click.IntRange(min=1), help="Local worker processes (default: one per core).")
@click.option("--scheduler", metavar="ADDR", help="Run on an existing Dask cluster (tcp://HOST:8786).")
@click.option("--since", type=click.Path(dir_okay=False, path_type=Path), metavar="PREVIOUS.db",
              help="The fleet.db of an earlier audit: report what changed since.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=900.0, show_default=True,
              help="Seconds a repository may take (clone and scan).")
@click.option("--memory", default="4GiB", show_default=True, help="Memory a repository's scan may use.")
@click.option("--retry-failed", is_flag=True, help="Audit again what an earlier run recorded as failed.")
@target_option
@cache_options
def fleet(sources: Path, out: Path, workers: int | None, scheduler: str | None, since: Path | None, timeout: float,
          memory: str, retry_failed: bool, targets: tuple[str, ...] | None, no_cache: bool | None,
          cache_dir: Path | None) -> None:
    """Audit many repositories at once on a Dask cluster (SOURCES: a list file, its YAML form, or a folder of
    checkouts) into one store and one fleet report."""
    from migrate.fleet.model import Job, ScanOptions
    from migrate.fleet.runner import Plan, run_fleet
    from migrate.fleet.sources import parse_size, read_sources

    if workers and scheduler:
        raise InputError("--workers is for a local cluster; an existing one (--scheduler) has its own workers")
    defaults = Job(source="", targets=targets or DEFAULT_TARGETS, timeout=timeout, memory=parse_size(memory))
    listed = read_sources(sources, defaults)
    options = ScanOptions(cache_dir=str(cache_dir) if cache_dir else None, no_cache=bool(no_cache))
    progress = _fleet_progress()
    try:
        done = run_fleet(Plan(listed.jobs, out, options, workers, scheduler, retry_failed, since), progress=progress)
    finally:
        progress.close()
    _echo_fleet(done, listed.duplicates)
    sys.exit(EXIT_OK)


def _fleet_progress() -> Any:
    from migrate.fleet.progress import LineLog, LiveBar

    return LiveBar() if _tty(sys.stderr) else LineLog(lambda line: click.echo(line, err=True))


def _echo_fleet(done: Any, duplicates: int) -> None:
    from migrate.fleet.model import DONE
    from migrate.escape import visible

    finished = [o for o in done.outcomes if o.status == DONE]
    click.echo(f"{len(done.outcomes)} repositories: {len(finished)} audited, {len(done.outcomes) - len(finished)} "
               f"failed, {sum(o.ready for o in finished)} ROCm-ready ({done.audited} this run, {done.resumed} "
               f"from the store{f'; {duplicates} repeated entries left out' if duplicates else ''})")
    for outcome in done.outcomes:
        if outcome.status != DONE:
            click.echo(visible(f"failed: {outcome.name}: {outcome.reason}"))
    if done.changes is not None:
        click.echo(f"since {done.changes.previous}: {len(done.changes.became_ready)} became ROCm-ready, "
                   f"{len(done.changes.with_new_blockers)} have new blockers")
    click.echo(f"fleet report: {done.written[-1]} (and {', '.join(p.name for p in done.written[:-1])}, fleet.db)")


def main() -> None:
    cli(prog_name="migrate")
