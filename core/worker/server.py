"""The worker server: a warm process that forks one fresh worker per job.

    python -m agentdiff_worker.server SOCKET_PATH

It imports google-adk and runs a tiny agent once (`warm`), then listens on a Unix socket. For each
connection it reads a batch of jobs and forks a keeper, which forks the worker: the worker runs them
and writes each result back on the same connection. The keeper (the worker's parent, leading the
batch's process group) means an agent that kills its parent ends only its own batch. The server itself stays single-threaded (forking from threads is unsafe), reaps
its children, and tells each client how its worker ended, so a crash reads as "killed by SIGSEGV"
rather than silence. It exits when its parent does.

Frames on the connection are a 4-byte big-endian length and a JSON object:
client → server `{"protocol": PROTOCOL, "jobs": […], "timeout": seconds, "memory_mb": limit}`; server → client
`{"pid": N}` (or `{"error": why}`), then the worker's `{"index": i, "result": …}` for each job as it finishes
(missing ones if it died), `{"failure": why}` if the worker itself failed, then `{"exit": code}`
(negative: the signal). The server's first line on
stdout is `ready {"protocol": PROTOCOL}`.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import sys
import tempfile
from typing import Any, Optional

_HEADER = struct.Struct(">I")
#: The version of the messages above: bumped whenever they change, so both ends can tell.
PROTOCOL = 1


#: A socket's path must fit in `sun_path` (108 bytes with its NUL on Linux, 104 on macOS). One that
#: does not (a deep TMPDIR, say) is reached through a descriptor of its folder: `/proc/self/fd/N/name`.
SUN_PATH_MAX = 100


def reachable(path: str) -> tuple[str, Optional[int]]:
    """A path `bind` and `connect` accept for the socket at `path`, and the folder's descriptor that
    path goes through (None when `path` itself fits), which must stay open while the path is used."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX or not os.path.isdir("/proc/self/fd"):
        return path, None
    folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    return f"/proc/self/fd/{folder}/{os.path.basename(path)}", folder


def send_frame(sock: socket.socket, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, size: int) -> Optional[bytes]:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket) -> Optional[dict[str, Any]]:
    header = _recv_exact(sock, _HEADER.size)
    if header is None:
        return None
    body = _recv_exact(sock, _HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def _keeper(conn: socket.socket, message: dict[str, Any]) -> None:
    """Between the server and a worker: the worker's parent, so an agent that kills its parent
    (`os.kill(os.getppid(), …)`) ends only its own batch, never the server and the other batches in
    flight. It leads the batch's process group (the pool's timeout kills the group), waits for the
    worker and ends as it ended."""
    code = 70
    try:
        os.setsid()  # its own process group, the worker's too: whatever the agent starts is stopped with it
        _die_with_parent()
        worker = os.fork()
        if worker == 0:
            _child(conn, message)
        conn.close()  # the worker answers on it
        _, status = os.waitpid(worker, 0)
        if os.WIFSIGNALED(status):  # end by the same signal, so the server says "killed by SIGSEGV"
            try:
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            except (OSError, ValueError):  # SIGKILL and SIGSTOP keep their default anyway
                pass
            os.kill(os.getpid(), os.WTERMSIG(status))
        code = os.WEXITSTATUS(status)
    finally:
        os._exit(code)


def _child(conn: socket.socket, message: dict[str, Any]) -> None:
    """In the forked worker: run the batch, answer each job as it finishes, end every process the
    agent left (even one that daemonised itself), and leave without running the server's cleanup."""
    code = 0
    try:
        _die_with_parent()  # with its keeper, whatever kills it
        _adopt_orphans()  # a process the agent daemonises (fork, setsid, fork) becomes ours, not init's
        limit = message.get("memory_mb")
        if limit:  # a runaway agent gets MemoryError instead of taking the machine down
            import resource

            resource.setrlimit(resource.RLIMIT_DATA, (int(limit) * 1024 * 1024, int(limit) * 1024 * 1024))
        log = tempfile.TemporaryFile()
        os.dup2(log.fileno(), 1)  # what the agent prints must not reach the terminal (or the TUI)
        os.dup2(log.fileno(), 2)
        from .child import execute_batch
        from .jobs import Job

        def send(index: int, out: Any) -> None:
            log.flush()
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(0, size - 4000))
            out.log = log.read().decode("utf-8", "replace")
            log.seek(0, os.SEEK_END)
            body = b'{"index": %d, "result": ' % index + out.model_dump_json().encode() + b"}"
            conn.sendall(_HEADER.pack(len(body)) + body)

        def abort() -> None:  # a run blocks the event loop past its timeout: end the batch now
            _end_children()
            os._exit(0)

        def moved(indices: list[int]) -> None:  # a run blocks the loop: the others go back to be run elsewhere
            body = json.dumps({"moved": indices}).encode()
            conn.sendall(_HEADER.pack(len(body)) + body)

        execute_batch([Job.model_validate(job) for job in message["jobs"]], message.get("timeout"), send, abort, moved)
    except BaseException as exc:  # the worker itself failed (out of memory sending a result, say): say why
        code = 70
        try:
            send_frame(conn, {"failure": f"{type(exc).__name__}: {exc}"[:500]})
        except BaseException:
            pass
    finally:
        try:
            _end_children()
            conn.close()
        finally:
            os._exit(code)


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when the server dies, whatever kills the server."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _adopt_orphans() -> None:
    """Linux: become the reaper of every descendant that loses its parent (PR_SET_CHILD_SUBREAPER)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc; none where there is no /proc)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _end_children(keep: frozenset[int] = frozenset()) -> None:
    """Kill this process's children but `keep` (adopted orphans included), and reap them; repeated
    while killing one hands its own children to us."""
    for _ in range(20):
        children = [pid for pid in children_of(os.getpid()) if pid not in keep]
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _stop_all(waiting: dict[int, socket.socket]) -> None:
    for pid in waiting:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    _end_children()


def _warm_judges() -> None:
    """ADK's evaluators (about 3 s of imports), loaded here once, on the first judge job, so every
    judge worker forked after has them; projects without judged metrics never pay for them."""
    try:
        import google.adk.evaluation.local_eval_service  # noqa: F401
        import google.adk.evaluation.metric_evaluator_registry  # noqa: F401
    except Exception:  # the worker says why when it imports them itself
        pass


def _freeze() -> None:
    """Move everything imported so far out of the collector's sight (`gc.freeze`): a forked worker's
    collections then walk only what its own run made, not ADK's whole module graph, and so leave the
    pages it shares with this server unwritten. The modules loaded so far are noted too (`child.prime`): a
    worker's record of what its runs imported reads only the modules loaded after the fork."""
    import gc

    from . import child

    child.prime()
    gc.collect()
    gc.freeze()


def serve(path: str) -> None:
    from . import warm  # noqa: F401  (the heavy imports and ADK's lazy set-up, once)

    _freeze()

    _adopt_orphans()  # what escapes a killed worker comes here, and is ended

    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    address, folder = reachable(path)
    listener.bind(address)
    if folder is not None:
        os.close(folder)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    waiting: dict[int, socket.socket] = {}  # worker pid → its client connection

    def stop(_signum: int, _frame: Any) -> None:  # the pool closes: its workers go with the server
        _stop_all(waiting)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the whole process group: the app decides
    print("ready " + json.dumps({"protocol": PROTOCOL}), flush=True)
    while True:
        for key, _ in selector.select(timeout=0.05):
            conn, _ = listener.accept()
            conn.settimeout(30)  # a client that connects and sends nothing must not hold the server up
            try:
                message = recv_frame(conn)
            except (OSError, ValueError):
                message = None
            conn.settimeout(None)
            if not message or "jobs" not in message:
                conn.close()
                continue
            if message.get("protocol") != PROTOCOL:
                send_frame(conn, {"error": f"the worker speaks protocol {PROTOCOL}, the app {message.get('protocol')}: "
                                           "the app and its worker come from different agentdiff versions"})
                conn.close()
                continue
            if any(job.get("judge") for job in message["jobs"]):
                _warm_judges()
                _freeze()
            pid = os.fork()
            if pid == 0:
                selector.close()
                listener.close()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _keeper(conn, message)
            send_frame(conn, {"pid": pid})
            waiting[pid] = conn
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            try:  # processes the agent left behind go with it
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            conn = waiting.pop(pid, None)
            if conn is not None:  # a worker ended: anything it left that came to us goes too
                _end_children(keep=frozenset(waiting))
            if conn is not None:
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                try:
                    send_frame(conn, {"exit": code})
                except OSError:
                    pass
                conn.close()
        if os.getppid() != parent:  # the parent is gone: so are we, and every worker
            _stop_all(waiting)
            return


if __name__ == "__main__":
    serve(sys.argv[1])
