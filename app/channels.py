"""The NOTIFY channels, named once: the Python that LISTENs and NOTIFYs uses
these constants, and sql/functions/queue.sql.j2 is rendered with them
(`channels.<NAME>`). A NOTIFY is only a hint that work may be waiting; the
poll is the truth (workers/queue_worker.py). tests/sql/test_channels.py fails
when a function body notifies a channel not named here."""
from __future__ import annotations

#: A delivery stored, or a lifecycle job made due: the lifecycle worker.
LIFECYCLE_JOBS = "lifecycle_jobs"
#: Outbox work (check runs, dispatches, comments) made due: the outbox worker.
OUTBOX = "outbox_items"
#: Reconciliation work made due (an operator's replay): the reconciliation queue.
RECONCILIATION = "reconciliation_items"
#: Supply work made due: the supply worker.
SUPPLY = "boardready_supply"
#: A schedule released: the schedules loop.
SCHEDULES = "schedules"
#: An erasure that became due (an account canceled, a legal hold released): the retention sweep now.
RETENTION_SWEEP = "retention_sweep"

ALL = (LIFECYCLE_JOBS, OUTBOX, RECONCILIATION, SUPPLY, SCHEDULES, RETENTION_SWEEP)
