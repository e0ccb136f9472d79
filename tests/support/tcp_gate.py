"""A TCP gate: forwards ``127.0.0.1:PORT`` to ``127.0.0.1:UPSTREAM`` until it is killed.

Usage: ``python tcp_gate.py PORT UPSTREAM``. The server fixtures put one in front of each object
store so that a test can make the store unreachable (kill the gate: new connections are refused
and open ones are cut, as when a server dies) and reachable again (start a gate on the same port)
while the server behind it keeps its buckets and objects.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading

_BLOCK = 1 << 20


def _pump(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(_BLOCK):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _serve(client: socket.socket, upstream_port: int) -> None:
    with client:
        try:
            upstream = socket.create_connection(("127.0.0.1", upstream_port))
        except OSError:
            return
        with upstream:
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            back.start()
            _pump(client, upstream)
            back.join()


def main(port: int, upstream_port: int) -> None:
    """Accept connections on ``port`` forever, each forwarded to ``upstream_port``."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    while True:
        client, _ = listener.accept()
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve, args=(client, upstream_port), daemon=True).start()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
