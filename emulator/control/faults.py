"""Control of the request log and the fault switches (see emulator.faults)."""
from __future__ import annotations

from emulator.control.base import ControlBase, ControlError
from emulator.routing import route


class FaultControls(ControlBase):
    @route("GET", "/_emulator/requests")
    def requests(self, method: str | None = None, path_prefix: str | None = None, operation_id: str | None = None) -> list[dict]:
        return self.log.entries(method, path_prefix, operation_id)

    @route("DELETE", "/_emulator/requests")
    def clear_requests(self) -> dict:
        self.log.clear()
        return {"cleared": True}

    @route("POST", "/_emulator/faults")
    def add_fault(self, method: str | None = None, path: str | None = None, operation_id: str | None = None,
                  status: int | None = None, body=None, headers: dict | None = None, delay_ms: int = 0,
                  drop: bool = False, count: int | None = None, preset: str | None = None,
                  reset_in_seconds: int = 60, after: bool = False) -> dict:
        """Make matching requests fail; see emulator.faults. Returns the fault with its ``id``."""
        spec = {"method": method, "path": path, "operation_id": operation_id, "delay_ms": int(delay_ms), "drop": bool(drop),
                "count": count, "headers": headers or {}, "after": bool(after)}
        if status is not None:
            spec["status"] = int(status)
        if body is not None:
            spec["body"] = body
        if preset:
            spec.update(preset=preset, reset_in_seconds=reset_in_seconds)
            if not headers:
                spec.pop("headers")
        try:
            return self.fault_switches.add(**spec).to_dict()
        except ValueError as exc:
            raise ControlError(str(exc)) from None

    @route("GET", "/_emulator/faults")
    def faults(self) -> list[dict]:
        return self.fault_switches.list()

    @route("DELETE", "/_emulator/faults/{fault_id}")
    def remove_fault(self, fault_id: int) -> dict:
        if not self.fault_switches.remove(int(fault_id)):
            raise ControlError(f"unknown fault {fault_id}", 404)
        return {"removed": int(fault_id)}

    @route("DELETE", "/_emulator/faults")
    def clear_faults(self) -> dict:
        self.fault_switches.clear()
        return {"cleared": True}
