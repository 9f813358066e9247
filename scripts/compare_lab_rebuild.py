"""Compare a rebuilt lab's weights with a reference build's fingerprints.

    python scripts/compare_lab_rebuild.py [--reference bench/results/lab_cold.json] [--profile default]

Loads the lab of ``--profile`` from the artifact cache (``build_lab``: it trains whatever is
missing), fingerprints every run (``analysis.lab.fingerprint``) and compares the hashes and
final losses with the reference record's ``fingerprints`` (a ``scripts/bench_lab_cold.py``
record, or a ``results/lab.json``). Writes ``bench/results/lab_rebuild.json``: the machine,
the commit, the reference, and one row per run (``compare_fingerprints``).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "lab_rebuild.json"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None) -> int:
    from analysis.core import jsonio
    from analysis.lab import ladder
    from analysis.lab.fingerprint import compare_fingerprints

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=ROOT / "bench" / "results" / "lab_cold.json")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--tol", type=float, default=1e-3, help="largest |Δ final loss| (nats) called a match")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if not args.reference.exists():
        ap.error(f"--reference {args.reference} does not exist")
    ref = json.loads(args.reference.read_text())
    if "fingerprints" not in ref:
        ap.error(f"--reference {args.reference} has no 'fingerprints'")
    committed = {r["run"]: r for r in ref["fingerprints"]}
    lab = ladder.build_lab(args.profile, progress=False)
    rebuilt = {r["run"]: r for r in lab.fingerprints().to_dict("records")}
    table = compare_fingerprints(committed, rebuilt, args.tol)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    record = {"kind": "lab rebuild", "profile": args.profile, "date": time.strftime("%Y-%m-%d"),
              "commit": commit, "cpu": _cpu(), "reference": args.reference.relative_to(ROOT).as_posix(),
              "reference_commit": ref.get("commit"), "reference_date": ref.get("date"), "tol": args.tol,
              "runs": len(table), "identical": int(table["weights_identical"].sum()),
              "within_tol": int(table["within_tol"].sum()),
              "max_loss_diff": float(table["loss_diff"].max()),
              "median_loss_diff": float(table["loss_diff"].median()),
              "rows": table.to_dict("records")}
    args.out.write_text(jsonio.dumps(record, indent=1) + "\n")
    print(f"{record['identical']} of {record['runs']} runs bit-identical; {record['within_tol']} within "
          f"{args.tol:g} nats; largest |Δ loss| {record['max_loss_diff']:.4g} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
