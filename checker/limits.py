"""The bounds every read of untrusted input is held to.

One frozen value passed down the call chain, so tests can shrink a bound to
exercise a guard without building gigabytes of input.
"""
from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_total_bytes: int = 64 * MIB        # raw project input, all files together
    max_sheet_instances: int = 5000        # hierarchy walk, counted before expanding further
    max_bom_rows: int = 100_000            # BOM CSV data rows, counted while streaming
    max_depth: int = 256                   # S-expression nesting; KiCad's own files stay under 20
    max_atom_chars: int = 4 * MIB          # embedded images/fonts are the longest legitimate atoms
    max_tokens: int = 20_000_000           # about 64 MiB of the densest real KiCad text
    max_project_search_depth: int = 6      # folders searched below PATH for a .kicad_pro


DEFAULT_LIMITS = Limits()
