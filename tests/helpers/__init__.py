"""What tests share that is not a fixture (fixtures live in tests/conftest.py):

- paths: the repository, its fixtures folder and the real webhook payloads
- browser: Debian's headless Chromium, offline pages, where screenshots go
- service: the test secrets and configuration, signed deliveries, the service
  served for the emulator, small waiting helpers
- access: accounts, installations, repositories and tokens arranged for a test
- host: the app installed on the code host emulator, and the lifecycle and
  outbox workers run against it
- results: a dispatched release run and the signed result envelopes it takes
- sessions: sessions, decided release runs and a served service for the
  sessions, reviews and run-listing tests
- retention: an account with data in every table erasure and retention touch,
  and a census of those rows
- reconciliation: a driven clock, the reconcile loops built from a
  configuration, and reading items back
- supply: the supply tests' board and BOMs, and the settings that point the
  supply worker at the emulator's provider
- releases: the previous release checked out with `git worktree`
- tcp_proxy: a TCP proxy that can cut the database away
"""
