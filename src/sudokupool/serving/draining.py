"""Stopping without dropping a connection: what uvicorn's shutdown does not do for a server behind a load
balancer, where clients connect until the very end.

A listening socket the kernel still holds goes on completing handshakes into its accept queue after the
server has stopped accepting; when the last process holding it closes it, every connection in that queue is
reset, and each such client has sent its request for nothing. uvicorn's workers stop accepting at once on
SIGTERM while its supervisor holds the socket until they have exited, so with two workers a client connecting in
that window lost its request (16 clients connecting in a loop: about one each, on every stop). So, on a stop:

1. **No new connection is let in** (:func:`refuse_new_connections`): the listening socket gets a socket filter
   (Linux classic BPF) that drops a segment opening a connection (SYN without ACK) and passes the rest, so the
   handshakes already under way complete and the connections already open carry on. A client whose SYN is
   dropped sends it again about a second later and is then refused (the socket is closed by then): a
   connection refused, which a client or load balancer retries elsewhere, never a request sent and lost. The
   supervisor does it before it signals its workers (:class:`Supervisor`); a single worker, the whole service,
   does it itself (:class:`Server`). Where the kernel refuses the filter (some refuse it to a process without
   privileges: the image's user here) or has none, the steps below still run, and a connection can still be
   queued and then reset in the microseconds between a listener's last ``accept`` and its ``close``.
2. **The accept queue is emptied** (:func:`queued_connections`) after :data:`HANDSHAKE_WAIT`, the listener
   closed at once (the supervisor closes its copy as it signals the workers), and each connection that was in
   the queue served like any other.
3. **A connection between requests is not cut at once** (:meth:`BoundedHttpToolsProtocol.shutdown
   <sudokupool.serving.protocol.BoundedHttpToolsProtocol.shutdown>`): it may read one more request, answered
   with ``connection: close``, for :data:`~sudokupool.serving.protocol.LAST_REQUEST_WAIT` seconds (a new connection
   :data:`~sudokupool.serving.protocol.FIRST_REQUEST_WAIT`).

The supervisor's restart of its workers (SIGHUP) replaces them one by one and filters nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import socket
import struct

from uvicorn import Server as UvicornServer
from uvicorn.supervisors.multiprocess import Multiprocess

#: How long a stop lets handshakes that began before it complete (a round trip on the slowest network between a
#: load balancer and the service, with room) before the accept queue is emptied and the listener closed.
HANDSHAKE_WAIT = 0.02
#: ``SO_ATTACH_FILTER`` (Linux); Python's socket module does not name it.
SO_ATTACH_FILTER = 26

_LOAD_BYTE, _JUMP_IF_SET, _RETURN = 0x30, 0x45, 0x06  # BPF_LD|B|ABS, BPF_JMP|JSET|K, BPF_RET|K
_TCP_FLAGS, _SYN, _ACK = 13, 0x02, 0x10  # the flags byte of a TCP header (the filter reads from the header on)
#: A socket filter on a TCP listener: a segment with ACK passes (handshakes completing, connections open, which
#: inherit the filter); a SYN without it is dropped; anything else passes.
_SYN_DROP = (
    (_LOAD_BYTE, 0, 0, _TCP_FLAGS),
    (_JUMP_IF_SET, 2, 0, _ACK),  # ACK: to "pass"
    (_JUMP_IF_SET, 0, 1, _SYN),  # SYN: to "drop", else "pass"
    (_RETURN, 0, 0, 0),  # drop
    (_RETURN, 0, 0, 0xFFFFFFFF),  # pass, whole
)


class _Instruction(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32))


def refuse_new_connections(sock: socket.socket) -> bool:
    """Let no new connection into the listening ``sock`` (every process's copy of it) from now on, and keep
    those already open or opening; False where the platform has no socket filters (nothing is changed)."""
    program = (_Instruction * len(_SYN_DROP))(*(_Instruction(*step) for step in _SYN_DROP))
    # struct sock_fprog: the count, then a pointer to the instructions (native alignment pads between).
    fprog = struct.pack("HP", len(_SYN_DROP), ctypes.addressof(program))
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    except OSError:
        return False
    return True


def queued_connections(sock: socket.socket) -> list[socket.socket]:
    """The connections the kernel has completed for the listening ``sock`` and nobody has accepted yet, now
    accepted (non-blocking, as asyncio wants them)."""
    accepted: list[socket.socket] = []
    while True:
        try:
            connection, _ = sock.accept()
        except OSError:  # none left (BlockingIOError), the listener is gone, or no descriptor is left
            return accepted
        connection.setblocking(False)
        accepted.append(connection)


def _listening(server: asyncio.AbstractServer) -> list[socket.socket]:
    """A server's listening sockets as socket objects of their own (duplicates of its descriptors)."""
    sockets = getattr(server, "sockets", None) or ()
    return [socket.socket(fileno=socket.dup(listener.fileno())) for listener in sockets]


class Server(UvicornServer):
    """uvicorn's server, which on a stop serves the connections the kernel has queued before it closes its
    listeners (and, as the only process of the service, first lets no new ones in)."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        servers = list(getattr(self, "servers", ()))
        listeners = [listener for server in servers for listener in _listening(server)]
        if listeners:
            if self.config.workers == 1:
                for listener in listeners:
                    refuse_new_connections(listener)
            # The loop still accepts meanwhile: handshakes under way complete and are served.
            await asyncio.sleep(HANDSHAKE_WAIT)
        # What the kernel has queued is accepted, and the listeners closed at once after (no await between), so
        # that without a socket filter the time in which a connection can still be queued and then reset is as
        # short as it can be.
        queued = [connection for listener in listeners for connection in queued_connections(listener)]
        for listener in listeners:
            listener.close()
        for server in servers:
            server.close()
        loop = asyncio.get_running_loop()
        for connection in queued:
            await loop.connect_accepted_socket(self._protocol, connection)
        await super().shutdown(sockets)

    def _protocol(self) -> asyncio.Protocol:
        """A connection's protocol, made as uvicorn's startup makes those of the connections it accepts."""
        protocol: asyncio.Protocol = self.config.http_protocol_class(  # type: ignore[call-arg]
            config=self.config, server_state=self.server_state, app_state=self.lifespan.state
        )
        return protocol


class Supervisor(Multiprocess):
    """uvicorn's supervisor of several workers, which on a stop lets no new connection in before it signals
    them (each then serves what its listener has queued, see :class:`Server`)."""

    def terminate_all(self) -> None:
        for listener in self.sockets:
            refuse_new_connections(listener)
            # The workers hold the socket on their own: the last to close it, once it has served its queue, ends it.
            listener.close()
        super().terminate_all()
