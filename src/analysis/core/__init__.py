"""The bottom layer: paths, the artifact and query caches, the data registry,
errors, text normalisation, formatting and the :class:`~analysis.core.claims.Claim`
type. Nothing here imports another layer of the package."""
