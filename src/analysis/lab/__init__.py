"""The lab: a pretraining corpus of known composition and small models trained on it.

``config`` holds the configuration classes; ``corpus`` (a package) builds the
corpus: its documents, injected sequences, phrase documents, facts and problems;
``tokenizer`` fits the lab's BPE; ``train`` (a package) trains the models: data
order, the training loop, devices and data-parallel processes, runs and their
checkpoints, evaluation; ``profiles`` names the profiles (and declares the lab
page's parameters) and ``ladder`` builds them (it hands the corpus its phrase
candidates from ``phrase_selection``); ``design`` states a profile's design in
words; ``budget`` prices a profile; ``index`` maps run names to checkpoints for
``load_model("lab:<run name>")``; ``fingerprint`` sums up a trained run (weights
hash, final losses) and compares two labs' runs; ``archive`` packs a trained lab into
one file that the data layer fetches like any input, and installs it (``build_lab``
looks for one first).

Importing the lab registers that index with the model layer
(:func:`analysis.models.register_resolver`), so ``lab:`` names load once
``analysis.lab`` (or any module in it) has been imported.
"""

from analysis.lab import index
from analysis.lab.fingerprint import compare_fingerprints, run_fingerprint, weights_sha256

__all__ = ["compare_fingerprints", "index", "run_fingerprint", "weights_sha256"]
