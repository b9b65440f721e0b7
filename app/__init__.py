"""boardready service: configuration, database access and the HTTP API (app.web)."""
SERVICE_NAME = "boardready"
