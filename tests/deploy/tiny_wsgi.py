"""The smallest WSGI application, served by the service's own server command
in tests/deploy/test_orphaned_workers.py."""


def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]
