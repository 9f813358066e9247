"""Size inference from popular-text memorization: the Size chapter (``notebooks/size.md``).

The chapter re-runs "Inferring the Size of Large Language Models From Popular
Text Memorization" (the *paper*). A model :math:`M` is shown the :math:`l` words
before a position of a text :math:`T` and asked for the next word; its
subsampled next-word accuracy :math:`\\hat\\alpha(M,T,l)` on 37 popular texts,
minus its accuracy :math:`\\hat\\beta(M,l)` on 4 obscure baseline texts,
aggregated over prefix lengths :math:`l\\in\\{4,8,10,12,16,24\\}`, forms the
:math:`2KL` *accuracy profile* of the model (Section 3.2). Two inference methods
are built on it:

* **absolute** (Section 3.3): PCA of the reference models' profiles gives a
  latent index :math:`z_M`; OLS of :math:`\\ln\\theta = B z + c` gives
  :math:`\\hat\\theta(z) = A e^{Bz}` (Eq. 3-4); the lower bound is
  :math:`0.5\\,\\hat\\theta` (Section 4.2.1);
* **relative** (Section 3.4): block scores :math:`s_j` per text and a one-sided
  blocked sign-permutation test of :math:`H_0: E[s_j]\\le 0`; the relative bound
  is the size of the largest reference that the target beats significantly
  (Section 4.3). The best bound is the larger of the two.

The package, by role:

* :mod:`.params`: profiles, ``PARAMS``, the paper's constants and tables;
* :mod:`.method_probe`, :mod:`.method_absolute`, :mod:`.method_relative`,
  :mod:`.method_calibration`, :mod:`.method_groups`, :mod:`.method`: the
  method, pure functions (the sign-permutation test itself is
  :mod:`analysis.stats.permutation`);
* :mod:`.nulls`: the computed nulls (sizes permuted among the ladder's models,
  group labels among texts, families among models) and intervals over models;
* :mod:`.run`: the probe of real and lab models, and :func:`plan`;
* :mod:`.claims` (the real models, the source-only tables), :mod:`.claims_ladder`
  (the lab ladder) and :mod:`.claims_calibration` (the sign test under a true null):
  the chapter's verdicts as claims; :mod:`.text`: their wording;
* :mod:`.steps`: the method's steps as the page calls them; :mod:`.page`: what each
  section of the page glues.

Below, the names the chapter's notebook, the book's other pages and modules, and the
scripts read from the package, each once (``tests/test_surface.py`` keeps them exactly
those); tests import from the submodules.
"""

from analysis.size import page
from analysis.size.claims import agreement_claim, gap_claims, probe_claims, probe_modes, source_only_claims
from analysis.size.claims_calibration import calibration_claims
from analysis.size.claims_ladder import ladder_claims
from analysis.size.claims_outside import outside_claims
from analysis.size.method import LadderMethod, bound_targets, invalid_bounds
from analysis.size.method_absolute import fit_law, index_ablation, loo_cv, loo_r2_interval, pca_index
from analysis.size.method_calibration import calibration
from analysis.size.method_groups import agreement, group_gap, ladder_agreement
from analysis.size.method_probe import accuracy_profile, accuracy_table, position_table, sample_positions
from analysis.size.method_relative import kind_sweep, pairwise_tests, tau_sweep
from analysis.size.nulls import ladder_nulls
from analysis.size.params import (
    KIND_ORDER,
    LAB_PROBE_TOKENS,
    PAIRWISE_TAU,
    PARAMS,
    SOURCE_SETUP,
    load_paper_table,
)
from analysis.size.run import chapter_templates, chapter_texts, lab_samples, ladder_design, plan, probe_models
from analysis.size.steps import bounds, is_ablation, popular_copies
from analysis.size.text import render
