"""The lab: a pretraining corpus of known composition and small models trained on it.

``config`` holds the configuration classes, ``corpus`` builds the corpus and its
injected sequences, ``tokenizer`` and ``train`` train the models and log their
data order, ``ladder`` names the profiles and builds them, ``index`` maps run
names to checkpoints for ``load_model("lab:<run name>")``.
"""
