"""test_tls.py -- clients over TLS on tls-port: redis-py with ssl and
redis-cli --tls, client certificates as tls-auth-clients says, big values
and pipelines through TLS records, certificates changed by CONFIG SET for new
connections, and garbage on the TLS port. The certificates are made here
with the openssl command line (a throwaway CA)."""
import atexit
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time

import redis

from harness import SERVER, Server, free_port, main, test


def make_certs(d):
    def run(*args):
        subprocess.run(["openssl"] + list(args), cwd=d, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
        "-days", "2", "-subj", "/CN=strata-test-ca")
    for name in ("server", "client", "server2"):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
            name + ".csr", "-subj", "/CN=" + name)
        run("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", name + ".crt", "-days", "2")
    return {n: os.path.join(d, n) for n in os.listdir(d)}


_certs = {}  # made once for every test of this file (RSA keys take a while)


def certs():
    if not _certs:
        d = tempfile.mkdtemp(prefix="strata-tls-")
        atexit.register(shutil.rmtree, d, True)
        _certs.update(make_certs(d))
    return _certs


class TlsServer:
    def __init__(self, **settings):
        self.c = certs()
        self.tls_port = free_port()
        self.srv = Server(tls_port=self.tls_port, tls_cert_file=self.c["server.crt"],
                          tls_key_file=self.c["server.key"], tls_ca_cert_file=self.c["ca.crt"],
                          **settings).start()

    def client(self, cert=True, **kw):
        args = dict(host="127.0.0.1", port=self.tls_port, ssl=True,
                    ssl_ca_certs=self.c["ca.crt"], ssl_check_hostname=False, socket_timeout=10)
        if cert:
            args.update(ssl_certfile=self.c["client.crt"], ssl_keyfile=self.c["client.key"])
        args.update(kw)
        return redis.Redis(**args)

    def close(self):
        self.srv.cleanup()


@test
def redis_py_over_tls_with_a_client_certificate():
    t = TlsServer()
    try:
        c = t.client()
        assert c.set("k", "v") and c.get("k") == b"v"
        big = os.urandom(3 * 1024 * 1024)  # many TLS records each way
        assert c.set("big", big) and c.get("big") == big
        p = c.pipeline(transaction=False)
        for i in range(2000):
            p.set("p%d" % i, "x" * 100)
            p.get("p%d" % i)
        res = p.execute()
        assert res[1::2] == [b"x" * 100] * 2000
        assert t.srv.client().get("k") == b"v"  # the plain port serves the same data
    finally:
        t.close()


@test
def client_certificate_required_unless_tls_auth_clients_says_otherwise():
    t = TlsServer()
    try:
        try:
            t.client(cert=False).ping()
            assert False, "a client without a certificate was served"
        except (redis.ConnectionError, ssl.SSLError, OSError):
            pass
        assert t.srv.client().config_set("tls-auth-clients", "no")
        assert t.client(cert=False).ping()
        assert t.srv.client().config_set("tls-auth-clients", "optional")
        assert t.client(cert=False).ping() and t.client().ping()
    finally:
        t.close()


@test
def redis_cli_tls():
    t = TlsServer()
    try:
        out = subprocess.run(["redis-cli", "-p", str(t.tls_port), "--tls", "--cacert", t.c["ca.crt"],
                              "--cert", t.c["client.crt"], "--key", t.c["client.key"],
                              "SET", "a", "1"], capture_output=True, timeout=20)
        assert out.stdout.strip() == b"OK", out
        out = subprocess.run(["redis-cli", "-p", str(t.tls_port), "--tls", "--cacert", t.c["ca.crt"],
                              "--cert", t.c["client.crt"], "--key", t.c["client.key"],
                              "GET", "a"], capture_output=True, timeout=20)
        assert out.stdout.strip() == b"1", out
    finally:
        t.close()


@test
def new_certificate_by_config_set_serves_new_connections():
    t = TlsServer()
    try:
        old = t.client()
        assert old.ping()
        admin = t.srv.client()
        assert admin.config_set("tls-cert-file", t.c["server2.crt"])
        assert admin.config_set("tls-key-file", t.c["server2.key"])
        ctx = ssl.create_default_context(cafile=t.c["ca.crt"])
        ctx.check_hostname = False
        ctx.load_cert_chain(t.c["client.crt"], t.c["client.key"])
        with socket.create_connection(("127.0.0.1", t.tls_port), timeout=10) as raw:
            with ctx.wrap_socket(raw) as s:
                cn = dict(x[0] for x in s.getpeercert()["subject"])["commonName"]
                assert cn == "server2", cn
        assert old.ping()  # the connection made before goes on
    finally:
        t.close()


@test
def plaintext_on_the_tls_port_is_dropped():
    t = TlsServer()
    try:
        with socket.create_connection(("127.0.0.1", t.tls_port), timeout=10) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            try:
                data = s.recv(100)
            except ConnectionResetError:
                data = b""
            assert not data.startswith(b"+PONG"), data
        assert t.client().ping()
    finally:
        t.close()


@test
def tls_port_without_certificate_refuses_to_start():
    srv = Server(tls_port=free_port())
    try:
        try:
            srv.start(timeout=10)
            assert False, "started without tls-cert-file"
        except RuntimeError as e:
            assert "tls-cert-file" in str(e), e
    finally:
        srv.cleanup()


@test
def port_0_serves_tls_only():
    """As Redis: port 0 opens no plaintext listener; with tls-port the server
    serves TLS alone, and with neither it refuses to start."""
    c = certs()
    d = tempfile.mkdtemp(prefix="strata-tls0-")
    tls_port = free_port()
    base = [SERVER, "--dir", os.path.join(d, "data"), "--port", "0"]
    p = subprocess.Popen(base + ["--tls-port", str(tls_port), "--tls-cert-file", c["server.crt"],
                                 "--tls-key-file", c["server.key"], "--tls-ca-cert-file", c["ca.crt"],
                                 "--tls-auth-clients", "no"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        cl = redis.Redis(host="127.0.0.1", port=tls_port, ssl=True, ssl_ca_certs=c["ca.crt"],
                         ssl_check_hostname=False, socket_timeout=5)
        for _ in range(200):
            try:
                assert cl.ping()
                break
            except (redis.ConnectionError, OSError):
                time.sleep(0.05)
        assert cl.set("k", "v") and cl.get("k") == b"v"
        out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout
        ports = [l.split()[3].rsplit(":", 1)[1] for l in out.splitlines() if "pid=%d," % p.pid in l]
        assert ports == [str(tls_port)], ports
    finally:
        p.terminate()
        p.wait(20)
    r = subprocess.run(base + ["--logfile", ""], capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    shutil.rmtree(d, True)


if __name__ == "__main__":
    main()
