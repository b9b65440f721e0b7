"""The shipped proxy configurations load on the versions Debian bookworm ships
(nginx 1.22, caddy 2.6) and overwrite X-Forwarded-For with the peer's address,
so that a client cannot choose the key the service's failure limiters count it
under (app/web/client_address.py). nginx runs for real here, in front of a
backend that keys each request exactly as the service does."""
from __future__ import annotations

import json
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.web.client_address import client_key

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = [__import__("ipaddress").ip_network("127.0.0.0/8")]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _KeyingBackend(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"key": client_key(self.client_address[0], self.headers.get("X-Forwarded-For"), LOOPBACK),
                           "forwarded_for": self.headers.get("X-Forwarded-For")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _test_certificate(folder: Path, ip_address: str | None = None) -> tuple[Path, Path]:
    cert, key = folder / "fullchain.pem", folder / "privkey.pem"
    names = ["-addext", f"subjectAltName=IP:{ip_address}"] if ip_address else []
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=boardready.example.com", *names, "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


def nginx_site(folder: Path, https_port: int, http_port: int, upstream_port: int,
               ip_address: str | None = None) -> Path:
    """deploy/nginx.conf as shipped, with the test's certificate, ports and upstream
    in place of the example's, inside the smallest main configuration."""
    cert, key = _test_certificate(folder, ip_address)
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    site = site.replace("/etc/letsencrypt/live/boardready.example.com/fullchain.pem", str(cert))
    site = site.replace("/etc/letsencrypt/live/boardready.example.com/privkey.pem", str(key))
    site = re.sub(r"listen 443 ", f"listen 127.0.0.1:{https_port} ", site)
    site = re.sub(r"listen \[::\]:443 [^;]*;", "", site)
    site = re.sub(r"listen 80;", f"listen 127.0.0.1:{http_port};", site)
    site = re.sub(r"listen \[::\]:80;", "", site)
    site = site.replace("proxy_pass http://127.0.0.1:8000;", f"proxy_pass http://127.0.0.1:{upstream_port};")
    assert str(cert) in site and f":{https_port} ssl" in site and f":{upstream_port};" in site
    (folder / "site.conf").write_text(site)
    main = folder / "nginx.conf"
    main.write_text(f"""daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    include {folder}/site.conf;
}}
""")
    return main


needs_nginx = pytest.mark.skipif(not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists(),
                                 reason="nginx is not installed (apt-get install nginx-light)")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


@needs_nginx
def test_nginx_loads_the_config_and_a_spoofed_forwarded_for_changes_nothing(tmp_path):
    backend = ThreadingHTTPServer(("127.0.0.1", 0), _KeyingBackend)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    https_port, http_port = _free_port(), _free_port()
    main = nginx_site(tmp_path, https_port, http_port, backend.server_address[1])
    checked = subprocess.run([NGINX, "-t", "-c", str(main), "-p", str(tmp_path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    proxy = subprocess.Popen([NGINX, "-c", str(main), "-p", str(tmp_path)], stderr=subprocess.PIPE, text=True)
    try:
        context = ssl.create_default_context(cafile=str(tmp_path / "fullchain.pem"))
        context.check_hostname = False

        def key(forwarded_for: str | None) -> dict:
            request = urllib.request.Request(f"https://127.0.0.1:{https_port}/",
                                             headers={"Host": "boardready.example.com"})
            if forwarded_for is not None:
                request.add_header("X-Forwarded-For", forwarded_for)
            deadline = time.monotonic() + 30
            while True:
                try:
                    return json.load(urllib.request.urlopen(request, context=context, timeout=5))
                except OSError:
                    if proxy.poll() is not None or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

        honest = key(None)
        assert honest["key"] == "127.0.0.1" and honest["forwarded_for"] == "127.0.0.1"
        for spoof in ("203.0.113.7", "203.0.113.7, 198.51.100.1", "garbage"):
            assert key(spoof) == honest, spoof
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)
        backend.shutdown()


@pytest.mark.skipif(not shutil.which("caddy"), reason="caddy is not installed (apt-get install caddy)")
def test_caddy_runs_the_caddyfile_and_a_spoofed_forwarded_for_changes_nothing(tmp_path):
    """deploy/Caddyfile with the test's address (plain HTTP on a high port: no
    certificate authority to ask) in place of the example's name."""
    backend = ThreadingHTTPServer(("127.0.0.1", 0), _KeyingBackend)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    port = _free_port()
    site = (ROOT / "deploy" / "Caddyfile").read_text()
    site = site.replace("boardready.example.com {", f"{{\n\tadmin off\n}}\n\nhttp://127.0.0.1:{port} {{", 1)
    site = site.replace("reverse_proxy 127.0.0.1:8000", f"reverse_proxy 127.0.0.1:{backend.server_address[1]}")
    (tmp_path / "Caddyfile").write_text(site)
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    proxy = subprocess.Popen(["caddy", "run", "--adapter", "caddyfile", "--config", str(tmp_path / "Caddyfile")],
                             env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / "caddy.log").open("w"))
    try:
        def key(forwarded_for: str | None) -> dict:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/")
            if forwarded_for is not None:
                request.add_header("X-Forwarded-For", forwarded_for)
            deadline = time.monotonic() + 30
            while True:
                try:
                    return json.load(urllib.request.urlopen(request, timeout=5))
                except OSError:
                    if proxy.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError((tmp_path / "caddy.log").read_text()[-2000:]) from None
                    time.sleep(0.2)

        honest = key(None)
        assert honest["key"] == "127.0.0.1" and honest["forwarded_for"] == "127.0.0.1"
        for spoof in ("203.0.113.7", "203.0.113.7, 198.51.100.1", "garbage"):
            assert key(spoof) == honest, spoof
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)
        backend.shutdown()


@pytest.mark.skipif(not shutil.which("caddy"), reason="caddy is not installed (apt-get install caddy)")
def test_caddy_validates_the_caddyfile(tmp_path):
    done = subprocess.run(["caddy", "validate", "--adapter", "caddyfile", "--config",
                           str(ROOT / "deploy" / "Caddyfile")], capture_output=True, text=True, timeout=120,
                          env={"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "header_up X-Forwarded-For {remote_host}" in (ROOT / "deploy" / "Caddyfile").read_text()
