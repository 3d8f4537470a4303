"""MEMORY.md as a live, human-editable source: watch each agent's file and re-import it on change.

Layout: ``DIR/<agent_id>/MEMORY.md`` (one folder per agent, as in the agent-memory design).
A change is applied once the file has been quiet for ``debounce`` seconds (1 s by default), through
:meth:`MemoryStore.import_markdown`, which skips a file whose hash is the one last synced and
applies additions, edits and deletions of bullets. A file with a syntax problem is reported with
its line (``ImportFormatError``) and changes nothing. A deleted file deletes nothing.

With ``write_back`` (``Settings.markdown_write_back``), a memory changed through the API is written
back to its agent's file: when what the export would write differs from what was last synced and
the file itself is unchanged since that sync (a human edit waiting to be imported wins), the file is
exported. The export records its own hash, so the watcher's next look at the file is a skip: no
write loop.

Events come from `watchfiles <https://watchfiles.helpmanual.io>`_ (extra ``[watch]``); without it,
or with ``poll=True``, the folder is polled (``stat`` every 250 ms).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from . import validation as v
from .errors import HarnessMemoryError, InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    from .store import MemoryStore

__all__ = ["MarkdownWatcher", "WatchEvent"]

log = logging.getLogger("harness_memory.watch")

FILE_NAME = "MEMORY.md"
POLL_SECONDS = 0.25


@dataclass
class WatchEvent:
    """What the watcher did: ``kind`` is imported, skipped, error, removed or exported."""

    kind: str
    agent_id: str | None
    path: str
    detail: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class MarkdownWatcher:
    """A background thread keeping ``DIR/<agent>/MEMORY.md`` files and the store in step.

    Opens its own store on the same database (its own connection), so it never shares a
    transaction with the caller's threads. :meth:`stop` ends it; so does closing the store that
    started it (:meth:`MemoryStore.watch`)."""

    def __init__(
        self,
        store: MemoryStore,
        directory: str | Path,
        *,
        namespace: str | None = None,
        debounce: float | None = None,
        poll: bool | None = None,
        write_back: bool | None = None,
        on_event: Callable[[WatchEvent], None] | None = None,
    ):
        s = store.settings
        self.directory = v.path(directory, "directory")
        try:
            is_dir = self.directory.is_dir()
        except OSError as exc:  # a name too long, a loop of links: not a folder it can watch
            raise InvalidInputError(f"directory cannot be watched: {exc.strerror or type(exc).__name__}") from None
        if not is_dir:
            raise InvalidInputError(f"{self.directory} is not a folder (expected DIR/<agent_id>/{FILE_NAME})")
        self.namespace = v.ident(namespace, "namespace", optional=True)
        self.debounce = v.number(s.watch_debounce_seconds if debounce is None else debounce, "debounce", lo=0, hi=3600)
        self.write_back = v.boolean(s.markdown_write_back if write_back is None else write_back, "write_back")
        if poll is None:
            try:
                import watchfiles  # noqa: F401

                poll = False
            except ImportError:
                poll = True
        self.poll = v.boolean(poll, "poll")
        if on_event is not None and not callable(on_event):
            raise InvalidInputError("on_event must be callable")
        self._on_event = on_event
        self._target = str(store._target)
        self._settings = s
        self._embedder = store.embedder
        self._clock = store._core.clock
        self.events: list[WatchEvent] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"harness-memory-watch:{self.directory}", daemon=True)
        self._error: BaseException | None = None

    # -- control -------------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> Self:
        """Start the thread; returns once the initial sync is done and changes are being watched."""
        self._thread.start()
        if not self._ready.wait(timeout) and self._error is None:
            raise HarnessMemoryError(f"the watcher on {self.directory} did not start within {timeout} s")
        if self._error is not None:
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set()

    def __enter__(self) -> Self:
        return self if self._thread.is_alive() else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def snapshot(self) -> list[WatchEvent]:
        with self._lock:
            return list(self.events)

    # -- the thread ----------------------------------------------------------------------------
    def _emit(self, ev: WatchEvent) -> None:
        with self._lock:
            self.events.append(ev)
            if len(self.events) > 10_000:
                del self.events[:5_000]
        if self._on_event is not None:
            try:
                self._on_event(ev)
            except Exception as exc:  # noqa: BLE001 - a callback's bug must not stop the watcher
                log.warning("watch: on_event raised %s", type(exc).__name__)

    def _files(self) -> list[Path]:
        return sorted(p for p in self.directory.glob(f"*/{FILE_NAME}") if p.is_file())

    def _run(self) -> None:
        from .store import MemoryStore

        try:
            store = MemoryStore(self._target, settings=self._settings, embedder=self._embedder, clock=self._clock)
        except BaseException as exc:  # noqa: BLE001 - handed to start(), which raises it in the caller
            self._error = exc
            self._ready.set()
            return
        try:
            for p in self._files():  # what changed while nobody watched
                self._sync(store, p)
            if self.write_back:
                self._write_back(store)
            pending: dict[Path, float] = {}
            last_wb = time.monotonic()
            for changed in self._changes():
                now = time.monotonic()
                for p in changed:
                    if p.name == FILE_NAME and p.parent.parent == self.directory:
                        pending[p] = now
                    elif p.parent == self.directory and (p / FILE_NAME).is_file():
                        # a new agent folder: its file may have been written before the folder was watched
                        pending[p / FILE_NAME] = now
                for p, t in list(pending.items()):
                    if now - t >= self.debounce:
                        del pending[p]
                        self._sync(store, p)
                if self.write_back and not pending and now - last_wb >= max(self.debounce, POLL_SECONDS):
                    self._write_back(store)
                    last_wb = now
                if self._stop.is_set():
                    break
        except Exception as exc:
            log.error("watch: the watcher on %s stopped: %s", self.directory, type(exc).__name__, exc_info=exc)
            self._error = exc
            self._ready.set()
        finally:
            store.close()

    def _changes(self) -> Iterator[set[Path]]:
        """Sets of changed paths (often empty: a tick at least every ~250 ms) until stopped."""
        if not self.poll:
            import watchfiles

            self._ready.set()
            for changes in watchfiles.watch(
                self.directory,
                debounce=max(50, int(self.debounce * 500)),
                step=50,
                stop_event=self._stop,
                rust_timeout=int(POLL_SECONDS * 1000),
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                yield {Path(p) for _, p in changes}
            return
        seen: dict[Path, tuple[Any, ...]] = {}
        for p in self._files():
            seen[p] = self._stat(p)
        self._ready.set()
        while not self._stop.wait(POLL_SECONDS):
            now = {p: self._stat(p) for p in self._files()}
            changed = {p for p in set(now) | set(seen) if now.get(p) != seen.get(p)}
            seen = now
            yield changed

    @staticmethod
    def _stat(p: Path) -> tuple[Any, ...]:
        try:
            st = p.stat()
        except OSError:
            return ()
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _agent(self, path: Path) -> str | None:
        try:
            return v.ident(path.parent.name, "agent_id")
        except InvalidInputError:
            return None

    def _sync(self, store: MemoryStore, path: Path) -> None:
        agent = self._agent(path)
        if agent is None:
            self._emit(WatchEvent("error", None, str(path), {"error": "the folder name is not a valid agent id"}))
            return
        if not path.exists():
            log.info("watch: %s was removed; its memories are kept", path)
            self._emit(WatchEvent("removed", agent, str(path)))
            return
        try:
            rep = store.import_markdown(agent, path, namespace=self.namespace)
        except HarnessMemoryError as exc:  # a syntax problem names its line; nothing was changed
            log.warning("watch: %s not imported: %s", path, exc)
            self._emit(WatchEvent("error", agent, str(path), {"error": f"{type(exc).__name__}: {exc}"}))
            return
        except OSError as exc:  # the file vanished or became unreadable between the event and the read
            self._emit(WatchEvent("error", agent, str(path), {"error": f"{type(exc).__name__}: {exc.strerror}"}))
            return
        kind = "skipped" if rep.skipped_file else "imported"
        self._emit(
            WatchEvent(
                kind,
                agent,
                str(path),
                {"inserted": rep.inserted, "updated": rep.updated, "unchanged": rep.unchanged, "deleted": rep.deleted},
            )
        )

    def _write_back(self, store: MemoryStore) -> None:
        from .portability import _agent_memories, _markdown_for

        core = store._core
        ns = self.namespace or core.settings.namespace
        for path in self._files():
            agent = self._agent(path)
            if agent is None:
                continue
            row = core.backend.execute(
                "SELECT file_hash FROM markdown_sync WHERE namespace = ? AND agent_id = ?", (ns, agent)
            ).fetchone()
            if row is None or _digest(path) != row[0]:
                continue  # never synced, or a human edit is waiting to be imported: the file wins
            text = _markdown_for(_agent_memories(core, agent, ns), agent, ns)
            if hashlib.sha256(text.encode()).hexdigest() == row[0]:
                continue
            try:
                n = store.export_markdown(agent, path, namespace=self.namespace)
            except (HarnessMemoryError, OSError) as exc:
                self._emit(WatchEvent("error", agent, str(path), {"error": f"write-back: {type(exc).__name__}"}))
                continue
            self._emit(WatchEvent("exported", agent, str(path), {"memories": n}))
