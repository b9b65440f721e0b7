"""The gunicorn worker class that serves a WSGI application through the front.

gunicorn keeps what it is good at (the master, `--workers`, heartbeats,
graceful restarts); each worker process runs one uvicorn server on uvloop with
the deadline protocol and the buffering bridge around the application gunicorn
loaded. `--threads` sizes the bridge's thread pool, `--keep-alive` the idle
time between requests on a connection, `--graceful-timeout` the shutdown.
SERVICE_REQUEST_READ_TIMEOUT_MS is read from the environment like every
other setting (app/config.py).
"""
from __future__ import annotations

import asyncio
import os
import signal
import sys

from gunicorn.arbiter import Arbiter
from gunicorn.workers.base import Worker
from uvicorn.config import Config
from uvicorn.server import Server

from app import config as config_module
from app import telemetry
from app.front.bridge import BufferedWsgi
from app.front.protocol import with_deadline
from app.jsonlog import capture_library_logs, log


class FrontWorker(Worker):
    def init_signals(self) -> None:
        # uvicorn's server installs its own SIGTERM/SIGINT handlers while it
        # serves (a graceful shutdown) and raises the signal again once done;
        # a no-op here lets the process then exit 0 instead of dying of it.
        for sig in self.SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: None)
        signal.signal(signal.SIGUSR1, self.handle_usr1)
        signal.siginterrupt(signal.SIGUSR1, False)

    def run(self) -> None:
        capture_library_logs()
        settings = config_module.load()
        config = Config(
            app=BufferedWsgi(self.wsgi, threads=self.cfg.threads),
            interface="asgi3",
            loop="uvloop",
            http=with_deadline(settings.request_read_timeout_ms / 1000),
            ws="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,             # no banner
            proxy_headers=False,             # client addresses are the service's business (SERVICE_TRUSTED_PROXIES)
            timeout_keep_alive=self.cfg.keepalive,
            timeout_graceful_shutdown=self.cfg.graceful_timeout,
            timeout_notify=self.timeout,
            callback_notify=self._notify,
            limit_max_requests=self.max_requests if self.cfg.max_requests else None,
        )
        server = Server(config=config)
        with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
            runner.run(self._serve(server))
        telemetry.process_exited(os.getpid())   # its pool gauges no longer count
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)

    async def _serve(self, server: Server) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGQUIT, server.handle_exit, signal.SIGQUIT, None)
        watch = asyncio.ensure_future(self._exit_when_orphaned(server))
        try:
            await server.serve(sockets=self.sockets)
        finally:
            watch.cancel()

    async def _exit_when_orphaned(self, server: Server) -> None:
        """Leave when the master is gone (killed with SIGKILL, say): gunicorn's
        own workers check their parent in their loop, uvicorn's server does not,
        and an orphan would keep the port and answer without its master."""
        while not server.should_exit:
            if os.getppid() != self.ppid:
                log("serve.master_gone", level="error", pid=os.getpid())
                server.should_exit = True
                return
            await asyncio.sleep(1)

    async def _notify(self) -> None:
        self.notify()
