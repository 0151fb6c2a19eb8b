"""A long-lived JSON-RPC program with requests pipelined on its stdin.

Requests are written as soon as they are made (up to the runner's concurrency), so the program never waits
for the harness between two requests: those made in one turn of the event loop go out together in one write, at
the end of that turn. A program reading stdin line by line answers in order, so each
request's clock starts when the program can start on it: when it was sent or when the reply before it came,
whichever is later. Latency and timeouts are measured from there, so time spent queued behind other
requests is never charged to a task.

When the program times out, dies or breaks the protocol, the request it was working on fails; the
requests queued behind it, which it never started, are sent again to a fresh process. A program that exits
while something it started keeps its stdout open is treated as having ended (after ``LEFTOVER_GRACE``).

A reply whose id matches no waiting request is kept, and the request that then fails (it times out, or the
program ends) names it (a skill echoing the id as the string ``"1"`` is told so instead of timing out in
silence). A timeout also quotes a line the program started but did not finish. A program answering out of
order gets each request's latency from when that request was sent.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import SkillError, SkillProtocolError, SkillTimeout
from ..procs import LEFTOVER_GRACE, Child, excerpt, read_line

Reply = dict[str, Any]
Parse = Callable[[bytes], "Reply | None"]


MAX_LATE_CHECKS = 200  # how many times (1 ms apart) a deadline waits for output that had already arrived


class _Pending:
    # ``timer``: only a deadline's late checks (the channel's own timer watches the head's deadline)
    __slots__ = ("id", "request", "timeout", "future", "sent", "started", "timer", "last", "late_checks")

    def __init__(self, request_id: int, request: bytes, timeout: float, future: asyncio.Future[Any]) -> None:
        self.id = request_id
        self.request = request
        self.timeout = timeout
        self.future = future
        self.sent = 0.0
        self.started: float | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.last = b""
        self.late_checks = 0


class PersistentChannel:
    """Sends requests to one program at a time and matches replies by id.

    ``spawn`` starts the program; ``parse`` turns a stdout line into a reply (or None for a log line);
    ``ended`` builds the error for a program whose stdout ended while it was working on a request.
    """

    def __init__(self, spawn: Callable[[], Awaitable[Child]], parse: Parse,
                 ended: Callable[[Child, str], Awaitable[SkillError]], *, max_line_bytes: int) -> None:
        self._spawn = spawn
        self._parse = parse
        self._ended = ended
        self._max_line_bytes = max_line_bytes
        self._child: Child | None = None
        self._reader: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._unmatched = b""  # the last reply that matched no waiting request
        self._queue: collections.deque[_Pending] = collections.deque()
        self._outbox: list[bytes] | None = None  # requests made in this turn of the loop, written at its end
        self._lock = asyncio.Lock()  # held while a process is started or replaced
        self._next_id = 0
        self._timer: asyncio.TimerHandle | None = None  # checks the head's deadline (see _arm)

    @property
    def child(self) -> Child | None:
        return self._child

    async def ensure_started(self) -> Child:
        async with self._lock:
            return await self._ensure_child()

    async def call(self, make_request: Callable[[int], bytes], timeout: float) -> tuple[Reply, float]:
        """Send one request; return its reply and the seconds the program spent on it."""
        self._next_id += 1
        request = make_request(self._next_id)
        loop = asyncio.get_running_loop()
        pending = _Pending(self._next_id, request, timeout, loop.create_future())
        child = self._child
        if child is not None and not self._lock.locked():  # what taking the free lock would do, without its cost
            self._send(child, pending)
        else:
            async with self._lock:
                child = await self._ensure_child()
                self._send(child, pending)
        return await pending.future

    async def close(self) -> Child | None:
        """Detach the program (the caller stops it) and fail whatever is still waiting."""
        async with self._lock:
            child = self._detach()
            for pending in self._queue:
                self._settle(pending, error=SkillError("the skill was closed"))
            self._queue.clear()
        return child

    # -- sending and receiving ---------------------------------------------------------------------

    async def _ensure_child(self) -> Child:
        if self._child is None:
            child = self._child = await self._spawn()
            self._reader = asyncio.create_task(self._read(child))
            self._watcher = asyncio.create_task(self._watch(child))
        return self._child

    def _send(self, child: Child, pending: _Pending) -> None:
        loop = asyncio.get_running_loop()
        pending.sent = loop.time()
        self._queue.append(pending)
        if self._queue[0] is pending:
            self._start_clock(pending)
        # Requests made in one turn of the loop (the replies of one read each letting a task make its next call)
        # go out in one write: one system call, one wake-up of the program.
        outbox = self._outbox
        if outbox is None:
            outbox = self._outbox = []
            loop.call_soon(self._flush, child, outbox)
        outbox.append(pending.request)

    def _flush(self, child: Child, outbox: list[bytes]) -> None:
        if self._outbox is outbox:
            self._outbox = None
        if child is not self._child:
            return  # replaced or closed since: its requests were sent again to the new program, or failed
        stdin = child.proc.stdin
        assert stdin is not None
        # if the program is gone, the reader sees its stdout end and fails or resends these requests
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write(outbox[0] if len(outbox) == 1 else b"".join(outbox))

    def _start_clock(self, pending: _Pending) -> None:
        pending.started = asyncio.get_running_loop().time()
        pending.late_checks = 0
        self._arm(pending.started + pending.timeout)

    def _arm(self, when: float) -> None:
        """Have the head's deadline checked by ``when``. One timer serves the channel: a timer set for an earlier
        deadline is kept (when it fires it arms again for the request then at the head), so a request answered in
        time costs no timer of its own, made and cancelled."""
        timer = self._timer
        if timer is not None:
            if timer.when() <= when:
                return
            timer.cancel()
        self._timer = asyncio.get_running_loop().call_at(when, self._check_head)

    def _check_head(self) -> None:
        self._timer = None
        if self._child is None or not self._queue:
            return
        head = self._queue[0]
        if head.started is None:
            return  # sent again to a new program since; its clock starts there
        if asyncio.get_running_loop().time() + 0.001 < head.started + head.timeout:
            self._arm(head.started + head.timeout)  # the request this timer was set for was answered in time
            return
        self._timed_out(head)

    @staticmethod
    def _settle(pending: _Pending, *, reply: Reply | None = None, error: BaseException | None = None) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
        if pending.future.done():
            return
        if error is not None:
            pending.future.set_exception(error)
        else:  # a reply out of order: the program had the request since it was sent
            started = pending.started if pending.started is not None else pending.sent
            pending.future.set_result((reply, asyncio.get_running_loop().time() - started))

    async def _read(self, child: Child) -> None:
        stdout = child.proc.stdout
        assert stdout is not None
        queue = self._queue
        try:
            while line := await read_line(stdout, self._max_line_bytes):
                reply = self._parse(line)
                if reply is None:
                    if queue and line.strip():
                        queue[0].last = line
                    continue
                reply_id = reply.get("id")
                if type(reply_id) is not int and reply_id is not None:
                    reply_id = ""  # only the number we sent is our id: "1" or 1.0 or true matches nothing
                if queue and (reply_id == queue[0].id or reply_id is None):  # null: the oldest request's
                    head = queue.popleft()
                    self._settle(head, reply=reply)
                    if queue:
                        self._start_clock(queue[0])
                    continue
                for pending in queue:  # a program that answers out of order
                    if pending.id == reply_id:
                        queue.remove(pending)
                        self._settle(pending, reply=reply)
                        break
                else:
                    self._unmatched = line
        except SkillProtocolError as exc:
            await self._replace(child, exc)
            return
        except asyncio.CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - whatever a skill sends, it fails its request, not the reader
            await self._replace(child, SkillProtocolError(f"unreadable output ({type(exc).__name__}: {exc})"))
            return
        if self._child is child:
            await self._replace(child, None)

    async def _watch(self, child: Child) -> None:
        """When the program exits but something it started holds its stdout, end it as if stdout closed."""
        try:
            await child.exited()
            reader = self._reader
            if reader is not None:
                await asyncio.wait((reader,), timeout=LEFTOVER_GRACE)
            if self._child is child:
                await self._replace(child, None)
        except asyncio.CancelledError:
            return

    def _timed_out(self, pending: _Pending) -> None:
        if self._child is None or pending not in self._queue:
            return  # answered in the meantime, or already failed
        loop = asyncio.get_running_loop()
        if pending.started is None or loop.time() + 0.001 < pending.started + pending.timeout:
            return  # a check of an earlier clock (timers may fire a hair early): the request was sent again since
        # Output that came before the deadline may not be read yet (a busy loop): asyncio hands a pipe's data to
        # its reader two loop turns after reading it. Give it those turns, and more while output is pending.
        if pending.late_checks < 2:
            pending.late_checks += 1
            loop.call_soon(self._timed_out, pending)
            return
        if self._child.output_pending() and pending.late_checks < MAX_LATE_CHECKS:
            pending.late_checks += 1
            pending.timer = loop.call_later(0.001, self._timed_out, pending)
            return
        last = f"; last output: {excerpt(pending.last)}" if pending.last else ""
        partial = self._child.unread_output()
        if partial.strip():
            last += f"; an unfinished line (no newline yet): {excerpt(partial)}"
        error = SkillTimeout(f"no reply within {pending.timeout:g}s{last}{self._unmatched_note()}")
        asyncio.get_running_loop().create_task(self._replace(self._child, error, head=pending))

    def _unmatched_note(self) -> str:
        if not self._unmatched:
            return ""
        return f"; a reply matched no request (ids must be the request's number): {excerpt(self._unmatched)}"

    def _detach(self) -> Child | None:
        child, self._child = self._child, None
        reader, self._reader = self._reader, None
        watcher, self._watcher = self._watcher, None
        self._unmatched = b""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._outbox = None  # not written: those requests are in the queue, to be sent again or failed
        for task in (reader, watcher):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        return child

    async def _replace(self, child: Child, error: SkillError | None, head: _Pending | None = None) -> None:
        """The program failed the request at the head of the queue: fail it, stop the program, and send the
        requests it never started to a new one."""
        async with self._lock:
            if self._child is not child:
                return
            if head is not None and head not in self._queue:
                return  # its reply came in the same turn as its timer: it was answered, nothing failed
            unmatched = self._unmatched_note()
            self._detach()
            failed = head if head is not None else (self._queue[0] if self._queue else None)
            if error is None:
                error = await self._ended(child, "before replying")
                if unmatched:
                    error.args = (f"{error.args[0] if error.args else error}{unmatched}",)
            else:
                await child.kill()
            if failed is not None:
                self._queue.remove(failed)
                if failed.started is not None:
                    error.latency_ms = (asyncio.get_running_loop().time() - failed.started) * 1000
                self._settle(failed, error=error)
            waiting = [p for p in self._queue if not p.future.done()]
            self._queue.clear()
            if not waiting:
                return
            try:
                fresh = await self._ensure_child()
            except Exception as exc:  # noqa: BLE001 - a skill that cannot start again, or the harness out of fds
                for pending in waiting:
                    self._settle(pending, error=exc)
                return
            for pending in waiting:
                if pending.timer is not None:
                    pending.timer.cancel()
                pending.started = pending.timer = None
                self._send(fresh, pending)
