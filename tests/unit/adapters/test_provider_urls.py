"""A provider's URL as errors and logs show it: no credential in it (issue 25, finding 11)."""

import pytest

from adapters.llm.attempts import safe_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw@127.0.0.1:1/v1/chat", "http://127.0.0.1:1/v1/chat"),
        ("https://token@api.example.com/v1", "https://api.example.com/v1"),
        (
            "https://gw.example.com/v1/messages?api_key=sk-1&region=eu&X-Auth-Token=t&sig=s",
            "https://gw.example.com/v1/messages?region=eu",
        ),
        ("http://u:p@[::1]:8080/v1#frag", "http://[::1]:8080/v1"),
        ("http://localhost/v1", "http://localhost/v1"),
    ],
)
def test_finding_11_a_provider_url_is_shown_without_credentials(url: str, shown: str) -> None:
    assert safe_url(url) == shown
