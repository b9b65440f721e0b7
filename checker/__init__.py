"""boardready's KiCad readiness checker: parse a project, judge it, emit a run result."""

TOOL_NAME = "boardready-checker"
TOOL_VERSION = "0.1.0"
