"""One cheap request that tells whether a provider takes a key: its model listing, which
costs no tokens. Standard library only: `iac-code login` should start fast."""

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

from adapters.llm.providers import Adapter, ProviderProfile

ANTHROPIC_URL = "https://api.anthropic.com"
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True, slots=True)
class KeyVerdict:
    accepted: bool
    problem: str = ""  # why not, for people
    refused: bool = False  # the provider said no (401/403), rather than not answering


def check_key(
    profile: ProviderProfile, base_url: str | None, key: str, timeout: float = 15.0
) -> KeyVerdict:
    if profile.adapter is Adapter.DEMO:
        return KeyVerdict(True)
    request = _listing_request(profile, base_url, key)
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return KeyVerdict(True)
    except urllib.error.HTTPError as exc:
        detail = _detail(exc)
        if exc.code in (401, 403):
            return KeyVerdict(False, f"{profile.name} refused the key ({exc.code}{detail})", True)
        return KeyVerdict(False, f"{request.full_url} answered {exc.code}{detail}")
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return KeyVerdict(False, f"could not reach {request.full_url} ({reason})")


def _listing_request(
    profile: ProviderProfile, base_url: str | None, key: str
) -> urllib.request.Request:
    if profile.adapter is Adapter.ANTHROPIC:
        # The SDK's base URL is the API's root: it adds /v1/... itself.
        root = (base_url or ANTHROPIC_URL).rstrip("/")
        headers = {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
        return urllib.request.Request(f"{root}/v1/models?limit=1", headers=headers)
    root = (base_url or OPENAI_URL).rstrip("/")
    return urllib.request.Request(f"{root}/models", headers={"Authorization": f"Bearer {key}"})


def _detail(exc: urllib.error.HTTPError) -> str:
    """The provider's own error message, when its body says one."""
    try:
        body = json.loads(exc.read(4096) or b"{}")
    except (OSError, ValueError):
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return f": {str(message)[:200]}" if message else ""
