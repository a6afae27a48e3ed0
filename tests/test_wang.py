"""Wang et al.'s title and body SVMs (``wang``): trained on one made site, applied to another."""
from __future__ import annotations

import random

import pytest

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import ExtractorError
from hwnoise.extractors.wang import BODY_FEATURES, TITLE_FEATURES, make
from hwnoise.features.render import chromium_available, render_dataset
from hwnoise.features.walk import walk_page
from hwnoise.text import text_scores

pytestmark = pytest.mark.skipif(not chromium_available(),
                                reason="needs /usr/bin/chromium and playwright")

WORDS = ("river valley farmer council budget school teacher station train market price "
         "weather storm harbour bridge museum library garden doctor hospital election vote "
         "road village city report season team match player coach").split()


def _sentence(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(k)).capitalize() + "."


def _article(rng: random.Random):
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 9))).capitalize()
    paras = [" ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(rng.randint(2, 4)))
             for _ in range(rng.randint(3, 6))]
    links = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 6))) for _ in range(8)]
    return title, paras, links


def site_a(rng):
    title, paras, links = _article(rng)
    html = f"""<html><head><style>body{{margin:0;font:16px Georgia}}
      .top{{height:90px;background:#036}} .top a{{color:white;margin:6px}}
      .wrap{{width:960px;margin:0 auto}} .main{{float:left;width:640px}}
      .rail{{float:right;width:280px;font-size:13px}} h1{{font-size:30px}}
      .foot{{clear:both;font-size:11px}}</style></head><body>
      <div class=top>{"".join(f'<a href="/s{i}">{w}</a>' for i, w in enumerate(WORDS[:8]))}</div>
      <div class=wrap><div class=main><h1>{title}</h1><div class=story>
      {"".join(f"<p>{p}</p>" for p in paras)}</div></div>
      <div class=rail><h3>Most read</h3><ul>{"".join(f'<li><a href="/r">{x}</a></li>' for x in links)}</ul></div>
      <div class=foot>About us. Contact. Terms of use. Privacy.</div></div></body></html>"""
    return html, title + "\n\n" + "\n\n".join(paras)


def site_b(rng):
    title, paras, links = _article(rng)
    html = f"""<html><head><style>body{{margin:0;font:15px Arial}}
      #masthead{{height:140px}} #menu{{position:absolute;left:0;top:140px;width:220px;font-size:12px}}
      #content{{margin-left:260px;width:700px}} .headline{{font-size:26px;font-weight:bold;margin:10px 0}}
      #bottom{{font-size:10px;margin-left:260px}}</style></head><body>
      <div id=masthead><span>The Daily Example</span></div>
      <div id=menu>{"".join(f'<div><a href="/m">{x}</a></div>' for x in links)}</div>
      <div id=content><div class=headline>{title}</div><div class=byline>By a reporter</div>
      <div class=text>{"".join(f"<p>{p}</p>" for p in paras)}</div>
      <div class=share>Share this story. Print. Email.</div></div>
      <div id=bottom>Copyright. All rights reserved. Advertise with us.</div></body></html>"""
    return html, title + "\n\n" + "\n\n".join(paras)


def _make(tmp_path, name, maker, n, seed):
    rng = random.Random(seed)
    ds = Dataset.create(tmp_path / name, name=name, source="test")
    for k in range(n):
        html, gold = maker(rng)
        sub = ds.add_submission({"url": f"http://{name}.test/{k}", "fields": []})
        ds.write_page(sub["id"], html.encode())
        ds.write_gold(sub["id"], gold)
    return ds


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wang")
    a = _make(tmp, "site_a", site_a, 6, 1)
    b = _make(tmp, "site_b", site_b, 5, 2)
    for ds in (a, b):
        assert render_dataset(ds, workers=2, progress=False)["failed"] == 0
    return a, b


def test_trained_on_one_site_finds_title_and_body_on_another(sites):
    a, b = sites
    method = make(render_missing=False).fit(list(a.pages()))
    assert method.body_model_ is not None and method.title_model_ is not None
    assert method.body_model_[-1].kernel == "rbf"
    assert method.body_model_[0].n_features_in_ == len(BODY_FEATURES)
    assert method.title_model_[0].n_features_in_ == len(TITLE_FEATURES)
    for ds in (a, b):
        for page in ds.pages():
            text = method.extract(page)
            gold = page.read_gold()
            title = gold.splitlines()[0]
            assert text.splitlines()[0] == title, (ds.name, text[:200])
            assert text_scores(text, gold)["f1"] > 0.95, ds.name
            assert "Most read" not in text and "Copyright" not in text


def test_train_on_names_the_training_site_and_needs_gold(sites, tmp_path):
    a, b = sites
    method = make(train_on=str(a.path), render_missing=False).fit(list(b.pages()))
    page = next(iter(b.pages()))
    labels = method.node_labels(page, walk_page(page.read_html()))
    assert set(labels) == {"N", "S"}
    nogold = Dataset.create(tmp_path / "nogold", name="nogold", source="test")
    sub = nogold.add_submission({"url": "http://x.test/1", "fields": []})
    nogold.write_page(sub["id"], b"<html><body><p>text</p></body></html>")
    with pytest.raises(ExtractorError, match="no training page"):
        make(render_missing=False).fit(list(nogold.pages()))
    with pytest.raises(ExtractorError, match="not fitted"):
        make().extract(page)
