"""boardready's KiCad readiness checker: parse a project, judge it, emit a run result."""

TOOL_NAME = "boardready-checker"
TOOL_VERSION = "0.7.0"   # the boardready-checker distribution's version (packaging/checker)
