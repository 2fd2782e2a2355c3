from dataclasses import dataclass

from application.handshake.server_info import ServerInfo
from domain.sandbox import SandboxRules

PROTOCOL_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Initialize:
    """Negotiate the protocol version and describe this server.

    - We speak protocol version 1; a client asking for any other version is answered with 1.
    - Deliberately cheap: it runs before the heavy modules are loaded.
    """

    name: str
    title: str
    version: str
    takes_key: bool
    provider_name: str = "the model provider"
    key_variable: str = "IAC_CODE_API_KEY"
    key_link: str | None = None
    images: bool = True
    sandbox: SandboxRules | None = None  # what the agent's commands run in

    def execute(self, requested_version: int) -> ServerInfo:
        return ServerInfo(
            protocol_version=PROTOCOL_VERSION,
            name=self.name,
            title=self.title,
            version=self.version,
            takes_key=self.takes_key,
            provider_name=self.provider_name,
            key_variable=self.key_variable,
            key_link=self.key_link,
            images=self.images,
            sandbox=self.sandbox,
        )
