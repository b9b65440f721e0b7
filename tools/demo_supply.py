"""The demo's supply part (issue 13): the board is watched, and a pull request
that swaps in an obsolete part gets a supply finding on its check run.

The emulator stands in for the component provider (emulator/provider.py);
bin/demo points the supply worker at it. The board's BOM before the pull
request is the first pull request run's (no default-branch run exists in the
demo), so only the swapped part is new.
"""
from __future__ import annotations

from pathlib import Path

import httpx
import psycopg
from psycopg.rows import dict_row

from app import api_tokens, sql_api
from tools import demo_board

REPOSITORY = "acme-hw/blinky-board"
PROJECT_PATH = f"hardware/{demo_board.PROJECT}.kicad_pro"
CURRENT_MPN = "RC0603FR-07330RL"
# A real part number; its supply data is the emulator's, made up for the demo.
OBSOLETE_MPN, OBSOLETE_MAKER = "CRCW0603330RFKEA", "Vishay"


def _admin_token(url: str) -> tuple[int, str]:
    """(repository id, an admin token value) made through the SQL function bin/token uses."""
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        repository_id = conn.execute("SELECT id FROM boardready.repositories WHERE full_name = %s",
                                     (REPOSITORY,)).fetchone()["id"]
        new = api_tokens.generate()
        sql_api.token_create(conn, repository_id=repository_id, name="demo-supply",
                             scopes=["admin"], duration_days=1, token_sha256=new.sha256,
                             token_prefix=new.prefix, created_by="demo")
    return repository_id, new.value


def walkthrough(host, service, url: str, content: Path, wait_for, explain) -> None:
    print("\n== supply tracking: the board is watched; a pull request swaps in an obsolete resistor")
    host.provider.add_part(OBSOLETE_MPN, OBSOLETE_MAKER, "Obsolete (Last Updated: 1 year ago)", [
        {"company": {"name": "Surplus Parts Market"}, "isAuthorized": False,
         "offers": [{"inventoryLevel": 800, "prices": [{"quantity": 1, "price": 0.35, "currency": "USD"}]}]}])
    repository_id, token = _admin_token(url)
    with httpx.Client(base_url=service.base_url, timeout=30,
                      headers={"Authorization": f"Bearer {token}"}) as api:
        watched = api.post(f"/api/v1/repositories/{repository_id}/watched-board", json={"path": PROJECT_PATH})
        print(f"  POST /api/v1/repositories/{repository_id}/watched-board {{\"path\": \"{PROJECT_PATH}\"}} "
              f"-> {watched.status_code} {watched.json().get('outcome') or watched.json().get('code')}")

        def observed():
            parts = api.get(f"/api/v1/repositories/{repository_id}/supply").json().get("parts") or []
            keyed = [p for p in parts if p["partKey"]]
            return keyed if keyed and all(p["observation"] for p in keyed) else None

        for part in wait_for(observed, 30, "the supply worker to look the parts up at the component provider",
                             lambda: "the watched board's parts have no observation yet; is the supply worker "
                                     "running (SERVICE_COMPONENT_PROVIDER_URL)?") or []:
            o = part["observation"]
            print(f"  {', '.join(part['references'])} {part['mpn']}: {o['lifecycleStatus']}, "
                  f"{o['distributorClassification']}, authorized stock {o['authorizedStock']}")

    schematic = content / "hardware" / f"{demo_board.PROJECT}.kicad_sch"
    schematic.write_text(schematic.read_text().replace(CURRENT_MPN, OBSOLETE_MPN))
    pr = host.open_pull_request(REPOSITORY, title="Rev C: second-source R1", deliver=True)
    head = pr["head"]["sha"]
    # The completion waits for the supply check and shows the decision its finding makes.
    failed = wait_for(lambda: [c for c in host.check_runs(REPOSITORY)
                               if c["head_sha"] == head and c["conclusion"] == "failure"], 120,
                      "the pull request's check run to fail on the obsolete part", lambda: explain(head))
    if not failed:
        return
    check_run = failed[0]
    print(f"  pull request #{pr['number']}: check run conclusion {check_run['conclusion']} "
          f"(\"{check_run['title']}\")")
    for annotation in host.annotations(check_run["id"]):
        if "supply." in annotation.get("raw_details", ""):
            print(f"  supply annotation {annotation['annotation_level']:<8} {annotation['path']}:"
                  f"{annotation['start_line']}  {annotation['message'][:100]}")
