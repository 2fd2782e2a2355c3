from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("iac-code")
    except PackageNotFoundError:
        return "0.0.0+unknown"
