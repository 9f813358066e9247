"""A trained lab in one file, registered like every other input of the book.

The committed results were computed from one trained lab. :func:`pack_lab` writes
that lab's run folders into a deterministic ``.tar`` with a manifest (the profile,
each run's folder and each run's fingerprint, :mod:`analysis.lab.fingerprint`);
registered in ``data/registry.csv`` under :func:`archive_name` (kind ``lab``), the
archive is fetched like any input (:func:`analysis.core.data.fetch`: the cache,
the mirror named by ``MEMBOOK_DATA_MIRROR``, the URL), checked against its sha256,
and :func:`unpack_lab` installs its runs where training would have put them.

:func:`analysis.lab.ladder.build_lab` calls :func:`ensure_lab_archive` before it
trains anything: a lab whose archive is registered and available is installed and
loaded, never retrained; without one, the lab trains as it always did. The
archive's name is a hash of the folders of every run of the profile, and a run's
folder is the hash of everything that determines its weights
(:func:`analysis.lab.train.run_key`: corpus, tokenizer, configuration, code
version, device), so a profile that changed in any of these looks up another name
and never installs a stale lab.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.core import data, jsonio
from analysis.core.cache import cache_dir, stable_hash
from analysis.core.data import DataError
from analysis.lab.config import LabConfigError
from analysis.lab.fingerprint import checkpoint_sha256, run_fingerprints
from analysis.lab.train.runs import DONE

if TYPE_CHECKING:
    from analysis.lab.ladder import LabBuild

log = logging.getLogger(__name__)

#: the registry folder of lab archives
ARCHIVE_DIR = "labs"
#: the manifest's member name, first in every archive
MANIFEST = "manifest.json"
#: the manifest's format; bumped when an archive's layout changes
FORMAT = 1
#: the artifact-cache folder of trained runs (:func:`analysis.lab.train.run_path`)
RUNS_DIR = "lab-runs"
#: a run folder's name: an artifact key (:func:`analysis.core.cache.artifact_path`)
_FOLDER = re.compile(r"[0-9a-f]{16}")


def archive_name(profile: str, folders: Iterable[str | os.PathLike]) -> str:
    """Registry name of the archive of the lab ``profile`` whose runs live in ``folders``:
    ``labs/<profile>-<hash of the sorted folder names>.tar``. Runs sharing a folder
    count once; the order of ``folders`` does not matter."""
    return f"{ARCHIVE_DIR}/{profile}-{stable_hash(sorted({Path(f).name for f in folders}))}.tar"


def lab_archive_name(build: LabBuild) -> str:
    """Registry name of the archive of ``build`` (:func:`archive_name`): the name to
    register :func:`pack_lab`'s file under."""
    return archive_name(_profile_name(build), (res.path for res in build.results.values()))


def _profile_name(build: LabBuild) -> str:
    if build.name is None:
        raise LabConfigError("only a lab built from a named profile (build_lab('default')) can be archived")
    return build.name


def _run_files(folder: Path) -> list[Path]:
    """The files of a run folder an archive holds: every file in it, sorted; not its
    ``forks/`` (training state others fork from, never needed to load a run)."""
    return sorted(f for f in folder.iterdir() if f.is_file() and ".tmp-" not in f.name)


def _member(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def pack_lab(build: LabBuild, out: str | os.PathLike) -> Path:
    """Write every distinct run folder of ``build`` and a manifest into the tar ``out``.

    Parameters
    ----------
    build : LabBuild
        A lab built from a named profile with every run of the profile
        (``build_lab(profile)``, no ``family`` or ``runs``).
    out : path
        The archive to write (replaced when it exists).

    Returns
    -------
    pathlib.Path
        ``out``. Its first member is ``manifest.json``: ``format``, ``profile``,
        ``archive`` (:func:`lab_archive_name`, the name to register it under),
        ``runs`` (run name → folder name) and ``fingerprints`` (run name →
        :func:`~analysis.lab.fingerprint.run_fingerprint`). Then each folder's files
        as ``<folder>/<file>`` (:func:`_run_files`: checkpoint, config, tokenizer,
        curve, exposure, order, ``run.json``, ``DONE.json``). Uncompressed, members
        sorted, mtime 0, owner 0: the same lab always gives the same bytes.

    Raises
    ------
    LabConfigError
        If the profile is unnamed, a run of the profile is missing from ``build``
        or a run folder is not finished.
    """
    profile = _profile_name(build)
    missing = [r.name for r in build.profile.runs if r.name not in build.results]
    if missing:
        raise LabConfigError(
            f"pack_lab needs every run of the {profile!r} lab; missing {missing}: "
            f"build it with build_lab({profile!r})"
        )
    folders = {run: res.path for run, res in build.results.items()}
    for path in set(folders.values()):
        if not (path / DONE).exists():
            raise LabConfigError(f"{path} is not a finished lab run")
    manifest = {
        "format": FORMAT,
        "profile": profile,
        "archive": lab_archive_name(build),
        "runs": {run: path.name for run, path in folders.items()},
        "fingerprints": run_fingerprints(build.results),
    }
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    blob = jsonio.dumps(manifest, indent=1, sort_keys=True).encode()
    with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tar:
        tar.addfile(_member(MANIFEST, len(blob)), io.BytesIO(blob))
        for path in sorted(set(folders.values()), key=lambda p: p.name):
            for file in _run_files(path):
                with file.open("rb") as fh:
                    tar.addfile(_member(f"{path.name}/{file.name}", file.stat().st_size), fh)
    os.replace(tmp, out)
    return out


def read_manifest(archive: str | os.PathLike) -> dict:
    """The manifest of a lab archive (:func:`pack_lab`).

    Raises
    ------
    DataError
        If the file is not a lab archive of this :data:`FORMAT`.
    """
    try:
        with tarfile.open(archive) as tar:
            manifest = json.loads(tar.extractfile(MANIFEST).read())
    except (tarfile.TarError, KeyError, AttributeError, ValueError, OSError) as err:
        raise DataError(f"{archive} is not a lab archive (no readable {MANIFEST}): {err}") from err
    if manifest.get("format") != FORMAT:
        raise DataError(f"{archive}: lab archive format {manifest.get('format')!r}, expected {FORMAT}")
    return manifest


def _check_members(archive: Path, members: list[tarfile.TarInfo], folders: set[str]) -> None:
    """Every member is the manifest or a plain file ``<folder>/<file>`` of a listed folder."""
    for m in members:
        parts = m.name.split("/")
        ok = m.name == MANIFEST or (
            len(parts) == 2 and parts[0] in folders and parts[1] and not parts[1].startswith(".")
        )
        if not (ok and m.isfile()):
            raise DataError(
                f"{archive}: unexpected member {m.name!r} (a lab archive holds {MANIFEST} "
                "and the files of its run folders)"
            )


def unpack_lab(archive: str | os.PathLike, cache: str | os.PathLike) -> dict[str, Path]:
    """Install the runs of a lab archive into the artifact cache ``cache``.

    Every run folder goes to ``<cache>/lab-runs/<folder>``, where
    :func:`analysis.lab.train.train` finds a finished run and loads it. The archive is
    first extracted to a temporary folder beside them and each folder's weights are
    hashed (:func:`~analysis.lab.fingerprint.checkpoint_sha256`) and compared with the
    manifest's ``weights_sha256`` of every run that uses it; only when every folder
    passes are they moved into place, each with one rename. A folder already
    finished in the cache is kept as it is.

    Parameters
    ----------
    archive : path
        A lab archive (:func:`pack_lab`).
    cache : path
        Root of the artifact cache (:func:`analysis.core.cache.cache_dir`).

    Returns
    -------
    dict of str to pathlib.Path
        Run name → its installed folder.

    Raises
    ------
    DataError
        If the archive is not a lab archive, holds a member other than its
        manifest and run files, or a folder is unfinished or its weights do not
        match the manifest. Nothing is installed then.
    """
    archive = Path(archive)
    manifest = read_manifest(archive)
    runs: dict[str, str] = manifest["runs"]
    folders = set(runs.values())
    bad = sorted(f for f in folders if not _FOLDER.fullmatch(f))
    if bad:
        raise DataError(f"{archive}: run folders must be artifact keys (16 hex digits), got {bad}")
    root = Path(cache) / RUNS_DIR
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root))
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            _check_members(archive, members, folders)
            tar.extractall(staging, members=[m for m in members if m.name != MANIFEST], filter="data")
        for folder in sorted(folders):
            _verify(archive, staging / folder, manifest, [r for r, f in runs.items() if f == folder])
        for folder in sorted(folders):
            target = root / folder
            if (target / DONE).exists():
                continue
            if target.exists():  # an unfinished folder in the way (a run folder appears finished)
                shutil.rmtree(target)
            os.replace(staging / folder, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("installed %d lab runs from %s", len(runs), archive)
    return {run: root / folder for run, folder in runs.items()}


def _verify(archive: Path, folder: Path, manifest: dict, runs: list[str]) -> None:
    if not (folder / DONE).exists():
        raise DataError(f"{archive}: run folder {folder.name} has no {DONE}")
    actual = checkpoint_sha256(folder)
    for run in runs:
        expected = manifest["fingerprints"][run]["weights_sha256"]
        if actual != expected:
            raise DataError(
                f"{archive}: the weights of run {run!r} (folder {folder.name}) fail their "
                f"check: the manifest says sha256 {expected}, the unpacked weights hash to "
                f"{actual}. Nothing was installed."
            )


def fetch_archive(name: str) -> Path | None:
    """A registered lab archive through the data layer (:func:`analysis.core.data.fetch`),
    or None when it is not registered or cannot be had (not cached, not in the
    mirror, and no URL or a download that failed).

    Raises
    ------
    DataError
        If a copy was found but fails its sha256 check (a corrupt mirror copy or
        download): a damaged archive is an error, never silently skipped.
    """
    table = data.registry()
    rows = table[table["name"] == name]
    if rows.empty:
        return None
    try:
        return data.fetch(name)
    except DataError as err:
        mirror = os.environ.get(data.MIRROR_ENV)
        in_mirror = bool(mirror) and (Path(mirror) / name).is_file()
        if isinstance(err.__cause__, OSError) or not (rows.iloc[0]["url"] or in_mirror):
            log.info("lab archive %s is registered but unavailable: %s", name, err)
            return None
        raise


def ensure_lab_archive(profile: str, folders: Mapping[str, str | os.PathLike]) -> bool:
    """Install the runs of the lab ``profile`` from its registered archive, if it has one.

    Parameters
    ----------
    profile : str
        The profile's name.
    folders : mapping of str to path
        Every run of the profile → the folder training would put it in
        (:func:`analysis.lab.ladder.lab_folders`).

    Returns
    -------
    bool
        True when runs were installed from the archive :func:`archive_name` names;
        False when every run is already finished, or no such archive is registered
        or available (:func:`fetch_archive`): the caller then trains as usual.

    Raises
    ------
    DataError
        If the archive fails its sha256 check, does not hold exactly the profile's
        runs in their folders, or fails :func:`unpack_lab`'s checks.
    """
    paths = {run: Path(f) for run, f in folders.items()}
    if all((p / DONE).exists() for p in paths.values()):
        return False
    name = archive_name(profile, paths.values())
    archive = fetch_archive(name)
    if archive is None:
        return False
    expected = {run: p.name for run, p in paths.items()}
    held = read_manifest(archive)["runs"]
    if held != expected:
        raise DataError(
            f"{name}: the archive does not hold the {profile!r} lab's runs in their folders "
            f"(expected {expected}, found {held})"
        )
    unpack_lab(archive, cache_dir())
    return True
