"""Lab archives: a tiny lab packed into a deterministic tar, registered and fetched through
the data layer, installed by ``build_lab`` instead of training; damaged archives fail
and install nothing; without a registered archive the lab trains as always.

The lab is a profile of three tiny runs (d_model 32, 2 layers, context 32, 16 steps; two
names share one checkpoint), trained once for the module on a synthetic corpus: the
corpus step of ``build_lab`` is replaced by that corpus, so nothing else is built.
"""

import hashlib
import io
import json
import random
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.core import data
from analysis.core.cache import CACHE_ENV
from analysis.core.data import DataError
from analysis.lab import archive, ladder, profiles
from analysis.lab.config import CorpusConfig, LabConfigError, ModelConfig, RunConfig
from analysis.lab.tokenizer import train_tokenizer

PROFILE = "tiny-archive"
MODEL = ModelConfig(n_layer=2, d_model=32, n_head=4, d_ff=64, context=32)
TOKENS = 16 * 8 * 32  # 16 steps of 8 rows
WORDS = (
    "the a of to and in is it that was he for on are as with his they at be this from have or by one "
    "had not but what all were when we there can an your which their said if do will each"
).split()
INJECTIONS = [
    {"seq_id": "once", "task": "passage", "text": "Quixotic Pf8 lumbers 31 Xw", "copies": 1},
    {"seq_id": "many", "task": "gsm8k", "text": "Mx3 + Rb2 = 7781 Wq", "copies": 6},
]
RUNS = (
    RunConfig("std", MODEL, TOKENS, batch_size=8),
    RunConfig("std-again", MODEL, TOKENS, batch_size=8),  # another name, the same key: one checkpoint
    RunConfig("inj", MODEL, TOKENS, family="perturbed", batch_size=8, inject=True),
)


def _texts(n_docs: int = 40) -> list[str]:
    rng = random.Random(0)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 100))) + "." for _ in range(n_docs)]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The tiny lab, built by ``build_lab`` (no archive is registered, so it trains) into
    the module's cache; the profile and its corpus stay in place for the module."""
    texts = _texts()
    tok = train_tokenizer(texts, vocab_size=300)
    corpus = SimpleNamespace(injections=INJECTIONS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("cache")))
        mp.setitem(profiles.PROFILES, PROFILE, profiles.LabProfile(CorpusConfig(), 300, RUNS))
        mp.setattr(ladder, "_corpus_and_tokenizer", lambda prof, place: (corpus, texts, "tiny-corpus", tok))
        yield ladder.build_lab(PROFILE, progress=False)


def _register(monkeypatch, tmp_path, archive_file: Path, name: str, sha: str | None = None) -> Path:
    """A one-row registry holding ``archive_file`` as ``name`` (with its own sha256 unless
    ``sha`` is given), a mirror holding the file, and an empty artifact cache."""
    mirror = tmp_path / "mirror"
    (mirror / name).parent.mkdir(parents=True, exist_ok=True)
    (mirror / name).write_bytes(archive_file.read_bytes())
    sha = sha or hashlib.sha256(archive_file.read_bytes()).hexdigest()
    table = pd.DataFrame(
        [
            {
                "name": name,
                "url": "",
                "sha256": sha,
                "bytes": archive_file.stat().st_size,
                "kind": "lab",
                "license": "",
                "citation": "",
                "derived_from": "",
            }
        ]
    )
    monkeypatch.setattr(data, "registry", lambda: table.copy())
    monkeypatch.setenv(data.MIRROR_ENV, str(mirror))
    fresh = tmp_path / "fresh-cache"
    monkeypatch.setenv(CACHE_ENV, str(fresh))
    return fresh


def _fresh_folders(lab, cache: Path) -> dict[str, Path]:
    return {run: cache / "lab-runs" / res.path.name for run, res in lab.results.items()}


def _installed(cache: Path) -> list[str]:
    root = cache / "lab-runs"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_fingerprints_one_row_per_run_and_shared_checkpoints_share_them(lab):
    table = lab.fingerprints().set_index("run")
    assert list(table.index) == ["std", "std-again", "inj"]
    assert list(table.columns) == ["weights_sha256", "final_loss", "final_loss_last", "steps"]
    assert lab.results["std"].path == lab.results["std-again"].path
    assert table.loc["std"].tolist() == table.loc["std-again"].tolist()
    assert table.loc["std", "weights_sha256"] != table.loc["inj", "weights_sha256"]
    assert (table["steps"] == 16).all()
    runs_table = lab.runs_table().set_index("run")
    assert table["final_loss"].tolist() == runs_table.loc[table.index, "final loss"].tolist()
    assert table.loc["inj", "final_loss_last"] == lab.results["inj"].curve["loss"].iloc[-1]


def test_pack_is_deterministic_with_a_manifest_first(lab, tmp_path):
    one = archive.pack_lab(lab, tmp_path / "one.tar")
    two = archive.pack_lab(lab, tmp_path / "two.tar")
    assert one.read_bytes() == two.read_bytes()
    with tarfile.open(one) as tar:
        members = tar.getmembers()
        manifest = json.loads(tar.extractfile("manifest.json").read())
    names = [m.name for m in members]
    assert names[0] == "manifest.json" and names[1:] == sorted(names[1:])
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    folders = {res.path.name for res in lab.results.values()}
    assert {n.split("/")[0] for n in names[1:]} == folders and len(folders) == 2
    for folder in folders:
        assert {
            f"{folder}/{f}"
            for f in (
                "model.safetensors",
                "config.json",
                "DONE.json",
                "run.json",
                "curve.parquet",
                "exposure.parquet",
                "order.npz",
                "tokenizer.json",
            )
        } <= set(names)
    assert manifest["profile"] == PROFILE and manifest["archive"] == archive.lab_archive_name(lab)
    assert manifest["runs"] == {run: res.path.name for run, res in lab.results.items()}
    assert manifest["fingerprints"] == lab.fingerprints().set_index("run").to_dict(orient="index")


def test_archive_name_is_keyed_by_the_run_folders(lab):
    name = archive.lab_archive_name(lab)
    folders = [res.path for res in lab.results.values()]
    assert name.startswith(f"labs/{PROFILE}-") and name.endswith(".tar")
    assert archive.archive_name(PROFILE, reversed(folders)) == name
    assert archive.archive_name(PROFILE, folders[:1]) != name  # another set of runs, another archive
    assert archive.archive_name("default", folders) != name


def test_round_trip_through_the_data_layer_installs_the_same_lab(lab, tmp_path, monkeypatch):
    packed = archive.pack_lab(lab, tmp_path / "lab.tar")
    fresh = _register(monkeypatch, tmp_path, packed, archive.lab_archive_name(lab))
    rebuilt = ladder.build_lab(PROFILE, progress=False)  # installs from the archive: trains nothing
    assert not any(res.trained for res in rebuilt.results.values())
    for run, res in rebuilt.results.items():
        assert res.path == fresh / "lab-runs" / lab.results[run].path.name
        for file in ("model.safetensors", "curve.parquet", "DONE.json"):
            assert (res.path / file).read_bytes() == (lab.results[run].path / file).read_bytes()
    pd.testing.assert_frame_equal(rebuilt.fingerprints(), lab.fingerprints())
    assert _installed(fresh) == sorted({res.path.name for res in lab.results.values()})  # no leftovers


def test_a_tampered_archive_fails_its_sha256_check(lab, tmp_path, monkeypatch):
    packed = archive.pack_lab(lab, tmp_path / "lab.tar")
    name = archive.lab_archive_name(lab)
    fresh = _register(monkeypatch, tmp_path, packed, name)
    mirrored = tmp_path / "mirror" / name
    blob = bytearray(mirrored.read_bytes())
    blob[-1024] ^= 1
    mirrored.write_bytes(bytes(blob))
    with pytest.raises(DataError, match="fails its sha256 check"):
        archive.ensure_lab_archive(PROFILE, _fresh_folders(lab, fresh))
    assert _installed(fresh) == []


def test_weights_that_do_not_match_the_manifest_install_nothing(lab, tmp_path, monkeypatch):
    real = archive.run_fingerprints

    def wrong(results):  # the injected run's manifest hash is not its weights'
        fps = real(results)
        fps["inj"]["weights_sha256"] = "0" * 64
        return fps

    monkeypatch.setattr(archive, "run_fingerprints", wrong)
    packed = archive.pack_lab(lab, tmp_path / "lab.tar")
    fresh = _register(monkeypatch, tmp_path, packed, archive.lab_archive_name(lab))  # its true sha256
    with pytest.raises(DataError, match="weights of run 'inj'.*fail their check.*Nothing was installed"):
        archive.ensure_lab_archive(PROFILE, _fresh_folders(lab, fresh))
    assert _installed(fresh) == []  # not even the standard run, which passed, nor the staging folder


def test_without_a_registered_or_available_archive_the_lab_trains(lab, tmp_path, monkeypatch):
    fresh = tmp_path / "fresh-cache"
    monkeypatch.setenv(CACHE_ENV, str(fresh))
    folders = _fresh_folders(lab, fresh)
    assert archive.ensure_lab_archive(PROFILE, folders) is False  # the real registry has no such archive
    name = archive.lab_archive_name(lab)
    packed = archive.pack_lab(lab, tmp_path / "lab.tar")
    _register(monkeypatch, tmp_path, packed, name)
    monkeypatch.delenv(data.MIRROR_ENV)  # registered, but in no mirror and without a URL
    assert archive.ensure_lab_archive(PROFILE, folders) is False
    table = data.registry().assign(url="http://127.0.0.1:9/lab.tar")  # a download that fails
    monkeypatch.setattr(data, "registry", lambda: table.copy())
    assert archive.ensure_lab_archive(PROFILE, folders) is False
    assert _installed(fresh) == []
    # every run already finished: nothing is looked up
    assert archive.ensure_lab_archive(PROFILE, {r: res.path for r, res in lab.results.items()}) is False


def test_pack_refuses_a_partial_build(lab, tmp_path):
    partial = ladder.LabBuild(
        lab.profile, lab.corpus, lab.tokenizer, {"std": lab.results["std"]}, 0.0, name=PROFILE
    )
    with pytest.raises(LabConfigError, match=r"missing \['std-again', 'inj'\]"):
        archive.pack_lab(partial, tmp_path / "lab.tar")


def test_unpack_refuses_a_member_outside_the_run_folders(lab, tmp_path):
    bad = tmp_path / "bad.tar"
    manifest = json.dumps({"format": 1, "runs": {"std": "0123456789abcdef"}, "fingerprints": {}}).encode()
    with tarfile.open(bad, "w") as tar:
        for name, blob in (("manifest.json", manifest), ("../escape.txt", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    with pytest.raises(DataError, match="unexpected member '../escape.txt'"):
        archive.unpack_lab(bad, tmp_path / "cache")
    assert not (tmp_path / "escape.txt").exists() and _installed(tmp_path / "cache") == []
