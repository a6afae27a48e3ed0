"""Names of the feature-table columns: one place for the feature sets every stage uses."""
from __future__ import annotations

#: The five features of seed 003 §3.4, in the order of its ARFF file (Figure 3.3).
THESIS_FEATURES: list[str] = ["ctd", "density_sum", "query_score", "matches", "distance"]

#: Identifying columns of each row.
KEYS: list[str] = ["dataset", "site", "page", "node", "parent", "xpath", "tag"]

#: The class column: "S" noise, "N" content (seed 003 Figure 3.3); missing without gold.
LABEL = "label"
NOISE, CONTENT = "S", "N"
CLASSES: list[str] = [NOISE, CONTENT]

#: Features beside the thesis's five (documented in ``hwnoise.features.walk``; ``sitelevel`` in
#: ``hwnoise.features.build``): link density, text length, tag, position in the page, the page's
#: own-submission QueryScore, context (parent, children, repeated sibling structure), and seed 000's
#: SiteLevel frequency. THESIS_FEATURES stays the default ARFF set.
EXTENDED_FEATURES: list[str] = [
    "link_density", "chars", "own_chars", "tag_code", "position", "chars_before",
    "own_query_score", "parent_ctd", "children", "sibling_same_tag", "sitelevel",
]

#: The thesis's five and the extended features together.
ALL_FEATURES: list[str] = THESIS_FEATURES + EXTENDED_FEATURES

#: Columns only a dataset's stored feature table gives (a bare page cannot): seed 000's SiteLevel.
DATASET_FEATURES: list[str] = ["sitelevel"]


def needs_dataset_features(features) -> bool:
    """Whether a model's features use a dataset-level column, directly or as parent/grandparent
    context (``ctx_parent_sitelevel``): scoring it needs the dataset's ``features.parquet``."""
    return any(f in DATASET_FEATURES or any(f.endswith("_" + d) for d in DATASET_FEATURES)
               for f in features)
