"""One cheap request that tells whether a provider takes a key: its model listing, which
costs no tokens, sent by the provider's SDK to the base URL the server uses, so the key
travels exactly as the server will send it (the SDK picks the header)."""

from dataclasses import dataclass

from adapters.llm.providers import Adapter, ProviderProfile


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
    import anthropic  # the SDKs load slowly: only when a key is checked
    import openai

    try:
        if profile.adapter is Adapter.ANTHROPIC:
            client = anthropic.Anthropic(
                api_key=key, base_url=base_url, max_retries=0, timeout=timeout
            )
            client.models.list(limit=1)
        else:
            openai.OpenAI(
                api_key=key, base_url=base_url, max_retries=0, timeout=timeout
            ).models.list()
    except (anthropic.APIStatusError, openai.APIStatusError) as exc:
        if exc.status_code in (401, 403):
            return KeyVerdict(False, f"{profile.name} refused the key ({exc.status_code})", True)
        return KeyVerdict(False, f"{profile.name} answered {exc.status_code}: {exc.message}")
    except (anthropic.APIError, openai.APIError) as exc:
        return KeyVerdict(False, f"could not reach {profile.name} ({exc})")
    return KeyVerdict(True)
