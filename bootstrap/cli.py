"""The `iac-code` command line."""

import argparse
import sys
from pathlib import Path

from bootstrap.environment import environment, shed_secrets
from bootstrap.logs import claim_stdout, configure_logging
from bootstrap.settings import Settings, SettingsError, load_settings


def _parser() -> argparse.ArgumentParser:
    from bootstrap.version import package_version  # importlib.metadata: after the re-exec

    parser = argparse.ArgumentParser(
        prog="iac-code", description="An AI coding agent served over ACP."
    )
    parser.add_argument("--version", action="version", version=f"iac-code {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    acp = commands.add_parser("acp", help="serve the Agent Client Protocol")
    acp.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    acp.add_argument("--host", default="127.0.0.1")
    acp.add_argument("--port", type=int, default=8765)
    db = commands.add_parser("db", help="manage the session database")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    db_commands.add_parser("upgrade", help="migrate the database to the newest schema")
    sessions = commands.add_parser("sessions", help="look at and import stored sessions")
    session_commands = sessions.add_subparsers(dest="sessions_command", required=True)
    listing = session_commands.add_parser("list", help="stored sessions, newest first")
    listing.add_argument("--cwd", help="only sessions of exactly this directory")
    show = session_commands.add_parser("show", help="one session and its conversation")
    show.add_argument("session_id")
    rename = session_commands.add_parser("rename", help="give a session another title")
    rename.add_argument("session_id")
    rename.add_argument("title")
    importing = session_commands.add_parser(
        "import", help="import the reference system's flat-file sessions"
    )
    importing.add_argument("--from", dest="source", default="~/.iac-code", type=Path)
    return parser


def _sessions(args: argparse.Namespace, settings: Settings) -> int:
    from bootstrap import sessions_cli as cli

    out = sys.stdout
    match args.sessions_command:
        case "list":
            cwd = str(Path(args.cwd).resolve()) if args.cwd else None
            return cli.run(settings, lambda c: cli.list_sessions(c, cwd, out))
        case "show":
            return cli.run(settings, lambda c: cli.show_session(c, args.session_id, out))
        case "rename":
            return cli.run(
                settings, lambda c: cli.rename_session(c, args.session_id, args.title, out)
            )
    source = args.source.expanduser()
    return cli.run(settings, lambda c: cli.import_sessions(c, settings, source, out))


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["acp"]:
        # First of all, as it re-executes: the agent's tools must not find the keys in our
        # environment block.
        shed_secrets()
    args = _parser().parse_args(arguments)
    try:
        settings = load_settings(environment())
    except SettingsError as exc:
        print(f"iac-code: configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    if args.command == "db":
        from adapters.persistence.migrate import upgrade_to_head

        changed = upgrade_to_head(settings.database_url)
        print(
            "migrated to the newest schema" if changed else "already at the newest schema",
            file=sys.stderr,
        )
        return 0
    if args.command == "sessions":
        return _sessions(args, settings)
    if args.transport == "http":
        from bootstrap import http

        return http.main(settings, host=args.host, port=args.port)
    from bootstrap import stdio

    return stdio.main(settings, claim_stdout())


if __name__ == "__main__":
    sys.exit(main())
