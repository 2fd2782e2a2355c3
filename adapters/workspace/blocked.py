"""What the sandbox stopped, told from a command's output and status: the model should not
retry a write outside the workspace in ten ways, nor take a refused connection for a
server that is down. Each sign is what the C library or bash prints for the error the
sandbox causes; a command that failed for another reason with the same words gets a note
that says "probably"."""

import signal

from domain.sandbox import NetworkLevel, SandboxLevel, SandboxPolicy

_WRITE = ("Read-only file system",)
# Landlock's refusals (the fallback's): of a file or TCP, of a link across its rules.
_DENIED = ("Permission denied", "Invalid cross-device link")
_NETWORK = (
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "Network is unreachable",
    "No address associated with hostname",
    "Connection refused",
)
_FORK = ("fork: retry", "fork: Resource temporarily unavailable", "Cannot fork")
_REFUSED_CALL = ("Operation not permitted",)
_FILE_SIZE_EXIT = 128 + signal.SIGXFSZ


def _where(policy: SandboxPolicy, directories: tuple[str, ...]) -> str:
    if policy.level is SandboxLevel.READ_ONLY:
        return "this session's sandbox is read-only: commands write nothing but /tmp"
    return "commands write only the session's directories (" + ", ".join(directories) + ") and /tmp"


def blocked_note(
    policy: SandboxPolicy,
    directories: tuple[str, ...],
    output: str,
    exit_code: int | None,
) -> str | None:
    """A sentence for the tool result when the sandbox probably stopped the command."""
    if not policy.confined:
        return None
    found: list[str] = []
    if any(sign in output for sign in _WRITE):
        found.append(f"a write outside what the sandbox allows ({_where(policy, directories)})")
    elif exit_code != 0 and any(sign in output for sign in _DENIED):
        found.append(
            "probably an access outside what the sandbox allows "
            f"({_where(policy, directories)}; network: {policy.network})"
        )
    if policy.network is NetworkLevel.NONE and any(sign in output for sign in _NETWORK):
        found.append(
            "network access (this session's network is `none`: no host, not even the server's)"
        )
    if exit_code == _FILE_SIZE_EXIT or "File size limit exceeded" in output:
        found.append("a file larger than the sandbox's file-size limit")
    if any(sign in output for sign in _FORK):
        found.append("more processes than the sandbox's process limit")
    if not found and exit_code != 0 and any(sign in output for sign in _REFUSED_CALL):
        found.append(
            "probably a system call the sandbox refuses (ptrace, mount, namespaces, kernel "
            "keys, BPF, modules, clocks)"
        )
    if not found:
        return None
    return (
        "[sandbox] This command ran in a sandbox, which blocked "
        + "; ".join(found)
        + ". Do not work around it: ask the user, who can change the session's `sandbox` "
        "or `network` option if the server allows it."
    )
