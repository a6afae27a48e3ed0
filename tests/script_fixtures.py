"""Pages built by their scripts, shared by the tests of the walk, the streamed segments, the
rendered mode, extraction and bench/script_pages.py."""
from __future__ import annotations

#: A forum page as Discourse serves it to clients without scripts: an empty shell the scripts
#: would fill, the thread itself in <noscript>, and a tracking pixel in another <noscript>.
SCRIPT_SHELL = """<html><head><title>Forum</title><script src="app.js"></script></head><body>
<div id="app"></div><section id="main"><div class="spinner"></div></section>
<noscript data-path="/t/topic/1"><header><a href="/">Forum home</a> <a href="/latest">Latest</a></header>
<div id="main-outlet"><h1>Why the update broke our documents</h1>
<div class="post"><p>The update released last night broke document reviews for our whole team. We rely
on them every day, and since the update every review stops halfway with an error.</p>
<p>Grammar checks now refer us elsewhere, and reverting to the old settings did not help at all.</p></div>
<div class="post"><p>Same here: every review since yesterday fails halfway, and the support page says
nothing about it yet.</p></div></div>
<footer>Powered by a forum engine</footer></noscript>
<noscript><img src="pixel.gif"></noscript>
</body></html>"""


#: A shop page streamed by React: a boundary (B:0) whose list came late, a placeholder (P:1) for
#: the reviews, and a segment no script places. The two functions are written here after React's
#: behaviour (not its code) so that a browser running this page does what React's runtime does.
STREAMED = """<html><head><title>Shop</title></head><body>
<header><a href="/">Shop home</a></header>
<main><h1>Sofas</h1>
<!--$?--><template id="B:0"></template><div class="skeleton"><span></span></div><!--/$-->
<p>Static text after the list.</p>
<template id="P:1"></template>
<footer>Footer links</footer></main>
<script>
function $RS(a, b) {
  a = document.getElementById(a); b = document.getElementById(b);
  a.parentNode.removeChild(a);
  while (a.firstChild) b.parentNode.insertBefore(a.firstChild, b);
  b.parentNode.removeChild(b);
}
function $RC(b, c) {
  c = document.getElementById(c); b = document.getElementById(b);
  c.parentNode.removeChild(c);
  if (!b) return;
  var start = b.previousSibling, f = b.parentNode, a = start.nextSibling, depth = 0;
  do {
    if (a && a.nodeType === 8) {
      var d = a.data;
      if (d === "/$") { if (depth === 0) break; depth--; }
      else if (d === "$" || d === "$?" || d === "$!") depth++;
    }
    var next = a.nextSibling; f.removeChild(a); a = next;
  } while (a);
  while (c.firstChild) f.insertBefore(c.firstChild, a);
  start.data = "$";
}
</script>
<div hidden id="S:0">Two sofas <ul><li>Orndorff Sofa, two colours</li><li>Kirkwood Sofa, in stock</li></ul>
end of the list</div>
<script>$RC("B:0","S:0")</script>
<div hidden id="S:1"><section>Reviews: rated 4.5 of 5</section></div>
<script>$RS("S:1","P:1")</script>
<div hidden id="S:9"><p>Never placed</p></div>
</body></html>"""


#: A result page streamed by Marko (``<await client-reorder>``, as eBay's pages are), runtime id
#: "shop": the results' fragment (afshop1) fills a ``<noscript>`` placeholder; the facets'
#: fragment (afshop2) replaces a skeleton that says "Loading"; fragment 3, whose placeholder lies
#: inside fragment 2's content, waits for it (``$afshop(3,2)`` comes first); fragment 4 is never
#: placed. The function is written here after Marko's behaviour (not its code) so that a browser
#: running the page does what Marko's runtime does.
MARKO = """<html><head><title>Results</title></head><body>
<header><a href="/">Shop home</a></header>
<main><h1>Results for lamps</h1>
<aside><span id="afshopph2"><div class="skeleton">Loading</div></span></aside>
<noscript id="afshopph1"></noscript>
<p>Prices include taxes.</p></main>
<footer>Footer links</footer>
<script>
function $afshop(id, after) {
  var self = $afshop;
  if (after && !self[after]) { (self[after + "$"] = self[after + "$"] || []).push(id); return; }
  var from = document.getElementById("afshop" + id), to = document.getElementById("afshopph" + id);
  var moved = document.createDocumentFragment();
  while (from.firstChild) moved.appendChild(from.firstChild);
  if (to) to.parentNode.replaceChild(moved, to);
  self[id] = 1;
  var queued = self[id + "$"] || [];
  for (var i = 0; i < queued.length; i++) self(queued[i]);
}
</script>
<div id="afshop1" style="display:none">3 results <ul><li>Brass desk lamp, 40 euros</li>
<li>Paper floor lamp, 25 euros</li><li>Glass table lamp, 60 euros</li></ul></div>
<script>$afshop(1)</script>
<div id="afshop3" style="display:none"><b>Brass</b> and <b>paper</b></div>
<script>$afshop(3, 2)</script>
<div id="afshop2" style="display:none">Filter by material: <span id="afshopph3">...</span> only</div>
<script>$afshop(2)</script>
<div id="afshop4" style="display:none"><p>Never placed</p></div>
</body></html>"""


def words(walk) -> list[str]:
    """A walk's words in document order (its text segments split on whitespace)."""
    return " ".join(t for _, t in walk.segments).split()
