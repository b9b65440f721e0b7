"""The code host's REST API as the service uses it: app authentication,
installation tokens, and the calls the outbox makes, each outcome classified."""
