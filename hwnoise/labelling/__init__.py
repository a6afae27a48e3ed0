"""Node labels for crawls without gold: automatic (``auto``) and by a person (``serve``)."""
