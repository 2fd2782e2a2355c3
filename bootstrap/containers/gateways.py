"""What a turn calls out to: the model (and the terms it is asked again on), the tools, the
local workspace, the project's knowledge, MCP servers."""

import asyncio

from dependency_injector import containers, providers

from adapters.knowledge.local import LocalProjectKnowledge
from adapters.tools.base import Limits
from adapters.tools.runner import LocalToolRunner
from adapters.workspace.egress import EgressProxy
from adapters.workspace.local import LocalWorkspace
from application.agent_loop.provider_retry import QuietRetry, RetryTerms
from application.ports.mcp import McpConnector
from application.runtime.subagent_runs import SubagentRuns
from bootstrap.confinement import egress_allow_list
from bootstrap.model_clients import build_llm
from bootstrap.settings import Settings


class OnDemand:
    """The MCP connector, made in a worker thread when a session first has servers:
    importing the MCP SDK takes ~0.9 s of CPU, which most sessions never need, and which
    would hold up every stream if done on the event loop."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._made: McpConnector | None = None

    async def __call__(self) -> McpConnector:
        if self._made is None:
            self._made = await asyncio.to_thread(self._make)
        return self._made

    def _make(self) -> McpConnector:
        from adapters.mcp.servers import SdkMcpConnector

        return SdkMcpConnector(connect_timeout=self._settings.mcp_connect_timeout)


class Gateways(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    storage = providers.DependenciesContainer()

    llm = providers.Singleton(build_llm, core.settings)
    # A failed model request is asked again by the application, the SDKs' own retries being
    # off (bootstrap.model_clients): IAC_CODE_MAX_RETRIES tries more, within
    # IAC_CODE_PROVIDER_RETRY_SECONDS of waiting.
    retry_terms = providers.Singleton(
        RetryTerms,
        max_retries=core.settings.provided.max_retries,
        budget_seconds=core.settings.provided.provider_retry_seconds,
    )
    # The model for requests that are not a turn's reply (a compaction's summary): asked
    # again quietly, on the same terms.
    quiet_llm = providers.Singleton(QuietRetry, llm=llm, terms=retry_terms)
    tool_limits = providers.Singleton(
        Limits,
        bash_timeout=core.settings.provided.bash_timeout,
        bash_max_timeout=core.settings.provided.bash_max_timeout,
    )
    # The one way out of an `allowlist` sandbox (IAC_CODE_SANDBOX_ALLOW), started on first use.
    egress = providers.Singleton(
        EgressProxy,
        providers.Callable(egress_allow_list, core.settings),
    )
    local_workspace = providers.Singleton(LocalWorkspace, core.confinement, egress)
    local_tools = providers.Singleton(LocalToolRunner, tool_limits, local_workspace)
    subagent_runs = providers.Singleton(SubagentRuns)  # running children, to cancel one
    knowledge = providers.Singleton(
        LocalProjectKnowledge, config_dir=core.settings.provided.config_dir
    )
    mcp_connector = providers.Singleton(OnDemand, core.settings)
