"""Everything the server's handlers share: the store, the engine's runs, the event feeds, the settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from dialectic.core.events import EventBus
from dialectic.engine import DebateEngine
from dialectic.llm.registry import ProviderPool
from dialectic.store.base import DebateStore
from dialectic.web.feed import FeedHub
from dialectic.web.new_debate import ServerConfig
from dialectic.web.runs import ServerRuns
from dialectic.web.scrubbing import SecretScrubber
from dialectic.web.security import TokenCheck

DEFAULT_MAX_RUNNING = 50
DEFAULT_MAX_BODY_BYTES = 1_000_000


@dataclass(frozen=True)
class ServeSettings:
    """``dialectic serve``'s options, once checked."""

    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    cors_origins: tuple[str, ...] = ()
    max_running: int = DEFAULT_MAX_RUNNING
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    resume_orphans: bool = False


@dataclass
class ServerState:
    store: DebateStore
    server: ServerConfig
    settings: ServeSettings
    providers: ProviderPool
    bus: EventBus
    hub: FeedHub
    runs: ServerRuns
    scrub: SecretScrubber
    token: TokenCheck
    notices: list[str] = field(default_factory=list)
    """What the server said at start-up (e.g. the debates left running by a server that died)."""


def build_context(
    store: DebateStore, server: ServerConfig, settings: ServeSettings, providers: ProviderPool | None = None
) -> ServerState:
    """Wire the engine, its runs and the event feeds around ``store``; one engine for every debate."""
    pool = providers or ProviderPool()
    scrub = SecretScrubber([settings.token] if settings.token else [])
    bus = EventBus()
    runs: ServerRuns | None = None

    def running_here(debate_id: str) -> bool:
        return runs is not None and runs.is_running(debate_id)

    hub = FeedHub(store, scrub, running_here)
    bus.subscribe(hub, deltas=True)
    runs = ServerRuns(DebateEngine(store, pool, bus), max_running=settings.max_running, on_end=hub.end)
    return ServerState(
        store=store,
        server=server,
        settings=settings,
        providers=pool,
        bus=bus,
        hub=hub,
        runs=runs,
        scrub=scrub,
        token=TokenCheck(settings.token),
    )
