"""The HTTP front of the API: an event loop that reads whole requests before a
thread sees them.

Why: under gunicorn's gthread worker a thread parsed the request and read its
body, so a client sending one byte every few seconds held a thread for as long
as it liked, and a few dozen such clients stopped the API. Here one event loop
per process (uvicorn's httptools protocol on uvloop) reads every connection:

- `protocol.DeadlineProtocol` gives reading a request, headers and body, a
  deadline (SERVICE_REQUEST_READ_TIMEOUT_MS; 408 past it) and caps the header
  block, so a slow or idle connection costs a socket and a timer, never a thread;
- `bridge.BufferedWsgi` buffers the body up to the route's cap (413 above it)
  and only then runs the WSGI application in a bounded thread pool, so the
  threads only ever do work that is ready to be done; on routes whose
  credentials travel in headers it first runs the application's
  authentication on the headers alone (`header_phase`), so a refused caller
  never gets its body read;
- `worker.FrontWorker` is the gunicorn worker class that runs both, so gunicorn
  still manages the processes (graceful restarts, heartbeats, `--workers`).

`app.serve.server_command` starts any WSGI application this way.
"""
