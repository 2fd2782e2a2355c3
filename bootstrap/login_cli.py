"""`iac-code login` and `iac-code logout`: sign in in a terminal.

Login asks for a provider and its API key (read without echo), checks the key with one
cheap request to the provider (none for the demo), and stores it in config.toml
(`[providers.<id>] api_key`, with `provider` selecting it), readable by the owner only.
An editor offers it as the terminal auth method (`iac-code acp login`); a running agent
takes the stored key at the next `authenticate`, session or prompt. Logout removes it."""

import getpass
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from adapters.llm.providers import BY_ID, PROFILES, ProviderProfile, normalise
from bootstrap.config_import import config_dir_of
from bootstrap.key_check import KeyVerdict, check_key
from bootstrap.provider_settings import choose_provider, endpoint, parse_providers
from bootstrap.stored_keys import (
    StoredKeysError,
    read_config,
    remove_key,
    select,
    store_key,
)

# A local server needs its address more than a key: config.toml says both (README).
CHOICES = tuple(p for p in PROFILES if p.id != "openai_compatible")
ATTEMPTS = 3

Checker = Callable[[ProviderProfile, str | None, str], KeyVerdict]


@dataclass(frozen=True, slots=True, kw_only=True)
class Terminal:
    """Where the conversation happens: replaceable in tests."""

    ask: Callable[[str], str] = input
    ask_secret: Callable[[str], str] = getpass.getpass
    out: TextIO = field(default_factory=lambda: sys.stdout)


def login(
    environ: Mapping[str, str], terminal: Terminal, *, check: Checker | None = check_key
) -> int:
    """0 when a provider is chosen and its key stored; 1 when given up or refused; 2 when
    config.toml cannot be read (nothing is written then)."""
    out = terminal.out
    config_dir = config_dir_of(environ)
    try:
        config = read_config(config_dir)
        profile = _choose(terminal, _current(environ, config))
        if profile is None:
            return 1
        key = "" if profile.key_optional else _key(terminal, profile)
        if key is None:
            return 1
        if key and check is not None:
            out.write(f"Checking the key with {profile.name}...\n")
            verdict = check(profile, _base_url(environ, config, profile), key)
            if not verdict.accepted:
                out.write(f"Not stored: {verdict.problem}.\n")
                if not verdict.refused:
                    out.write("To store it unchecked: iac-code login --no-check\n")
                return 1
        path = store_key(config_dir, profile.id, key) if key else select(config_dir, profile.id)
    except StoredKeysError as exc:
        out.write(f"iac-code: {exc}: fix or move it, then log in again\n")
        return 2
    except (EOFError, KeyboardInterrupt):
        out.write("\nNothing stored.\n")
        return 1
    what = "Stored the key in" if key else "Selected it in"
    out.write(f"{what} {path} (readable by you only).\n")
    _warn_overrides(environ, profile, out)
    out.write("A running agent takes it at its next authenticate or prompt.\n")
    return 0


def logout(environ: Mapping[str, str], provider: str | None, out: TextIO) -> int:
    config_dir = config_dir_of(environ)
    try:
        chosen = normalise(provider) if provider else _current(environ, read_config(config_dir))
        if chosen not in BY_ID:
            out.write(f"iac-code: unknown provider {provider!r} (known: {', '.join(BY_ID)})\n")
            return 2
        removed = remove_key(config_dir, chosen)
    except StoredKeysError as exc:
        out.write(f"iac-code: {exc}: fix or move it first\n")
        return 2
    name, path = BY_ID[chosen].name, config_dir / "config.toml"
    if removed:
        out.write(f"Removed the {name} key from {path}.\n")
        out.write("A running agent keeps the key it has until it restarts.\n")
    else:
        out.write(f"No {name} key is stored in {path}.\n")
    _warn_overrides(environ, BY_ID[chosen], out)
    return 0


def _current(environ: Mapping[str, str], config: Mapping[str, Any]) -> str:
    """The provider the server would select now; anthropic when that cannot be told."""
    try:
        return choose_provider(environ, config, environ.get("IAC_CODE_MODEL") or None)
    except ValueError:
        return "anthropic"


def _choose(terminal: Terminal, current: str) -> ProviderProfile | None:
    default = next((n for n, p in enumerate(CHOICES, 1) if p.id == current), 1)
    terminal.out.write("Choose the model provider to sign in to:\n")
    for number, profile in enumerate(CHOICES, 1):
        terminal.out.write(f"  {number}) {profile.name}\n")
    for _ in range(ATTEMPTS):
        answer = terminal.ask(f"Provider [{default}]: ").strip() or str(default)
        chosen = _chosen(answer)
        if chosen is not None:
            return chosen
        terminal.out.write(f"Not a choice: {answer!r}. Type a number from 1 to {len(CHOICES)}.\n")
    terminal.out.write("Nothing stored.\n")
    return None


def _chosen(answer: str) -> ProviderProfile | None:
    if answer.isdigit() and 1 <= int(answer) <= len(CHOICES):
        return CHOICES[int(answer) - 1]
    return next((p for p in CHOICES if p.id == normalise(answer)), None)


def _key(terminal: Terminal, profile: ProviderProfile) -> str | None:
    if profile.key_link:
        terminal.out.write(f"Get a key at {profile.key_link}\n")
    terminal.out.flush()
    for _ in range(ATTEMPTS):
        key = terminal.ask_secret(f"Paste your {profile.name} API key (it is not shown): ")
        if key.strip():
            return key.strip()
        terminal.out.write("No key given.\n")
    terminal.out.write("Nothing stored.\n")
    return None


def _base_url(
    environ: Mapping[str, str], config: Mapping[str, Any], profile: ProviderProfile
) -> str | None:
    """Where the key is checked: where the server will send it."""
    try:
        configs = parse_providers(config.get("providers", {}))
    except ValueError:
        configs = {}
    selected = _current(environ, {**config, "provider": profile.id}) == profile.id
    return endpoint(profile.id, environ, configs, selected=selected).base_url


def _warn_overrides(environ: Mapping[str, str], profile: ProviderProfile, out: TextIO) -> None:
    """What in the environment wins over config.toml."""
    chosen = environ.get("IAC_CODE_PROVIDER")
    if chosen and normalise(chosen) != profile.id:
        out.write(f"Note: IAC_CODE_PROVIDER={chosen} selects another provider.\n")
    for variable in ("IAC_CODE_API_KEY", profile.key_env):
        if variable and environ.get(variable):
            out.write(f"Note: {variable} is set in the environment and wins over config.toml.\n")
