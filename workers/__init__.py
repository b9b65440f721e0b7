"""Background workers: wake on NOTIFY or poll, claim with a lease, act, report through SQL."""
