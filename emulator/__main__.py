"""``python -m emulator`` (bin/emulator): run the emulator until interrupted."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from emulator.server import start


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="emulator", description="Run the local code host emulator on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port; default)")
    parser.add_argument("--state-dir", help="folder for run workspaces and runner output (default: a temporary folder)")
    parser.add_argument("--runner-command", help="shell command run for each dispatched run (makes 'execute' the default mode)")
    parser.add_argument("--runner-env", action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment for the runner command (repeatable), e.g. SERVICE_URL=http://127.0.0.1:8000")
    parser.add_argument("--run-mode", choices=["manual", "auto", "execute"], help="default run mode of new repositories")
    parser.add_argument("--webhook-url", help="where app webhooks (installation, pull_request, ping...) go")
    parser.add_argument("--webhook-secret", help="HMAC secret of app webhooks")
    parser.add_argument("--marketplace-webhook-url", help="where marketplace_purchase webhooks go")
    parser.add_argument("--marketplace-webhook-secret", help="HMAC secret of marketplace webhooks")
    parser.add_argument("--verbose", action="store_true", help="log each request (method, path, status) to stderr")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    runner_env = {}
    for item in args.runner_env:
        name, sep, value = item.partition("=")
        if not sep:
            print(f"--runner-env wants NAME=VALUE, got {item!r}", file=sys.stderr)
            return 2
        runner_env[name] = value
    emulator = start(
        port=args.port, state_dir=args.state_dir, webhook_url=args.webhook_url, webhook_secret=args.webhook_secret,
        marketplace_webhook_url=args.marketplace_webhook_url, marketplace_webhook_secret=args.marketplace_webhook_secret,
        runner_command=args.runner_command, runner_env=runner_env, run_mode=args.run_mode, verbose=args.verbose,
    )
    # The first stdout line is the URL, so scripts can read it: URL=$(bin/emulator | head -1).
    print(emulator.url, flush=True)
    print(json.dumps({"url": emulator.url, "oidc_issuer": emulator.oidc_issuer, "control": emulator.url + "/_emulator/state"}),
          file=sys.stderr, flush=True)
    done = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: done.set())
    done.wait()
    emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
