"""Fixtures for the emulator's tests: a running emulator and an installed app.

``HostClient`` calls the emulator over real HTTP and checks every answer whose
status the REST description documents against the description's schema, so a
shape drift from the real API fails the test that saw it.
"""
from __future__ import annotations

import pytest

import emulator
from emulator import openapi_check
from tests.emulator.helpers import DESCRIPTION, HostClient, Installed, exchange_token


@pytest.fixture(scope="session")
def description():
    return openapi_check.load_description(str(DESCRIPTION))


@pytest.fixture
def emu():
    host = emulator.start()
    try:
        yield host
    finally:
        host.stop()


@pytest.fixture
def installed(emu, description) -> Installed:
    app = emu.register_app()
    installation = emu.create_installation("acme-boards", account_type="Organization")
    repo = emu.create_repository("acme-boards/widget", installation_id=installation["id"])
    client = HostClient(emu.url, description)
    response = exchange_token(client, emu, installation["id"])
    assert response.status_code == 201, response.text
    client.token = response.json()["token"]
    return Installed(emu, app, installation, repo, client.token, client)
