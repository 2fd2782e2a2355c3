"""`initialize`'s `_meta.iac_code.sandbox`: what the agent's commands run in, in the shape of
ACP's sandbox-capability RFD (`SandboxCapability`: `mode` and `guarantees`, for the level a
new session gets), with what a session may choose through its `sandbox` and `network`
config options."""

from typing import Any

from domain.sandbox import NetworkLevel, SandboxLevel, SandboxRules

_NET_ISOLATION = {
    NetworkLevel.NONE: "denyAll",
    NetworkLevel.ALLOWLIST: "restricted",
    NetworkLevel.FULL: "none",
}


def sandbox_capability(rules: SandboxRules) -> dict[str, Any]:
    confined = rules.available and rules.default is not SandboxLevel.OFF
    return {
        # The RFD's modes name container engines; ours are namespaces and seccomp
        # (bubblewrap) or Landlock and seccomp, which it files under "custom", with the
        # engine named beside it.
        "mode": "custom" if confined else "host",
        "engine": rules.engine,
        "guarantees": {
            "fsIsolation": "workspace" if confined else "none",
            "netIsolation": _NET_ISOLATION[rules.network] if confined else "none",
            "processCaps": confined,
        },
        "configOptions": {"sandbox": "sandbox", "network": "network"},
        "levels": [str(level) for level in rules.levels()],
        "networks": [str(network) for network in rules.networks()],
        "default": str(rules.default),
        "ceiling": str(rules.ceiling),
        "defaultNetwork": str(rules.network),
    }
