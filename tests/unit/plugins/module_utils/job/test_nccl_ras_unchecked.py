# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL RAS that answers over TLS, or refuses the client, while the job runs: "could not check the job",
never "no job" and never healthy. Real sockets on 127.0.0.1 (a real TLS server with a throwaway key)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import ssl
import subprocess
import threading
import time

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_job_evidence as ev
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_job_evidence import (
    _params, fake_proc)


@pytest.fixture
def server(tmp_path):
    """server(kind) listens on a free loopback port: "tls" speaks TLS only, "reset" accepts and closes at once."""
    made = []

    def start(kind):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        context = None
        if kind == "tls":
            key, cert = str(tmp_path / "key.pem"), str(tmp_path / "cert.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                            "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
        stop = threading.Event()

        def serve():
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _addr = listener.accept()
                except socket.timeout:
                    continue
                if context is not None:
                    try:
                        context.wrap_socket(conn, server_side=True)  # plain text in: TLS sends its alert, fails
                    except (ssl.SSLError, OSError):
                        pass
                conn.close()
        worker = threading.Thread(target=serve)
        worker.daemon = True
        worker.start()
        made.append((stop, worker, listener))
        return listener.getsockname()[1]
    yield start
    for stop, worker, listener in made:
        stop.set()
        worker.join(5)
        listener.close()


@pytest.mark.parametrize("kind", ["tls", "reset"])
def test_ras_over_tls_or_a_refusing_peer_is_could_not_check(server, kind):
    port = server(kind)
    with pytest.raises(nccl_ras.RasError) as caught:
        nccl_ras.status(port=port, timeout=10.0)
    assert not isinstance(caught.value, nccl_ras.NoRas)
    assert "\n" not in str(caught.value) and "127.0.0.1:%d" % port in str(caught.value)


def _collect(root, ask):
    fake_proc(root, 4000, {"SLURM_JOB_ID": "4242", "RANK": "0", "LOCAL_RANK": "0"})
    bundle = ev.Bundle(str(root / "ev"), 1 << 20)
    return ev.collect(_params(1, job="4242", journalctl=None, units=[]), lambda argv, timeout=None: (1, "", "no"),
                      bundle, ask, time.monotonic, time.sleep, root=str(root))


@pytest.mark.parametrize("kind", ["tls", "refused"])
def test_evidence_for_a_job_that_runs_here_is_never_no_job_when_ras_cannot_be_read(server, tmp_path, kind):
    port = server("tls") if kind == "tls" else 1

    def ask(**kw):
        return nccl_ras.status(**dict(kw, port=port))
    result = _collect(tmp_path, ask)
    assert result["ras"]["state"] == "unknown", result["ras"]
    assert [r["pid"] for r in result["ranks"]] == [4000]
    could_not = [f for f in result["findings"] if f["cause"].startswith("could not check the job through NCCL RAS")]
    assert len(could_not) == 1 and could_not[0]["severity"] == "warn"
    assert "1 process of the job runs here" in could_not[0]["cause"]


def test_no_ras_and_no_process_of_the_job_is_still_no_job(tmp_path):
    def refused(**kw):
        raise nccl_ras.NoRas("no NCCL RAS service at 127.0.0.1:1 (Connection refused)")
    bundle = ev.Bundle(str(tmp_path / "ev"), 1 << 20)
    result = ev.collect(_params(1, job="4242", journalctl=None, units=[]), lambda argv, timeout=None: (1, "", "no"),
                        bundle, refused, time.monotonic, time.sleep, root=str(tmp_path))
    assert result["ras"]["state"] == "none" and result["findings"] == []
