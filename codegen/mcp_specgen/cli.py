"""The `mcp-codegen` command line. Argument handling only; the work is elsewhere."""

from __future__ import annotations

import contextlib
import json
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import click

import mcp_specgen_types

from . import __version__
from .dev.clients import CLIENTS
from .diff_report import FORMATS
from .emit import PACKAGE
from .errors import CodegenError
from .generate import check_package_name, compare, render_all, write
from .manifest import read_manifest
from .places import CACHE_ENV, locate
from .revdiff import load_diff
from .scaffold import create_project
from .sync import SOURCE_ENV, sync

if TYPE_CHECKING:
    from collections.abc import Generator

manifest_option = click.option(
    "--manifest",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="The schema manifest (its folder holds overrides/ and extensions/). "
    "Default: schema/manifest.toml here or in the nearest parent folder, "
    "else the one shipped with mcp-specgen.",
)
schema_option = click.option(
    "--schema-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of the synced schemas (<rev>/schema.json); one holding a "
    "manifest.toml is a project's schema folder. Default: the manifest's "
    f"folder, or the user cache (${CACHE_ENV}) for the shipped manifest.",
)
out_option = click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder the package folder is written into. Default: generated/ "
    "beside the project's schema/ folder.",
)
package_option = click.option(
    "--package",
    default=PACKAGE,
    show_default=True,
    help="Import name of the generated package (written to OUT/PACKAGE).",
)
revision_option = click.option(
    "--revision",
    "revisions",
    multiple=True,
    help="A revision to generate (repeat for more; default: every pinned one).",
)


@click.group()
@click.version_option(__version__, prog_name="mcp-codegen")
def main() -> None:
    """Generate exact, versioned msgspec types from the MCP JSON Schema."""


@main.group()
def schema() -> None:
    """Manage the pinned schema revisions."""


@schema.command("sync")
@click.argument("revisions", nargs=-1)
@manifest_option
@schema_option
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Local folder laid out as <rev>/schema.json "
    f"(default: ${SOURCE_ENV}, else upstream).",
)
@click.option(
    "--accept-new-hash", is_flag=True, help="Record the hash of a changed schema."
)
def schema_sync(
    revisions: tuple[str, ...],
    manifest: Path | None,
    schema_dir: Path | None,
    source: Path | None,
    accept_new_hash: bool,
) -> None:
    """Fetch REVISIONS (default: all) into SCHEMA_DIR/<rev>/schema.json."""
    with _reporting():
        places = locate(manifest, schema_dir)
        if accept_new_hash:
            places.refuse_changes()
        pins = read_manifest(places.manifest)
        _, results = sync(
            pins,
            places.schema_dir,
            pins.select(revisions),
            source_dir=source,
            accept_new_hash=accept_new_hash,
        )
        for result in results:
            note = (
                " (new hash recorded in the manifest)"
                if result.accepted_new_hash
                else ""
            )
            click.echo(
                f"{result.revision}: sha256 {result.sha256} from {result.source}{note}"
            )


@schema.command("pin")
@click.argument("revisions", nargs=-1, required=True)
@manifest_option
@schema_option
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Local folder laid out as <rev>/schema.json "
    f"(default: ${SOURCE_ENV}, else the revision's url).",
)
def schema_pin(
    revisions: tuple[str, ...],
    manifest: Path | None,
    schema_dir: Path | None,
    source: Path | None,
) -> None:
    """Fetch REVISIONS and record their files' sha256 in the manifest."""
    with _reporting():
        places = locate(manifest, schema_dir)
        places.refuse_changes()
        pins = read_manifest(places.manifest)
        _, results = sync(
            pins,
            places.schema_dir,
            pins.select(revisions),
            source_dir=source,
            accept_new_hash=True,
        )
        for result in results:
            click.echo(
                f"{result.revision}: pinned sha256 {result.sha256} from {result.source}"
            )


def _rendered(
    manifest: Path | None,
    schema_dir: Path | None,
    out: Path | None,
    package: str,
    revisions: tuple[str, ...],
) -> tuple[dict[str, str], Path]:
    """The files `generate` writes (and `check` compares) and the folder they go in."""
    places = locate(manifest, schema_dir)
    target = places.out_dir(out)  # refused before the (slow) rendering
    files = render_all(
        read_manifest(places.manifest),
        places.schema_dir,
        package=package,
        revisions=revisions,
    )
    return files, target


@main.command()
@manifest_option
@schema_option
@out_option
@package_option
@revision_option
def generate(
    manifest: Path | None,
    schema_dir: Path | None,
    out: Path | None,
    package: str,
    revisions: tuple[str, ...],
) -> None:
    """Generate the types package (OUT/PACKAGE) for the pinned revisions."""
    with _reporting():
        started = time.perf_counter()
        files, target = _rendered(manifest, schema_dir, out, package, revisions)
        changed = write(files, target, package)
        _name_removed(target, changed)
        elapsed = time.perf_counter() - started
        click.echo(f"{len(files)} files, {len(changed)} changed, in {elapsed:.2f} s")


@main.command()
@manifest_option
@schema_option
@out_option
@package_option
@revision_option
def check(
    manifest: Path | None,
    schema_dir: Path | None,
    out: Path | None,
    package: str,
    revisions: tuple[str, ...],
) -> None:
    """Fail (exit 1, with a diff) if the generated package is stale."""
    with _reporting():
        files, target = _rendered(manifest, schema_dir, out, package, revisions)
        differences = compare(files, target, package)
        for difference in differences:
            click.echo(difference.diff, nl=False)
        if differences:
            click.echo(
                f"{len(differences)} generated file(s) out of date; "
                "run `mcp-codegen generate`",
                err=True,
            )
            sys.exit(1)
        click.echo("generated code is up to date")


@main.command()
@click.argument("a")
@click.argument("b")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="text",
    show_default=True,
    help="Report format.",
)
@manifest_option
@schema_option
def diff(
    a: str, b: str, fmt: str, manifest: Path | None, schema_dir: Path | None
) -> None:
    """Show what changed from revision A to revision B."""
    with _reporting():
        places = locate(manifest, schema_dir)
        report = load_diff(places.schema_dir, a, b, read_manifest(places.manifest))
        click.echo(FORMATS[fmt](report), nl=False)


@main.command()
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Folder the project folder NAME is created in.",
)
@click.option(
    "--revision",
    default=mcp_specgen_types.LATEST_VERSION,
    show_default=True,
    help="Newest protocol revision the server speaks (it speaks every known "
    f"one up to it): one of {', '.join(mcp_specgen_types.KNOWN_VERSIONS)}.",
)
@click.option(
    "--auth",
    is_flag=True,
    help="Protect the HTTP server with OAuth (JWT access tokens from an "
    "issuer set by flags or MCP_ISSUER_URL, MCP_RESOURCE_URL, "
    "MCP_REQUIRED_SCOPES).",
)
def new(name: str, directory: Path, revision: str, auth: bool) -> None:
    """Create a ready MCP server project in DIR/NAME."""
    with _reporting():
        target = create_project(name, directory, revision, auth=auth)
        package = name.replace("-", "_")
        click.echo(f"created {target}")
        click.echo(
            f"next: cd {target} && pip install -e '.[test]' && pytest; "
            f"serve with `python -m {package}` (stdio) or add --http"
        )


class _reporting:
    """Turn generator errors into a message and exit status 1."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> None:
        if isinstance(error, CodegenError):
            click.echo(f"error: {error}", err=True)
            sys.exit(1)


@main.command()
@click.argument("target")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Folder the package folder NAME is written to.",
)
@click.option("--package", required=True, help="Import name of the package.")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; exit 1 naming what drifted if the server or the "
    "files differ from the package and its lock.",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="K=V",
    help="An HTTP header for a URL target (repeatable).",
)
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds each request to the server may take.",
)
def client(
    target: str,
    out: Path,
    package: str,
    check_only: bool,
    headers: tuple[str, ...],
    timeout: float,
) -> None:
    """Generate a typed client package for the live server TARGET (a command
    line, split like a shell, or an http(s) URL)."""
    from .clientgen.run import check_client, generate_client, read_server
    from .clientgen.schema_ir import loose_spots

    with _reporting():
        check_package_name(package)
        listing = read_server(target, _headers(headers), timeout)
        who = f"{listing.server_name} {listing.server_version}".strip()
        for line in loose_spots(listing):
            click.echo(f"warning: {line}", err=True)
        if not check_only:
            with _name_clashes():
                outcome = generate_client(listing, out, package)
            _name_removed(out, outcome.changed)
            click.echo(
                f"{out / package}: {len(outcome.files)} files, "
                f"{len(outcome.changed)} changed, for {who} ({listing.revision})"
            )
            return
        with _name_clashes():
            outcome = check_client(listing, out, package)
        for line in outcome.drifted:
            click.echo(f"drift: {line}")
        for line in outcome.changed:
            click.echo(f"out of date: {line}")
        if not outcome.in_sync:
            click.echo(
                f"{out / package} does not match {who}; regenerate it "
                "(the same command without --check)",
                err=True,
            )
            sys.exit(1)
        click.echo(f"{out / package} matches {who}")


@contextlib.contextmanager
def _name_clashes() -> Generator[None]:
    """Print each name clash the client generator resolved by numbering."""
    from .clientgen.names import NameClashWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NameClashWarning)
        yield
    for warning in caught:
        if issubclass(warning.category, NameClashWarning):
            click.echo(f"warning: {warning.message}", err=True)


def _name_removed(out: Path, changed: list[str]) -> None:
    """Say which stale generated files were deleted (they were ours)."""
    for rel in changed:
        if not (out / rel).exists():
            click.echo(f"removed stale generated file {out / rel}")


def _headers(pairs: tuple[str, ...]) -> dict[str, str]:
    """`K=V` pairs as a dict; a pair without `=` is a usage error."""
    return _pairs(pairs, "--header")


def _pairs(pairs: tuple[str, ...], option: str) -> dict[str, str]:
    """`K=V` pairs of `option` as a dict; one without `=` is a usage error."""
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not K=V", param_hint=option)
        found[key.strip()] = value
    return found


@main.command()
@click.argument("target", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port",
    type=int,
    default=8000,
    show_default=True,
    help="Port to bind (0: a free one, kept across restarts).",
)
@click.option(
    "--stdio",
    is_flag=True,
    help="Do not serve: print the command a client (or the Inspector) starts "
    "the server over stdio with.",
)
@click.option(
    "--inspector",
    is_flag=True,
    help="Start the MCP Inspector attached to the server (npx; Node.js 22.19+).",
)
@click.option(
    "--watch",
    "watch",
    multiple=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A folder whose changes reload the server (repeatable; default: "
    "the target's folder).",
)
def dev(
    target: str | None,
    host: str,
    port: int,
    stdio: bool,
    inspector: bool,
    watch: tuple[Path, ...],
) -> None:
    """Serve TARGET over HTTP, restarting it when a .py file changes.

    TARGET is a file (server.py[:app]), a module (pkg.module[:app]), or,
    left out, the project `mcp-codegen new` made in the current folder."""
    from .dev.reload import run_dev
    from .dev.stdio import attach_stdio
    from .dev.targets import find_target

    with _reporting():
        found = find_target(target, Path.cwd())
        if stdio:
            sys.exit(
                attach_stdio(
                    found,
                    inspector=inspector,
                    echo=click.echo,
                    fail=lambda why: click.echo(f"error: {why}", err=True),
                )
            )
        run_dev(
            found,
            host=host,
            port=port,
            inspector=inspector,
            watch=list(watch) or [found.watched],
            echo=lambda line: click.echo(line, err=True),
        )


@main.command()
@click.argument("target", required=False)
@click.option(
    "--client",
    "client_name",
    type=click.Choice(CLIENTS),
    required=True,
    help="The MCP client whose config gets the server.",
)
@click.option("--name", help="The server's name there (default: the App's name).")
@click.option(
    "--env",
    "env",
    multiple=True,
    metavar="K=V",
    help="An environment variable the client sets for the server (repeatable).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The config file to write (default: the client's own).",
)
@click.option("--force", is_flag=True, help="Replace an entry of the same name.")
@click.option(
    "--print",
    "print_only",
    is_flag=True,
    help="Print the entry instead of writing it.",
)
def install(
    target: str | None,
    client_name: str,
    name: str | None,
    env: tuple[str, ...],
    config_path: Path | None,
    force: bool,
    print_only: bool,
) -> None:
    """Add TARGET (as for `dev`) to an MCP client's config, as a stdio server
    started with this Python."""
    from .dev.clients import client_config, install_entry, server_entry
    from .dev.reload import runner_command
    from .dev.targets import find_target, load_app

    with _reporting():
        found = find_target(target, Path.cwd())
        app = load_app(found)  # refused here rather than in the client
        config = client_config(client_name, home=Path.home(), cwd=Path.cwd())
        path = config_path or config.path
        entry = server_entry(config, runner_command(found), _pairs(env, "--env"))
        server_name = name or app.name
        if print_only:
            document = {config.key: {server_name: entry}}
            click.echo(json.dumps(document, indent=2, ensure_ascii=False))
            return
        install_entry(path, config.key, server_name, entry, force=force)
        click.echo(f"{path}: added {server_name!r} ({client_name}); restart the client")
