"""``hwnoise train FILE.arff``: J48 on a Weka user's ARFF file, printed as ``J48 -t FILE.arff``.

Why: a Weka user checks hwnoise against Weka on their own files. With no options, a file
without hwnoise's ``page`` attribute gets what J48 prints by default: the tree trained on every
row, then stratified 10-fold cross-validation with Weka's own fold assignment
(:func:`hwnoise.training.protocols.weka_cv_folds`) and its summary and confusion matrix
(:class:`hwnoise.training.weka_eval.WekaEvaluation`). Nominal attributes, any class set, rows
of missing class and instance weights (``{w}`` after a row) are taken as J48 takes them. The
table stays numpy from file to tree (no DataFrame), so files with 100k+ attributes train in
bounded memory.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hwnoise.errors import HwnoiseError
from hwnoise.training.arff import ArffTable, load_arff
from hwnoise.training.c45 import C45Classifier
from hwnoise.training.metrics import scores_from_matrix
from hwnoise.training.protocols import weka_cv_folds
from hwnoise.training.weka_eval import WekaEvaluation

#: classifiers this path runs (J48 and its unpruned form); others go through the feature table
J48_NAMES = ("j48", "j48-unpruned")


@dataclass
class ArffRun:
    """A fitted tree on an ARFF table and its cross-validation."""
    table: ArffTable
    clf: C45Classifier
    tree: str
    evaluation: WekaEvaluation | None
    folds: int
    seed: int
    params: dict = field(default_factory=dict)

    def text(self, tree: bool = True) -> str:
        """The tree and the evaluation, laid out as J48 prints them."""
        parts = []
        if tree:
            parts.append(self.tree)
        if self.evaluation is not None:
            parts.append(self.evaluation.cv_text())
        return "\n\n".join(parts)

    def record(self) -> dict:
        """The report record: weighted scores and the confusion matrix (rows actual)."""
        ev = self.evaluation
        rec = {"dataset": Path(self.table.source).stem, "protocol": "weka-cv", "folds": self.folds,
               "seed": self.seed, "method": "model", "classifier": "j48", "classes": self.table.classes}
        if ev is not None:
            rec.update(scores_from_matrix(ev.matrix, self.table.classes))
            rec["kappa"] = ev.kappa()
            rec["ignored_class_unknown"] = int(ev.missing_class)
        return rec


def _labels(t: ArffTable) -> np.ndarray:
    return np.asarray(t.classes, dtype=object)[np.maximum(t.y, 0)]


def _fit(t: ArffTable, rows: np.ndarray, params: dict) -> C45Classifier:
    y = t.y[rows]
    lab = y >= 0
    if not lab.any():
        raise HwnoiseError(f"{t.source}: no rows with a known class to train on")
    X = t.X[rows]
    w = None if t.weights is None else t.weights[rows][lab]
    return C45Classifier(**params).fit(X[lab], _labels(t)[rows][lab], sample_weight=w, class_order=t.classes,
                                       nominal=t.nominal, X_unlabelled=X[~lab], empty_ok=True)


def j48_params(classifier: str = "j48", params: dict | None = None) -> dict:
    """C45Classifier parameters for ``--classifier`` and ``--param`` (J48's defaults otherwise)."""
    out = dict(params or {})
    if classifier.lower() == "j48-unpruned":
        out["unpruned"] = True
    try:
        C45Classifier(**out)._check_params()
    except (TypeError, ValueError) as exc:
        raise HwnoiseError(f"--param: {exc}") from None
    return out


def run_arff(table: ArffTable | str | os.PathLike, *, classifier: str = "j48", params: dict | None = None,
             folds: int = 10, seed: int = 1, cv: bool = True) -> ArffRun:
    """Fit J48 on every row of an ARFF file and cross-validate it as ``J48 -t`` does."""
    t = table if isinstance(table, ArffTable) else load_arff(table)
    p = j48_params(classifier, params)
    all_rows = np.arange(t.X.shape[0])
    clf = _fit(t, all_rows, p)
    tree = clf.export_text(t.names, t.classes).rstrip("\n")
    ev = None
    if cv:
        ev = WekaEvaluation(t.classes)
        w = t.weights
        for train, test in weka_cv_folds(t.y, folds, seed):
            ev.set_priors(t.y[train], None if w is None else w[train])
            if not (t.y[train] >= 0).any():
                continue
            m = _fit(t, train, p)
            ev.add(m.predict_proba(t.X[test]), t.y[test], None if w is None else w[test])
    return ArffRun(table=t, clf=clf, tree=tree, evaluation=ev, folds=folds, seed=seed, params=p)


def noise_model(run: ArffRun, classifier: str = "j48"):
    """The fitted tree as a :class:`NoiseModel` (model.json/model.joblib), any class set."""
    from hwnoise.training.model import NoiseModel

    t = run.table
    model = NoiseModel(classifier, list(t.names), params=run.params)
    model.estimator = run.clf
    model.categories = {t.names[j]: list(v) for j, v in t.nominal.items()}
    lab = t.y >= 0
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(t.X[lab]).tobytes())
    digest.update(t.y[lab].tobytes())
    if t.weights is not None:
        digest.update(t.weights[lab].tobytes())
    model.train_hash = "sha256:" + digest.hexdigest()
    model.train_rows = int(lab.sum())
    model.protocol = "weka-cv" if run.evaluation is not None else None
    model.scores = [run.record()]
    return model
