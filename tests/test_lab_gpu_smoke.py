"""``scripts/gpu_smoke.py cpu``: the GPU first-contact check as a dry run on the CPU.

Every check must pass, and on the CPU to the bit where the CUDA run is only close
(resume, fork, eval); about a minute on two cores.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import gpu_smoke  # noqa: E402


def test_the_gpu_smoke_check_passes_as_a_dry_run_on_the_cpu(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MEMBOOK_LAB_DEVICE", raising=False)
    out = tmp_path / "gpu_smoke.json"
    assert gpu_smoke.main(["cpu", "--out", str(out), "--cache", str(tmp_path / "cache")]) == 0
    report = json.loads(out.read_text())
    checks = report["checks"]
    assert list(checks) == ["placement", "cpu-vs-device", "fp32-safetensors", "kill-and-resume", "fork",
                            "eval-loss"]
    assert report["ok"] and all(c["ok"] for c in checks.values())
    assert checks["placement"]["key_fields"] == {} and checks["placement"]["precision"] == "fp32"
    # two micro-batches stand in for the device: the same run up to rounding, never identical
    assert 0 < checks["cpu-vs-device"]["max_loss_gap"] <= 1e-5
    assert checks["fp32-safetensors"]["dtypes"] == ["torch.float32"]
    resume = checks["kill-and-resume"]
    assert resume["resumed_from_step"] == 10 and resume["max_loss_gap"] == 0
    assert checks["fork"]["forked_from_step"] == 16 and checks["fork"]["max_loss_gap"] == 0  # q3 of 32 steps
    assert checks["eval-loss"]["gap"] == 0
    probe = report["probe"]
    assert [row["width"] for row in probe["widths"]] == [32, 48, 64, 96]
    assert all(row["tokens_per_second"] > 0 and row["counted_gib"] > 0 and row["peak_gib"] is None
               for row in probe["widths"])
    assert probe["checkpoint_bytes"] > 12 * probe["widths"][-1]["params"]  # weights and AdamW's two moments
    printed = capsys.readouterr().out
    assert printed.count("ok   ") == 6 and "all checks passed" in printed
    assert (tmp_path / "cache").is_dir()  # kept when given
