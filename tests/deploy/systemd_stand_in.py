"""`systemctl` for tests/deploy/test_deploy_guide.py on a machine where
systemd is not the init: runs the units the guide copied into $UNITS the way
systemd would (Requires= first, EnvironmentFile= read as root, then the
command line as User= with runuser, oneshot units to completion,
RemainAfterExit=, StateDirectory=/RuntimeDirectory= made for the user), with
/opt, /etc, /var/lib and /run under $PREFIX. State (pids, logs) lives in
$SYSTEMD_STAND_IN_STATE. Drop-ins ($UNITS/<unit>.d/*.conf) add settings, as
an operator's `systemctl edit` would."""
from __future__ import annotations

import os
import pwd
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

PREFIX = os.environ.get("PREFIX", "")
UNITS = Path(os.environ["UNITS"])
STATE = Path(os.environ["SYSTEMD_STAND_IN_STATE"])
SERVICE_USER = os.environ["SERVICE_USER"]
MAPPED = ("/opt/boardready", "/etc/boardready", "/var/lib/boardready", "/run/boardready")


def mapped(value: str) -> str:
    for path in MAPPED:
        value = value.replace(path, PREFIX + path)
    return value


def settings(name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    files = [UNITS / name] + sorted((UNITS / f"{name}.d").glob("*.conf"))
    for file in files:
        if not file.exists():
            continue
        for line in file.read_text().splitlines():
            if "=" in line and not line.lstrip().startswith(("#", "[")):
                key, _, value = line.partition("=")
                found.setdefault(key.strip(), []).append(mapped(value.strip()))
    if not found:
        raise SystemExit(f"Unit {name} not found.")
    return found


def environment(unit: dict[str, list[str]]) -> dict[str, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    for path in unit.get("EnvironmentFile", []):
        optional = path.startswith("-")
        path = path.lstrip("-")
        if optional and not Path(path).exists():
            continue
        for line in Path(path).read_text().splitlines():     # read as root, as systemd does
            if "=" in line and not line.lstrip().startswith("#"):
                key, _, value = line.partition("=")
                env[key.strip()] = value.strip().strip('"')
    for assignment in unit.get("Environment", []):
        key, _, value = assignment.partition("=")
        env[key] = value
    return env


def user_of(unit) -> str:
    user = unit.get("User", ["root"])[-1]
    return SERVICE_USER if user == "boardready" else user


def make_directories(unit, user: str) -> None:
    account = pwd.getpwnam(user)
    for key, root, mode_key in (("StateDirectory", "/var/lib", "StateDirectoryMode"),
                                ("RuntimeDirectory", "/run", "RuntimeDirectoryMode")):
        for name in unit.get(key, []):
            path = Path(PREFIX + root) / name
            path.mkdir(parents=True, exist_ok=True)
            for part in [path, *[p for p in path.parents if str(p).startswith(PREFIX + root + "/")]]:
                os.chown(part, account.pw_uid, account.pw_gid)
            path.chmod(int(unit.get(mode_key, ["0755"])[-1], 8))


def active(name: str) -> bool:
    pid_file, done_file = STATE / f"{name}.pid", STATE / f"{name}.active"
    if done_file.exists():
        return True
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text()), 0)
            return True
        except OSError:
            pid_file.unlink()
    return False


def start(name: str) -> None:
    if name.endswith(".timer") or active(name):
        return
    unit = settings(name)
    for required in " ".join(unit.get("Requires", [])).split():
        start(required)
    user = user_of(unit)
    make_directories(unit, user)
    argv = shlex.split(unit["ExecStart"][-1].replace("%%", "%"))
    command = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", user, "--", *argv] if user != "root" else argv
    log = (STATE / f"{name}.log").open("a")
    cwd = unit.get("WorkingDirectory", ["/"])[-1]
    env = environment(unit)
    if unit.get("Type", ["simple"])[-1] == "oneshot":
        done = subprocess.run(command, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            sys.stderr.write(f"Job for {name} failed (status {done.returncode}); see {STATE / (name + '.log')}\n")
            raise SystemExit(1)
        if unit.get("RemainAfterExit", ["no"])[-1] == "yes":
            (STATE / f"{name}.active").write_text("")
        return
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    (STATE / f"{name}.pid").write_text(str(process.pid))


def stop(name: str) -> None:
    (STATE / f"{name}.active").unlink(missing_ok=True)
    pid_file = STATE / f"{name}.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        pass
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except OSError:
            break
        time.sleep(0.2)
    else:
        os.killpg(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)


def dependants(name: str) -> list[str]:
    return [unit.name for unit in sorted(UNITS.glob("*.service"))
            if name in " ".join(settings(unit.name).get("Requires", [])).split() and active(unit.name)]


def main(argv: list[str]) -> None:
    STATE.mkdir(parents=True, exist_ok=True)
    args = [a for a in argv if not a.startswith("-")]
    verb, names = args[0], [n if "." in n else n + ".service" for n in args[1:]]
    if verb == "daemon-reload":
        return
    for name in names:
        if verb in ("start", "enable") and ("--now" in argv or verb == "start"):
            start(name)
        elif verb == "stop":
            stop(name)
        elif verb == "restart":
            again = dependants(name)     # systemd restarts what Requires= it
            for unit in [*again, name]:
                stop(unit)
            start(name)
            for unit in again:
                start(unit)
        elif verb == "is-active":
            raise SystemExit(0 if active(name) else 3)


if __name__ == "__main__":
    main(sys.argv[1:])
