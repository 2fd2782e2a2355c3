"""The methods served, and the `agentCapabilities` entry each one stands for.

This is the one list both the routing (adapters.acp_v1.agent builds its method table
`{method: (params model, handler, capability)}` with it) and the advertised capabilities
(adapters.acp_v1.handshake) come from, so nothing is advertised that is not routed and
nothing routed is left unadvertised. Kept free of heavy imports: `initialize` is answered
before pydantic and the SDK load.
"""

from typing import Any

# Our extension (ACP reserves "_"-prefixed names for them): give a session another title.
RENAME_METHOD = "_iac_code/session/rename"
# Rewind (the `session/rewind` of ACP's session-rewind proposal, in no schema yet) and its undo.
REWIND_METHOD = "_iac_code/session/rewind"
REWIND_UNDO_METHOD = "_iac_code/session/rewind_undo"
EDIT_PROMPT_METHOD = "_iac_code/session/edit_prompt"

# The peers' shared extension (advertised as they advertise it, `_meta.steering.supported`,
# with our details beside it): a message into the running turn.
STEER_METHOD = "_session/steering"
STEERING_DETAILS = {"idleBehavior": ["startNewTurn", "fail"], "defaultIdleBehavior": "startNewTurn"}

# Shorthand method names used by the product documents, served as the official ones.
ALIASES = {
    "sessions/list": "session/list",
    "config/set": "session/set_config_option",
    "session/rewind": REWIND_METHOD,  # the proposal's names
    "session/edit_prompt": EDIT_PROMPT_METHOD,
}

# Requests a `$/cancel_request` ends the way their own cancel does (a prompt answers with
# stopReason "cancelled"), through that notification, which names the session.
CANCELLED_BY = {"session/prompt": "session/cancel"}
# What such a request still waiting for the agent to load is answered once the client has
# closed stdin (adapters.protocol.lazy): the EOF cancels it before it ever began.
ANSWERED_AT_EOF = {"session/prompt": {"stopReason": "cancelled"}}

# A capability: where it sits in `agentCapabilities`, and the value advertised there.
Capability = tuple[tuple[str, ...], Any]

# The client's system prompt: `append` (every agent advertising it has that) and `override`.
SYSTEM_PROMPT: Capability = (("sessionCapabilities", "systemPrompt"), {"mode": {"override": {}}})

# Rewind: the methods, and what it does with files ("keep": the history is cut, the files
# stay as they are; "restore": the files the cut turns changed are put back too).
REWIND: Capability = (
    ("_meta", "iac_code", "rewind"),
    {
        "method": REWIND_METHOD,
        "alias": "session/rewind",
        "undoMethod": REWIND_UNDO_METHOD,
        "editPromptMethod": EDIT_PROMPT_METHOD,
        "files": ["keep", "restore"],
        "resolve": ["force", "skip"],  # with "restore", and on the undo: changed files
        "forkAt": "_meta.iac_code.atMessageId",  # session/fork before one of the prompts
    },
)

# Every request method served, with the capabilities that announce it (none: part of the
# protocol's baseline). `additionalDirectories` and `systemPrompt` are params of the
# session-opening methods: they are carried by session/new, which every client uses.
METHODS: dict[str, tuple[Capability, ...]] = {
    "initialize": (),
    "authenticate": (),
    "logout": ((("auth", "logout"), {}),),
    "session/new": ((("sessionCapabilities", "additionalDirectories"), {}), SYSTEM_PROMPT),
    "session/load": ((("loadSession",), True),),
    # A prompt sent while a turn runs waits its turn, for clients that ask for it.
    "session/prompt": ((("_meta", "iac_code", "promptQueueing"), True),),
    "session/set_mode": (),
    "session/set_config_option": (),
    "session/close": ((("sessionCapabilities", "close"), {}),),
    "session/list": ((("sessionCapabilities", "list"), {}),),
    "session/resume": ((("sessionCapabilities", "resume"), {}),),
    "session/fork": ((("sessionCapabilities", "fork"), {}),),
    "session/delete": ((("sessionCapabilities", "delete"), {}),),
    RENAME_METHOD: ((("_meta", "iac_code", "renameSession"), RENAME_METHOD),),
    STEER_METHOD: (
        (("_meta", "steering", "supported"), True),
        (("_meta", "iac_code", "steering"), STEERING_DETAILS),
    ),
    REWIND_METHOD: (REWIND,),
    REWIND_UNDO_METHOD: (),  # advertised with the rewind, as is:
    EDIT_PROMPT_METHOD: (),
}


def advertised(methods: dict[str, tuple[Capability, ...]] = METHODS) -> dict[str, Any]:
    """The `agentCapabilities` entries the methods stand for, as one nested dict."""
    tree: dict[str, Any] = {}
    for capabilities in methods.values():
        for path, value in capabilities:
            node = tree
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value
    return tree
