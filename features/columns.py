"""Names of the feature-table columns: one place for the feature sets every stage uses."""
from __future__ import annotations

#: The five features of seed 003 §3.4, in the order of its ARFF file (Figure 3.3).
THESIS_FEATURES: list[str] = ["ctd", "density_sum", "query_score", "matches", "distance"]

#: CETD's raw counts and text density (seed 003 §2.1.5).
COUNTS: list[str] = ["chars", "tags", "link_chars", "link_tags", "td"]

#: Identifying columns of each row.
KEYS: list[str] = ["dataset", "site", "page", "node", "parent", "xpath", "tag"]

#: The class column: "S" noise, "N" content (seed 003 Figure 3.3); missing without gold.
LABEL = "label"
NOISE, CONTENT = "S", "N"
CLASSES: list[str] = [NOISE, CONTENT]
