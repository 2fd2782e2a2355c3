"""The `iac-code` command line."""

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bootstrap.environment import environment, shed_secrets
from bootstrap.hardening import make_undumpable

if TYPE_CHECKING:
    from bootstrap.settings import Settings


def _parser(arguments: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; only its `acp` command when `arguments` start with it (see
    `_parse`)."""
    from bootstrap.version import package_version  # after the re-exec, as all but main()'s start

    parser = argparse.ArgumentParser(
        prog="iac-code", description="An AI coding agent served over ACP."
    )
    parser.add_argument("--version", action="version", version=f"iac-code {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    _acp_parser(commands)
    if arguments is not None and arguments[:1] == ["acp"]:
        return parser
    db = commands.add_parser("db", help="manage the session database")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    db_commands.add_parser("upgrade", help="migrate the database to the newest schema")
    sessions = commands.add_parser("sessions", help="look at and import stored sessions")
    session_commands = sessions.add_subparsers(dest="sessions_command", required=True)
    listing = session_commands.add_parser("list", help="stored sessions, newest first")
    listing.add_argument(
        "--cwd", help="only sessions of exactly this directory (relative: to the current one)"
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    show = session_commands.add_parser(
        "show", help="one session: tokens and cost per turn and in total, and its conversation"
    )
    show.add_argument("session_id")
    show.add_argument("--json", action="store_true", help="print JSON (without the conversation)")
    rename = session_commands.add_parser("rename", help="give a session another title")
    rename.add_argument("session_id")
    rename.add_argument("title")
    delete = session_commands.add_parser(
        "delete", help="delete a session and its history (as an editor's session/delete does)"
    )
    delete.add_argument("session_id")
    importing = session_commands.add_parser(
        "import", help="import the reference system's flat-file sessions"
    )
    importing.add_argument(
        "--from",
        dest="source",
        default="~/.iac-code",
        type=Path,
        help="the reference system's data directory, which holds projects/ (default: %(default)s)",
    )
    _permissions_parser(commands)
    _config_parser(commands)
    _sign_in_parsers(commands)
    return parser


def _parse(arguments: list[str]) -> argparse.Namespace:
    """The arguments, parsed. A line starting with `acp` (as editors start the agent) by a
    parser holding that command alone: building the other commands' parsers is ~3 ms of
    every start before `initialize` is answered, and only the whole command line's usage,
    which an unrecognized argument's error shows, needs them."""
    if arguments[:1] != ["acp"]:
        return _parser().parse_args(arguments)
    args, unrecognized = _parser(arguments).parse_known_args(arguments)
    if unrecognized:
        _parser().parse_args(arguments)  # exits, saying so as it always has
    return args


def _sign_in_parsers(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    login = commands.add_parser(
        "login",
        help="choose a model provider and store its API key in config.toml",
        description="Choose a model provider, paste its API key (not shown): it is checked "
        "with one request to the provider and stored in $IAC_CODE_CONFIG_DIR/config.toml, "
        "readable by you only. Editors run it as `iac-code acp login`.",
    )
    login.add_argument(
        "--no-check", action="store_true", help="store the key without asking the provider"
    )
    logout = commands.add_parser("logout", help="remove a stored API key from config.toml")
    logout.add_argument(
        "--provider", help="whose key (default: the provider the agent selects now)"
    )


class _OptionDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default in its help; not the `login` word's (no "(default: None)")."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return super()._get_help_string(action) if action.option_strings else action.help


def _acp_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    acp = commands.add_parser(
        "acp",
        help="serve the Agent Client Protocol",
        description="Serve the Agent Client Protocol: on stdin/stdout for an editor that "
        "starts the agent, or over the network, where one address serves HTTP + SSE and "
        "WebSocket (GET /acp with Upgrade: websocket). Settings: IAC_CODE_* variables "
        "(README.md); a token for the network: IACCODE_ACP_HTTP_TOKEN.",
        formatter_class=_OptionDefaults,
    )
    acp.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio: JSON-RPC lines on stdin/stdout; http: HTTP + SSE and WebSocket on /acp "
        "at --host:--port",
    )
    acp.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address --transport http listens on (0.0.0.0: every interface; then set "
        "IACCODE_ACP_HTTP_TOKEN)",
    )
    acp.add_argument(
        "--port", type=int, default=8765, help="the TCP port --transport http listens on"
    )
    # An editor's terminal sign-in appends `login` to the command it starts the agent with.
    # A positional, not a sub-command: the usage then reads `[login]`, not `[login] ...`.
    acp.add_argument(
        "action",
        nargs="?",
        choices=["login"],
        metavar="login",
        help="sign in as `iac-code login` does, instead of serving",
    )


def _config_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    config = commands.add_parser("config", help="manage config.toml")
    actions = config.add_subparsers(dest="config_command", required=True)
    importing = actions.add_parser(
        "import", help="take the reference system's provider, models and keys into config.toml"
    )
    importing.add_argument(
        "--from",
        dest="source",
        default="~/.iac-code",
        type=Path,
        help="the reference system's configuration directory (default: %(default)s)",
    )
    importing.add_argument("--dry-run", action="store_true", help="show it, keys masked")
    importing.add_argument("--force", action="store_true", help="merge into an existing file")


def _project_dir(value: str) -> str:
    """A project as rules store it: an absolute path (relative to where we run), as
    `sessions list --cwd` resolves it. Empty is refused rather than read as ".": `clear`
    must not empty the current directory's rules by accident."""
    if not value.strip():
        raise argparse.ArgumentTypeError("expected a directory, got an empty string")
    return str(Path(value).resolve())


def _permissions_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    permissions = commands.add_parser(
        "permissions", help='manage the "always allow" answers remembered per project'
    )
    actions = permissions.add_subparsers(dest="permissions_command", required=True)
    listing = actions.add_parser("list", help="remembered permissions, by project then age")
    listing.add_argument(
        "--cwd", type=_project_dir, help="only those of exactly this project directory"
    )
    revoke = actions.add_parser("revoke", help="forget one remembered permission")
    revoke.add_argument("rule_id", metavar="ID", type=int)
    clear = actions.add_parser("clear", help="forget every remembered permission of a project")
    clear.add_argument("--cwd", type=_project_dir, required=True, help="the project directory")
    for action in (listing, revoke, clear):
        action.add_argument("--json", action="store_true", help="print JSON")


# 128 + SIGPIPE, what a shell reports for a command whose reader went away (`ls | head`
# under `set -o pipefail`): the listing was cut short, which is not success.
CLOSED_PIPE = 141


def _printing(
    command: "Callable[[argparse.Namespace, Settings], int]",
    args: argparse.Namespace,
    settings: "Settings",
) -> int:
    """A command that prints, ended quietly when its reader stops reading (`| head`)."""
    from bootstrap.heavy_imports import import_heavy_modules

    # The container's imports made as cheap as the server makes them: about 1 s of the 2.5
    # a listing took went to building pydantic models it never uses.
    import_heavy_modules(web_hooks=False)
    try:
        code = command(args, settings)
        sys.stdout.flush()  # a closed pipe shows here, not as a traceback at exit
        return code
    except BrokenPipeError:
        # Python flushes stdout once more at exit: into /dev/null, not the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return CLOSED_PIPE


def _sessions(args: argparse.Namespace, settings: "Settings") -> int:
    from bootstrap import sessions_cli as cli

    out = sys.stdout
    match args.sessions_command:
        case "list":
            cwds = cli.directories_named(args.cwd) if args.cwd else None
            return cli.run(settings, lambda c: cli.list_sessions(c, cwds, args.json, out))
        case "show":
            return cli.run(settings, lambda c: cli.show_session(c, args.session_id, args.json, out))
        case "rename":
            return cli.run(
                settings, lambda c: cli.rename_session(c, args.session_id, args.title, out)
            )
        case "delete":
            return cli.run(settings, lambda c: cli.delete_session(c, args.session_id, out))
    source = args.source.expanduser()
    problem = cli.not_a_source(source)
    if problem is not None:  # before the database: nothing to import, nothing created
        print(f"iac-code: {problem}", file=sys.stderr)
        return 1
    return cli.run(settings, lambda c: cli.import_sessions(c, settings, source, out))


def _permissions(args: argparse.Namespace, settings: "Settings") -> int:
    from bootstrap import permissions_cli as cli
    from bootstrap.sessions_cli import run

    out = sys.stdout
    match args.permissions_command:
        case "list":
            return run(settings, lambda c: cli.list_rules(c, args.cwd, args.json, out))
        case "revoke":
            return run(settings, lambda c: cli.revoke_rule(c, args.rule_id, args.json, out))
    return run(settings, lambda c: cli.clear_rules(c, args.cwd, args.json, out))


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["acp"]:
        # First of all, as it re-executes: the agent's tools must not find the keys in our
        # environment block.
        shed_secrets()
        make_undumpable()  # after the re-exec, which would undo it
    # Only now: a server started with secrets has re-executed itself before this point, so
    # the first interpreter loads as little as possible.
    from bootstrap.logs import claim_stdout, configure_logging
    from bootstrap.settings import SettingsError, load_settings

    args = _parse(arguments)
    if args.command in ("login", "logout") or getattr(args, "action", None) == "login":
        return _sign_in(args)  # before the settings too: no key is what it repairs
    if args.command == "config":  # before the settings: it may be what repairs them
        from bootstrap import config_import

        return config_import.main(
            args.source, environment(), dry_run=args.dry_run, force=args.force
        )
    try:
        settings = load_settings(environment())
    except SettingsError as exc:
        print(f"iac-code: configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    problem = _start_tracing(settings) if args.command == "acp" else None
    if problem is not None:
        print(f"iac-code: configuration error: {problem}", file=sys.stderr)
        return 2
    if args.command == "db":
        from adapters.persistence.migrate import upgrade_to_head

        changed = upgrade_to_head(settings.database_url)
        print(
            "migrated to the newest schema" if changed else "already at the newest schema",
            file=sys.stderr,
        )
        return 0
    if args.command == "sessions":
        return _printing(_sessions, args, settings)
    if args.command == "permissions":
        return _printing(_permissions, args, settings)
    if args.transport == "http":
        from bootstrap import http

        return http.main(settings, host=args.host, port=args.port)
    from bootstrap import stdio

    return stdio.main(settings, claim_stdout())


def _sign_in(args: argparse.Namespace) -> int:
    from bootstrap import login_cli
    from bootstrap.key_check import check_key

    if args.command == "logout":
        return login_cli.logout(environment(), args.provider, sys.stdout)
    check = None if getattr(args, "no_check", False) else check_key
    return login_cli.login(environment(), login_cli.Terminal(), check=check)


def _start_tracing(settings: "Settings") -> str | None:
    """The OpenTelemetry SDK set up before any request is served (when tracing is on);
    the problem, if any."""
    if not settings.traces_exporters:
        return None
    from bootstrap.tracing import TracingConfigError, start_tracing
    from bootstrap.version import package_version

    try:
        start_tracing(settings.traces_exporters, environment(), package_version())
    except TracingConfigError as exc:
        return str(exc)
    return None


if __name__ == "__main__":
    sys.exit(main())
