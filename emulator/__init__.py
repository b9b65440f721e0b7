"""A local stand-in for the code host: REST subset, OAuth sign-in, OIDC issuer,
simulated workflow runs, webhook sender, fault switches and a request log.

    import emulator
    with emulator.start() as host:
        app = host.register_app()
        ...

Tests and tools (bin/demo) use it; the service never imports it. See docs/emulator.md.
"""
from emulator.control import ControlError
from emulator.server import Emulator, start

__all__ = ["start", "Emulator", "ControlError"]
