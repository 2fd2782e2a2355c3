"""The `iac-code` command line."""

import argparse
import logging
import sys

from bootstrap.logs import claim_stdout, configure_logging
from bootstrap.settings import SettingsError, load_settings
from bootstrap.version import package_version


def _parser() -> argparse.ArgumentParser:
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
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
    if args.transport == "http":
        logging.getLogger("iac-code").error(
            "the HTTP+SSE transport is not available in this version; use --transport stdio"
        )
        return 2
    from bootstrap import stdio

    return stdio.main(settings, claim_stdout())


if __name__ == "__main__":
    sys.exit(main())
