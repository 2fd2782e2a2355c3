"""The containers by role, assembled: each takes the ones before it, none reaches forward.
Importing it loads the heavy modules: keep it off the path to the `initialize` answer
(see bootstrap/stdio.py)."""

from dependency_injector import containers, providers

from bootstrap.containers.acp import Acp
from bootstrap.containers.clients import Clients
from bootstrap.containers.commands import Commands
from bootstrap.containers.core import Core
from bootstrap.containers.gateways import Gateways
from bootstrap.containers.prompting import Prompting
from bootstrap.containers.sessions import Sessions
from bootstrap.containers.storage import Storage
from bootstrap.containers.turn import Turn
from bootstrap.settings import Settings


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    version = providers.Object("0.0.0")

    core = providers.Container(Core, settings=settings, version=version)
    storage = providers.Container(Storage, core=core)
    gateways = providers.Container(Gateways, core=core, storage=storage)
    clients = providers.Container(Clients, core=core, storage=storage, gateways=gateways)
    sessions = providers.Container(
        Sessions, core=core, storage=storage, gateways=gateways, clients=clients
    )
    turn = providers.Container(
        Turn, core=core, storage=storage, gateways=gateways, clients=clients, sessions=sessions
    )
    commands = providers.Container(
        Commands, core=core, gateways=gateways, clients=clients, sessions=sessions, turn=turn
    )
    prompting = providers.Container(
        Prompting,
        core=core,
        gateways=gateways,
        clients=clients,
        sessions=sessions,
        turn=turn,
        commands=commands,
    )
    acp = providers.Container(
        Acp,
        core=core,
        storage=storage,
        gateways=gateways,
        clients=clients,
        sessions=sessions,
        prompting=prompting,
    )

    # What the transports, the command-line tools and the tests reach, by the names they
    # knew before the split: the same providers, so overriding one here overrides it there.
    agent = acp.agent
    use_cases = acp.use_cases
    revival = acp.revival
    room = clients.room
    channels = clients.channels
    registry = core.registry
    catalog = core.catalog
    tracer = core.tracer
    llm = gateways.llm
    uow = storage.uow
    list_sessions = sessions.list_sessions
    rename_session = sessions.rename_session
    delete_session = sessions.delete_session
