from bootstrap.database_url import shown


def test_a_password_is_never_shown() -> None:
    url = "postgresql+asyncpg://app:s3cr%40t@db.example:5432/iac?ssl=require"
    assert shown(url) == "postgresql+asyncpg://app:***@db.example:5432/iac?ssl=require"
    assert "s3cr" not in shown(url)


def test_urls_without_a_password_are_shown_as_they_are() -> None:
    for url in (
        "postgresql+asyncpg://postgres@127.0.0.1:5432/test",
        "sqlite+aiosqlite:////home/dev/.iac-code/iac-code.db",
    ):
        assert shown(url) == url
