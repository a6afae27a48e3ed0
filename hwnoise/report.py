"""report.md and PNG figures from a report dict, in the shapes of seed 003's chapter 4.

- Table 4.1: the methods side by side per dataset (P, R, F1 of each, text level);
- Table 4.3: one method per table, text-level P, R, F1 (and the F1 of the means that the
  thesis reports);
- Table 4.4: node-level weighted P, R, F1, with ``content_f1`` beside them;
- Table 4.5: the confusion matrix RR, RC, CC, CR;
- Figures 4.5 and 4.6: precision and recall per dataset and method (grouped bars), and one
  confusion-matrix figure per method that labels nodes.

Every table ends with a mean row. Figures use matplotlib's Agg backend (no display needed).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hwnoise.dataset import atomic_write_bytes, atomic_write_text
from hwnoise.outputs import markdown_text, printable
from hwnoise.training.metrics import CONFUSION


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _mean(values: Sequence[Any]) -> float | None:
    vals = [float(v) for v in values if isinstance(v, (int, float)) and not
            (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else None


def format_table(rows: Sequence[Sequence[Any]], header: Sequence[str], *, markdown: bool = False,
                 digits: int = 3) -> str:
    """A table as aligned text for the terminal (its cells ``printable``), or as a Markdown table
    (its cells ``markdown_text``)."""
    cells = [[printable(_fmt(c, digits)) for c in row] for row in rows]
    head = [printable(h) for h in header]
    if markdown:
        cells = [[markdown_text(c) for c in r] for r in cells]
        head = [markdown_text(h) for h in head]
        lines = ["| " + " | ".join(head) + " |",
                 "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in cells]
        return "\n".join(lines)
    widths = [max(len(head[i]), *(len(r[i]) for r in cells)) if cells else len(head[i])
              for i in range(len(head))]
    def line(r: Sequence[str]) -> str:
        return "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _index(report: dict) -> tuple[list[str], list[str], dict[tuple[str, str], dict]]:
    datasets: list[str] = []
    methods: list[str] = []
    by: dict[tuple[str, str], dict] = {}
    for r in report.get("results", []):
        if r["dataset"] not in datasets:
            datasets.append(r["dataset"])
        if r["method"] not in methods:
            methods.append(r["method"])
        by[(r["dataset"], r["method"])] = r
    return datasets, methods, by


def _ci(se: float | None) -> float | None:
    """The half-width of a mean page score's 95 % interval (1.96 standard errors)."""
    return None if se is None else 1.96 * se


def _with_mean(rows: list[list[Any]], label: str = "mean", keep: Sequence[int] = ()) -> list[list[Any]]:
    """``rows`` and a row of their column means; columns in ``keep`` (an interval's half-width,
    which does not average) get none."""
    if not rows:
        return rows
    ncol = len(rows[0])
    mean: list[Any] = [label]
    for i in range(1, ncol):
        if i in keep:
            mean.append(None)
            continue
        col = [r[i] for r in rows]
        m = _mean(col)
        counts = all(isinstance(v, int) and not isinstance(v, bool) for v in col)
        mean.append(f"{m:.1f}" if counts and m is not None else m)
    return rows + [mean]


def _methods_with(by: dict, datasets: list[str], methods: list[str], key: str) -> list[str]:
    return [m for m in methods if any(key in by.get((d, m), {}) for d in datasets)]


def summary_table(report: dict, *, markdown: bool = False) -> str:
    """One line per dataset and method: the figures a user reads first (for the terminal)."""
    header = ["dataset", "method", "pages", "text P", "text R", "text F1", "F1 of means",
              "node F1", "content F1", "value recall"]
    rows = []
    for r in report.get("results", []):
        rows.append([r["dataset"], r["method"], r.get("pages"), r.get("text_precision"),
                     r.get("text_recall"), r.get("text_f1"), r.get("text_f1_of_means"),
                     r.get("f1"), r.get("content_f1"), r.get("value_recall")])
    if any("record_f1" in r for r in report.get("results", [])):  # the record level, where gold has records
        header.append("record F1")
        for row, r in zip(rows, report.get("results", [])):
            row.append(r.get("record_f1"))
    return format_table(rows, header, markdown=markdown)


def markdown_report(report: dict, figures: Sequence[str] = ()) -> str:
    """The whole report.md text; it links the figure files named in ``figures`` (those written)."""
    datasets, methods, by = _index(report)
    out = _head(report)
    out += _text_sections(by, datasets, _methods_with(by, datasets, methods, "text_f1"))
    out += _value_section(by, datasets, _methods_with(by, datasets, methods, "value_recall"))
    out += _record_section(by, datasets, _methods_with(by, datasets, methods, "record_f1"))
    out += _node_sections(by, datasets, _methods_with(by, datasets, methods, "f1"))
    failed = [r for r in report.get("results", []) if r.get("failures")]
    if failed:
        out += ["## Failures", "", "Pages a method could not handle score as empty output.", ""]
        out += [f"- {markdown_text(r['dataset'])} / {markdown_text(r['method'])}: {r['failures']} pages "
                f"(last: {markdown_text(r.get('last_error', ''))})" for r in failed]
        out.append("")
    figs = [Path(f).name for f in figures]
    if figs:
        out += ["## Figures (shapes of Figures 4.5 and 4.6)", ""] + \
            [f"![{f[:-4]}]({f})" for f in figs] + [""]
    return "\n".join(out)


def _head(report: dict) -> list[str]:
    """The title, what the levels mean, and what each method was asked for."""
    out = [f"# hwnoise evaluation ({report.get('protocol', '')} protocol)", "",
           f"hwnoise {report.get('hwnoise', '')}, {report.get('created', '')}; seed "
           f"{report.get('seed', '')}. Text level: P = |LCS|/|extracted|, R = |LCS|/|gold| over "
           "words, means over pages (`text_f1` is the mean of the pages' F1; `F1 of means` is "
           "2PR/(P+R) of the mean P and R, as seed 003's Tables 4.1 and 4.3 report). Node level: "
           "weighted as Weka weights the classes, with the content class's F1 beside it.", ""]
    asked = {**{m: o for m, o in (report.get("method_options") or {}).items() if o},
             **({"model (given)": report["model_spec"]} if report.get("model_spec") else {})}
    for method, opts in asked.items():  # what each method was asked for (report.json has it too)
        given = ", ".join(f"{k} {v}" for k, v in opts.items() if v not in (None, "", [], {}, False))
        out += [f"Options of `{method}`: {given}.", ""]
    return out


def _text_sections(by: dict, datasets: list, text_methods: list) -> list[str]:
    """The text level: the methods side by side (Table 4.1), then each method (Table 4.3)."""
    if not text_methods:
        return []
    out = ["## Text level, the methods side by side (shape of Table 4.1)", ""]
    header = (["Dataset"] + [f"P-{m}" for m in text_methods] + [f"R-{m}" for m in text_methods]
              + [f"F1-{m}" for m in text_methods])
    rows = []
    for d in datasets:
        if not any("text_f1" in by.get((d, m), {}) for m in text_methods):
            continue
        rows.append([d] + [by.get((d, m), {}).get("text_precision") for m in text_methods]
                    + [by.get((d, m), {}).get("text_recall") for m in text_methods]
                    + [by.get((d, m), {}).get("text_f1") for m in text_methods])
    out += [format_table(_with_mean(rows), header, markdown=True), ""]
    out += ["## Text level per method (shape of Table 4.3)", ""]
    for m in text_methods:
        rows = [[d, r.get("pages"), r.get("text_precision"), r.get("text_recall"),
                 r.get("text_f1"), _ci(r.get("text_f1_se")), r.get("text_f1_of_means")]
                for d in datasets if "text_f1" in (r := by.get((d, m), {}))]
        out += [f"### {m}", "",
                format_table(_with_mean(rows, keep=(5,)), ["Dataset", "pages", "Precision", "Recall",
                                                           "F1", "± 95 %", "F1 of means"],
                             markdown=True), ""]
    return out


def _value_section(by: dict, datasets: list, value_methods: list) -> list[str]:
    """Attribute values found, where the gold is SWDE-like."""
    if not value_methods:
        return []
    header = ["Dataset"] + [f"value recall-{m}" for m in value_methods] + \
        [f"words-{m}" for m in value_methods]
    rows = [[d] + [by.get((d, m), {}).get("value_recall") for m in value_methods]
            + [by.get((d, m), {}).get("words") for m in value_methods]
            for d in datasets if any("value_recall" in by.get((d, m), {}) for m in value_methods)]
    return ["## Attribute values found (SWDE-like gold)", "",
            format_table(_with_mean(rows), header, markdown=True, digits=3), ""]


def _record_section(by: dict, datasets: list, record_methods: list) -> list[str]:
    """The record level, where the gold has records."""
    if not record_methods:
        return []
    out = ["## Record level (gold records as XPaths)", "",
           "Predicted and gold records matched one to one by the Jaccard overlap of their "
           "XPath sets (Hungarian), partial credit, each record first expanded to the XPaths "
           "of the text below it, as NEXT-EVAL's paper does; *element F1*: the same over the "
           "records' own XPaths (the gold's very element). Means over pages "
           "(`hwnoise.training.record_metrics`).", ""]
    for m in record_methods:
        rows = [[d, r.get("record_pages"), r.get("record_precision"), r.get("record_recall"),
                 r.get("record_f1"), _ci(r.get("record_f1_se")), r.get("element_record_f1")]
                for d in datasets if "record_f1" in (r := by.get((d, m), {}))]
        out += [f"### {m}", "", format_table(_with_mean(rows, keep=(5,)),
                                             ["Dataset", "pages", "Precision", "Recall", "F1", "± 95 %",
                                              "element F1"], markdown=True), ""]
    return out


def _node_sections(by: dict, datasets: list, node_methods: list) -> list[str]:
    """The node level per method (Table 4.4), then the confusion matrices (Table 4.5)."""
    if not node_methods:
        return []
    out = ["## Node level (shape of Table 4.4)", ""]
    for m in node_methods:
        rows = [[d, r.get("nodes"), r.get("precision"), r.get("recall"), r.get("f1"),
                 r.get("content_f1")]
                for d in datasets if "f1" in (r := by.get((d, m), {}))]
        out += [f"### {m}", "",
                format_table(_with_mean(rows), ["Dataset", "nodes", "Precision", "Recall", "F1",
                                                "content F1"], markdown=True), ""]
    out += ["## Confusion matrices (shape of Table 4.5)", "",
            "RR noise as noise, RC noise as content, CC content as content, CR content as noise.", ""]
    for m in node_methods:
        rows = [[d] + [r.get(k) for k in CONFUSION]
                for d in datasets if "RR" in (r := by.get((d, m), {}))]
        table = _with_mean(rows)
        if rows:
            table.append(["total"] + [sum(int(r[i]) for r in rows) for i in range(1, 5)])
        out += [f"### {m}", "", format_table(table, ["Dataset", *CONFUSION], markdown=True,
                                             digits=1), ""]
    return out


def write_markdown(report: dict, path: str | Path, figures: Sequence[str] = ()) -> Path:
    path = Path(path)
    atomic_write_text(path, markdown_report(report, figures))
    return path


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "method"


def _bar_figure(report: dict, kind: str, path: Path) -> Path | None:
    """Grouped bars of ``kind`` (precision|recall) per dataset and method (Figures 4.5, 4.6).

    Text-level figures where a method has them, node-level (weighted) otherwise, as the
    thesis put CETD's text scores beside its model's node scores.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    datasets, methods, by = _index(report)
    series = []
    for m in methods:
        text_key, node_key = f"text_{kind}", kind
        if any(text_key in by.get((d, m), {}) for d in datasets):
            key, level = text_key, "text"
        elif any(node_key in by.get((d, m), {}) for d in datasets):
            key, level = node_key, "node"
        else:
            continue
        vals = [by.get((d, m), {}).get(key, np.nan) for d in datasets]
        series.append((f"{m} ({level})", np.asarray(vals, dtype=float)))
    if not series or not datasets:
        return None
    x = np.arange(len(datasets))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(datasets) * max(1, len(series)) ** 0.5 + 2), 4.8))
    for i, (label, vals) in enumerate(series):
        ax.bar(x - 0.4 + width * (i + 0.5), np.nan_to_num(vals), width, label=label)
    ax.set_xticks(x)
    # parse_math off: a name such as 'a $\frac$ b' is text, not TeX that matplotlib refuses
    ax.set_xticklabels(datasets, rotation=60 if len(datasets) > 6 else 0, ha="right" if len(datasets) > 6 else "center",
                       fontsize=8, parse_math=False)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(kind.capitalize())
    ax.set_title(f"{kind.capitalize()} per dataset and method", pad=28)
    ax.legend(fontsize=8, ncol=min(6, len(series)), loc="lower center", bbox_to_anchor=(0.5, 1.0),
              frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)
    return path


def _confusion_figure(report: dict, method: str, path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    recs = [r for r in report.get("results", []) if r["method"] == method and "RR" in r]
    if not recs:
        return None
    rr, rc, cc, cr = (sum(int(r[k]) for r in recs) for k in CONFUSION)
    mat = np.array([[rr, rc], [cr, cc]], dtype=float)
    fig, ax = plt.subplots(figsize=(4.2, 3.8))
    shares = mat / np.maximum(mat.sum(axis=1, keepdims=True), 1)
    ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    for (i, j), v in np.ndenumerate(mat):
        ax.text(j, i, f"{int(v)}\n{shares[i, j]:.1%}", ha="center", va="center",
                color="white" if shares[i, j] > 0.6 else "black")
    ax.set_xticks([0, 1], ["noise (S)", "content (N)"])
    ax.set_yticks([0, 1], ["noise (S)", "content (N)"])
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.set_title(f"{method}: nodes of {len(recs)} dataset(s)")
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)
    return path


def _save_png(fig: Any, path: Path) -> None:
    """``fig`` as a PNG at ``path``, written whole or not at all (temp file + rename), as the
    report's other files are: an evaluation stopped while it drew left a PNG cut short."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    atomic_write_bytes(path, buf.getvalue())


_BARS = ("precision", "recall")


def figure_names(methods: Sequence[str]) -> list[str]:
    """The file names ``write_figures`` may write for these methods: precision.png, recall.png
    and confusion-METHOD.png (the method's name made a file name)."""
    return [f"{kind}.png" for kind in _BARS] + [f"confusion-{_slug(m)}.png" for m in methods]


def write_figures(report: dict, out: str | Path) -> list[Path]:
    """precision.png, recall.png and confusion-METHOD.png under ``out`` (``figure_names``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _, methods, _ = _index(report)
    names = figure_names(methods)
    written = []
    for kind, name in zip(_BARS, names):
        p = _bar_figure(report, kind, out / name)
        if p:
            written.append(p)
    for m, name in zip(methods, names[len(_BARS):]):
        p = _confusion_figure(report, m, out / name)
        if p:
            written.append(p)
    return written
