"""The lab: a pretraining corpus of known composition and small models trained on it.

``config`` holds the configuration classes; ``corpus`` (a package) builds the
corpus: its documents, injected sequences, phrase documents, facts and problems;
``tokenizer`` fits the lab's BPE; ``train`` (a package) trains the models: data
order, the training loop, devices and data-parallel processes, runs and their
checkpoints, evaluation; ``ladder`` names the profiles and builds them (it hands
the corpus its phrase candidates from ``phrase_selection``); ``budget`` prices a
profile; ``index`` maps run names to checkpoints for ``load_model("lab:<run name>")``.

Importing the lab registers that index with the model layer
(:func:`analysis.models.register_resolver`), so ``lab:`` names load once
``analysis.lab`` (or any module in it) has been imported.
"""

from analysis.lab import index

__all__ = ["index"]
