"""Print the figures of the differential check, per revision.

    python -m tests.differential.report      (from the repository root)
    python tests/differential/report.py

Columns: definitions; instances checked (schema-valid / schema-invalid);
agreements; disagreements explained by the leniency table; unexplained
disagreements (these fail test_agreement.py); definitions without any
generated instance. Then, per leniency entry, how many disagreements it
explains, and the unexplained ones in full.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from differential_engine import REVISIONS, check_definition, definition_names
from leniencies import LENIENCIES, explaining


@dataclass
class Summary:
    revision: str
    definitions: int = 0
    origins: Counter[str] = field(default_factory=Counter)
    valid: int = 0
    invalid: int = 0
    agreements: int = 0
    explained: int = 0
    unexplained: list[str] = field(default_factory=list)
    generation_failed: list[str] = field(default_factory=list)
    by_entry: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def instances(self) -> int:
        return self.valid + self.invalid


def summarise(rev: str) -> Summary:
    summary = Summary(revision=rev)
    for name in definition_names(rev):
        result = check_definition(rev, name)
        summary.definitions += 1
        if result.generation_failed:
            summary.generation_failed.append(name)
        for outcome in result.outcomes:
            summary.origins[outcome.origin.split(":", 1)[0]] += 1
            if outcome.schema_valid:
                summary.valid += 1
            else:
                summary.invalid += 1
            if not outcome.disagrees:
                summary.agreements += 1
                continue
            keys = explaining(outcome)
            if keys:
                summary.explained += 1
                summary.by_entry.update(keys)
            else:
                summary.unexplained.append(outcome.describe())
    return summary


def main() -> int:
    started = time.perf_counter()
    summaries = [summarise(rev) for rev in REVISIONS]
    header = (
        f"{'revision':<11} {'defs':>5} {'instances':>9} {'valid':>6} {'invalid':>7} "
        f"{'agree':>6} {'explained':>9} {'unexplained':>11} {'no-gen':>6}"
    )
    print(header)
    print("-" * len(header))
    total = Summary(revision="total")
    for s in summaries:
        print(
            f"{s.revision:<11} {s.definitions:>5} {s.instances:>9} {s.valid:>6} "
            f"{s.invalid:>7} {s.agreements:>6} {s.explained:>9} "
            f"{len(s.unexplained):>11} {len(s.generation_failed):>6}"
        )
        total.definitions += s.definitions
        total.valid += s.valid
        total.invalid += s.invalid
        total.agreements += s.agreements
        total.explained += s.explained
        total.unexplained += s.unexplained
        total.generation_failed += s.generation_failed
        total.by_entry.update(s.by_entry)
    print("-" * len(header))
    print(
        f"{'total':<11} {total.definitions:>5} {total.instances:>9} {total.valid:>6} "
        f"{total.invalid:>7} {total.agreements:>6} {total.explained:>9} "
        f"{len(total.unexplained):>11} {len(total.generation_failed):>6}"
    )
    print()
    print("Disagreements explained per leniency entry (revision, owner):")
    for key, leniency in LENIENCIES.items():
        print(f"  {total.by_entry[key]:>5}  {key[0]:<11} {key[1]:<30} {leniency.shape}")
    unused = [key for key in LENIENCIES if total.by_entry[key] == 0]
    if unused:
        print(f"UNUSED entries (remove them): {unused}")
    print()
    print("Instances by origin (examples / generated from the schema / mutations):")
    for s in summaries:
        print(
            f"  {s.revision:<11} {s.origins['example']:>6} {s.origins['generated']:>6} "
            f"{s.origins['mutation']:>6}"
        )
    for s in summaries:
        if s.generation_failed:
            print(f"{s.revision}: no generated instance for {s.generation_failed}")
    if total.unexplained:
        print(f"\n{len(total.unexplained)} unexplained disagreement(s):")
        for text in total.unexplained:
            print(text)
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 1 if total.unexplained or unused else 0


if __name__ == "__main__":
    raise SystemExit(main())
