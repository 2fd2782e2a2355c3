from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpConfig:
    """Limits and timings of the HTTP transport (bootstrap reads them from the environment)."""

    token: str | None = field(default=None, repr=False)  # bearer token; None: no auth
    max_body_bytes: int = 10 * 2**20
    buffer_max_events: int = 10_000  # per connection, written events kept for replay included
    buffer_max_bytes: int = 16 * 2**20
    # While a stream is open and over half the buffer is unwritten, the agent waits for the
    # stream (a long replay goes at the client's pace), until it writes nothing for this long.
    sender_patience_seconds: float = 30.0
    keepalive_seconds: float = 15.0
    retry_ms: int = 3_000  # the reconnect delay the stream asks EventSource clients to use
    idle_timeout_seconds: float = 3_600.0  # reap connections with no stream and no request
    # ... and sooner those that never opened a stream nor sent anything after `initialize`.
    unused_timeout_seconds: float = 60.0
    reap_interval_seconds: float = 60.0
    max_connections: int = 100
    initialize_timeout_seconds: float = 30.0
    # Slow clients: a request's headers, then its body, must arrive within these.
    header_timeout_seconds: float = 10.0
    body_timeout_seconds: float = 30.0
    # One event on the stream; a larger one is replaced by an error saying so (it would
    # otherwise fill the buffer by itself). Kept at most `buffer_max_bytes`.
    max_event_bytes: int = 10 * 2**20
    readiness_timeout_seconds: float = 5.0
    # Host names requests may be addressed to; None accepts any (set for public binds).
    allowed_hosts: frozenset[str] | None = None
    # Origins (`scheme://host:port`, host_guard.normal_origin) whose pages are served besides
    # the server's own; any other Origin header, `null` included, gets 403.
    allowed_origins: frozenset[str] = frozenset()
    # Prefix of the connection ids minted here (`<replica_id>.<random>`): a load balancer
    # routes each request to the replica its id names. None: the bare random id.
    replica_id: str | None = None
    # WebSocket keepalive: the server pings every interval; a peer that has not answered a
    # ping within the timeout is closed (1011). A turn may be silent for minutes.
    ws_ping_interval_seconds: float = 20.0
    ws_ping_timeout_seconds: float = 20.0
