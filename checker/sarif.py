"""SARIF 2.1.0 for code scanning: one run, one rule per catalogue entry used."""
from __future__ import annotations

from urllib.parse import quote

from . import TOOL_NAME, TOOL_VERSION
from .rules.catalogue import RULES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# SARIF's level says what blocks: only errors block a release (see verdict.py);
# high and medium put it at risk (warning); low and info are notes. The exact
# severity is in each result's properties.
_LEVEL = {"error": "error", "high": "warning", "medium": "warning", "low": "note", "info": "note"}


def to_sarif(result: dict) -> dict:
    used = sorted({f["ruleId"] for f in result["findings"]})
    rules = []
    for rule_id in used:
        # An imported KiCad finding (kicad.drc.<type>) is described by its family's entry.
        rule = RULES.get(rule_id) or RULES.get(rule_id[:9] if rule_id.startswith(("kicad.drc.", "kicad.erc.")) else "")
        entry = {"id": rule_id, "name": rule_id}
        if rule:
            entry.update({
                "shortDescription": {"text": rule.title},
                "fullDescription": {"text": rule.checks},
                "help": {"text": f"{rule.fix} (KiCad: {rule.mirrors})"},
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
            })
        rules.append(entry)
    index = {rule_id: i for i, rule_id in enumerate(used)}
    results = []
    for finding in result["findings"]:
        item = {
            "ruleId": finding["ruleId"],
            "ruleIndex": index[finding["ruleId"]],
            "level": _LEVEL[finding["severity"]],
            "message": {"text": finding["message"]},
            "partialFingerprints": {"boardready/v1": finding["fingerprint"]},
            "properties": {"severity": finding["severity"], "source": finding.get("source", "boardready")},
        }
        if "x" in finding:
            item["properties"].update({"x": finding["x"], "y": finding["y"]})
            if finding.get("layer"):
                item["properties"]["layer"] = finding["layer"]
        if finding.get("path"):
            # A URI reference: spaces, '#', '%' and non-ASCII in KiCad file names must be escaped.
            location = {"physicalLocation": {"artifactLocation": {"uri": quote(finding["path"], safe="/")}}}
            if finding.get("startLine"):
                region = {"startLine": finding["startLine"], "endLine": finding.get("endLine", finding["startLine"])}
                if finding.get("startColumn"):
                    region["startColumn"] = finding["startColumn"]
                location["physicalLocation"]["region"] = region
            item["locations"] = [location]
        suppressions = []
        if finding.get("waived"):
            suppressions.append({"kind": "external", "justification": "waived in .boardready.toml"})
        if finding.get("excluded"):
            suppressions.append({"kind": "external", "justification": "excluded in the KiCad project (.kicad_pro)"})
        if suppressions:
            item["suppressions"] = suppressions
        if finding.get("baseline"):
            item["baselineState"] = "unchanged" if finding["baseline"] == "existing" else "new"
        results.append(item)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": TOOL_NAME, "version": TOOL_VERSION,
                                "informationUri": "https://boardready.dev/docs/rules", "rules": rules}},
            "results": results,
            "properties": {"readiness": result["readiness"], "score": result["score"]},
        }],
    }
