"""The systemd units as shipped: the API and the workers count into one
metrics folder (so the workers' code host calls reach /metrics, and the
BoardreadyCodeHost* alerts can fire), and the migrate unit runs once per
start of its dependants, not at every restart. The end-to-end half (the
counter on /metrics through the proxy) is in test_deploy_guide.py."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def unit(name: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in (ROOT / "deploy" / name).read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def environment(settings: dict[str, list[str]]) -> dict[str, str]:
    return dict(value.split("=", 1) for value in settings.get("Environment", []))


def test_the_api_and_the_workers_share_the_metrics_folder():
    api, worker = unit("boardready-api.service"), unit("boardready-worker.service")
    folder = environment(api)["PROMETHEUS_MULTIPROC_DIR"]
    assert environment(worker)["PROMETHEUS_MULTIPROC_DIR"] == folder
    for settings in (api, worker):
        # systemd makes it (as the unit's user) and keeps it while the other unit runs.
        assert "/run/" + settings["RuntimeDirectory"][0] == folder
        assert settings["RuntimeDirectoryPreserve"] == ["yes"]


def test_migrate_runs_once_per_start_of_its_dependants():
    assert unit("boardready-migrate.service")["RemainAfterExit"] == ["yes"]
    for name in ("boardready-api.service", "boardready-worker.service"):
        settings = unit(name)
        assert "boardready-migrate.service" in settings["Requires"][0].split()
        assert "boardready-migrate.service" in settings["After"][0].split()
        assert "boardready-migrate.service" not in " ".join(settings.get("Wants", []))


def test_the_migration_role_s_file_is_read_by_systemd_not_given_to_the_service():
    # EnvironmentFile= is read by systemd (root) before it drops to User=: migrate.env stays 0600 root.
    for name in ("boardready-migrate.service", "boardready-backup.service"):
        assert unit(name)["EnvironmentFile"] == ["/etc/boardready/migrate.env"]
    for name in ("boardready-api.service", "boardready-worker.service"):
        assert "/etc/boardready/migrate.env" not in unit(name)["EnvironmentFile"]
