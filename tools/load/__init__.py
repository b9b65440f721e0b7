"""`bin/load`: the load-validation tool (issue 15).

Against an isolated, disposable PostgreSQL 16 only, it starts the service (API
processes and a worker fleet) and the code host emulator, drives webhook
intake, lifecycle processing, release runs through to signed results and
completed check runs, and the dashboard listing, under one of six profiles
(faults injected mid-phase), audits the database in SQL after every phase, and
writes an aggregate-only report (mode 0600).

Modules: `settings` (variables, flags, ranges, refusals), `stack` (PostgreSQL,
the emulator, the API and the workers), `traffic` (closed-loop senders and
percentiles), `phases`, `runner` (the readiness workflow's stand-in),
`profiles` (the faults), `audit`, `report`, `cli`.
"""
