"""A search form read from its page, and the submissions made by filling it.

``read_form`` finds the form's action (resolved against the page URL), method, enctype and
every control with its default (hidden inputs included), plus the label a person sees beside
each control (seed 003 §5.1): ``<label for>``, a wrapping ``<label>``, ``aria-labelledby``,
``aria-label``, the text of the table cell before the control (a placeholder is often only an
example, so it comes after), ``placeholder``, ``title``.
``submissions_from_form`` submits it once per value set, as a browser would.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.html

from hwnoise.decode import form_charset_name
from hwnoise.errors import HwnoiseError, counted
from hwnoise.jsontext import parse_json
from hwnoise.markup import MAX_DEPTH, flatten_deep, stopped_too_deep
from hwnoise.pagefiles import names_a_file
from hwnoise.text import collapse_space

from .owners import CONTROLS, OWNER, mark_owners
from .submissions import make_submission


class FormError(HwnoiseError):
    """A form page or a values file cannot be used; the message names the page or file."""


#: the encodings a browser submits a form in (an enctype it does not know is the first)
ENCTYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")
#: the types of <input> a browser knows (any other, " hidden" too, is a text field)
_INPUT_TYPES = ("hidden", "text", "search", "tel", "url", "email", "password", "date", "month", "week", "time",
                "datetime-local", "number", "range", "color", "checkbox", "radio", "file", "submit", "image",
                "reset", "button")
#: input types whose value is one line (a browser strips the line breaks a page or a script gives it)
_ONE_LINE = frozenset({"text", "search", "tel", "url", "email", "password"})
_LINE_BREAK_RE = re.compile(r"\r\n?|\n")
#: input types that are never sent, or that a value set cannot fill
_NOT_SENT = {"reset", "button", "image"}


@dataclass
class FormField:
    """One control of a form: its name, what it sends by default, and what a person sees."""

    name: str
    type: str                      # text, hidden, select, textarea, checkbox, radio, submit, ...
    value: str | None = None       # the value sent by default (None: not sent by default)
    label: str | None = None       # the visible label, where one was found
    options: list[str] = field(default_factory=list)   # values of a select / radio group / checkbox
    option_labels: list[str] = field(default_factory=list)
    multiple: bool = False
    defaults: list[str] = field(default_factory=list)  # every default value (multi-selects)
    #: a text field's, textarea's, hidden field's or submit input's ``dirname``: the name its direction
    #: is sent under (``q.dir=ltr``)
    dirname: str | None = None
    direction: str = "ltr"         # its directionality: ltr, rtl, or auto (from the value sent)


@dataclass
class Form:
    """A form read from a page."""

    page_url: str | None
    action: str
    method: str = "GET"
    enctype: str = "application/x-www-form-urlencoded"
    fields: list[FormField] = field(default_factory=list)
    charset: str = "utf-8"         # the encoding names and values are sent in (page's or accept-charset)
    #: the cookies the form page's answer set (a session the site answers searches in), for the submissions
    cookies: list = field(default_factory=list, repr=False)
    #: the robots.txt read to fetch the form page (origin -> rules), for the submissions' fetcher:
    #: each host's robots.txt read once per run
    robots_rules: dict = field(default_factory=dict, repr=False)

    def field(self, name: str) -> FormField | None:
        return next((f for f in self.fields if f.name == name), None)

    def default_fields(self) -> list[dict]:
        """What the form sends untouched, in document order: ``[{name, value, label, type}]``."""
        out = []
        for f in self.fields:
            for v in f.defaults:
                out.append({"name": f.name, "value": v, "label": f.label, "type": f.type})
        return out


def _text(el) -> str:
    return collapse_space(el.text_content()) if el is not None else ""


def _label_text(label, control) -> str:
    """A label's text without the text of controls inside it (a select's options)."""
    parts = []

    def walk(node):
        if node is not label and node.tag in ("select", "textarea", "option", "script", "style"):
            return
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str):
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(label)
    return collapse_space(" ".join(parts))


def _cell_label(control) -> str:
    """The text of the table cell before the control's cell (or the row's header cell)."""
    cell = next((a for a in control.iterancestors() if a.tag in ("td", "th")), None)
    if cell is None:
        return ""
    prev = cell.getprevious()
    while prev is not None:
        if prev.tag in ("td", "th") and _text(prev):
            return _text(prev)
        prev = prev.getprevious()
    # a label-less cell that holds text before the control: "Title: <input>"
    before = []
    if cell.text:
        before.append(cell.text)
    for child in cell:
        if child is control or control in child.iterdescendants():
            break
        before.append(child.text_content() or "")
        before.append(child.tail or "")
    return collapse_space(" ".join(before))


def _visible_label(control, root, labels_for: dict[str, Any]) -> str | None:
    cid = control.get("id")
    if cid and cid in labels_for:
        text = _label_text(labels_for[cid], control)
        if text:
            return text
    wrapping = next((a for a in control.iterancestors() if a.tag == "label"), None)
    if wrapping is not None:
        text = _label_text(wrapping, control)
        if text:
            return text
    ids = (control.get("aria-labelledby") or "").split()
    if ids:
        texts = [_text(root.get_element_by_id(i, None)) for i in ids]
        text = collapse_space(" ".join(t for t in texts if t))
        if text:
            return text
    if (control.get("aria-label") or "").strip():
        return collapse_space(control.get("aria-label"))
    text = _cell_label(control).rstrip(":").strip()
    if text:
        return text
    if (control.get("placeholder") or "").strip():
        return collapse_space(control.get("placeholder"))
    if (control.get("title") or "").strip():
        return collapse_space(control.get("title"))
    return None


def _is_url(text: str) -> bool:
    """Whether a form page given as text is an http(s) URL: one word, a '<' in it or not (a URL may
    hold one, which is sent as %3C, as a browser sends it); HTML given as text is not one word."""
    word = text.strip()
    return urlsplit(word).scheme.lower() in ("http", "https") and not any(c.isspace() for c in word)


def _load(html_or_url: str | bytes, base_url: str | None,
          **fetch_kw: Any) -> tuple[str, str | None, str, list, dict]:
    """The page's HTML, its URL, its encoding (as a browser decodes it), the cookies its answer
    set and the robots.txt read to fetch it: fetched (http/https), read from a file, or given (text
    given is taken as UTF-8)."""
    if isinstance(html_or_url, bytes):
        return (*_decoded(html_or_url, None, base_url), [], {})
    text = str(html_or_url)
    if _is_url(text):
        from .fetch import Fetcher, FetchSettings

        settings = FetchSettings(**{"delay": 0, **fetch_kw})
        with Fetcher(settings) as fetcher:
            res = fetcher.fetch(text.strip())
            cookies = list(fetcher.cookies)
        return (*_decoded(res.body, res.http_charset, res.final_url), cookies, fetcher.robots.rules)
    if names_a_file(text):
        return (*_decoded(Path(text).read_bytes(), None, base_url or Path(text).resolve().as_uri()), [], {})
    if "<" not in text and text.strip():  # no markup: a path or URL mistyped, not a page without forms
        what = "a folder" if os.path.isdir(text) else "no such file"
        raise FormError(f"{text}: {what}, and not an http or https URL of a form page")
    return text, base_url, "utf-8", [], {}


def _decoded(body: bytes, http_charset: str | None, url: str | None) -> tuple[str, str | None, str]:
    """A page's bytes decoded as a browser decodes them: ``(html, url, encoding)``."""
    from hwnoise.decode import decode_html

    html, encoding = decode_html(body, http_charset)
    return html, url, encoding


def read_form(html_or_url: str | bytes, *, base_url: str | None = None, form_index: int | None = None,
              **fetch_kw: Any) -> Form:
    """A form of a page given as a URL (fetched safely: pass ``allow_private=True`` for
    127.0.0.1, and any other ``FetchSettings`` option), a file path, or HTML text/bytes.

    ``form_index`` picks the form (0 = the first); by default the form with the most named
    controls is taken (the advanced search rather than the header's quick-search box).
    """
    given = html_or_url if isinstance(html_or_url, str) else ""
    where = given if _is_url(given) or len(given) < 300 and "<" not in given else (base_url or "the HTML given")
    html, page_url, encoding, cookies, robots_rules = _load(html_or_url, base_url, **fetch_kw)
    root, flattened = _parse(html, where)
    form_el = _pick_form(root, form_index, where, flattened)
    depth = sum(1 for _ in form_el.iterancestors()) + 1
    if depth > MAX_DEPTH:
        raise FormError(f"{where}: the form is nested {depth} levels deep, past the {MAX_DEPTH} a browser builds "
                        "(Chromium sends few or none of its fields from there)")
    button = _pressed_button(root, form_el)
    # the button's formaction, formmethod and formenctype stand for the form's, as in a browser
    submitter = button if button is not None else form_el

    def attr(name: str) -> str | None:
        own = submitter.get("form" + name) if submitter is not form_el else None
        return own if own is not None else form_el.get(name)

    action = (attr("action") or "").strip()
    base = _document_base(root, page_url)
    try:
        # an empty action is the page itself, whatever its <base href> says
        action = (urljoin(base, action) if action else page_url or "") if base else action
    except ValueError as exc:  # action="http://[::1/s"
        raise FormError(f"{where}: the form's action {action!r} is not a URL ({exc})") from None
    if not action:
        raise FormError(f"{where}: the form has no action and no page URL is known to resolve it against "
                        "(pass base_url)")
    method = _keyword(attr("method"), ("get", "post", "dialog"), "get").upper()
    if method == "DIALOG":
        raise FormError(f"{where}: the form's method is dialog: a browser closes the dialog it is in and sends "
                        "no request")
    enctype = _keyword(attr("enctype"), ENCTYPES, ENCTYPES[0])
    charset = _form_charset(form_el, encoding)
    fields = _form_fields(root, form_el, button)
    for f in fields:  # a hidden _charset_ field sends the form's encoding, whatever its value
        if f.type == "hidden" and f.name.isascii() and f.name.lower() == "_charset_":
            f.value = form_charset_name(charset)
            f.defaults = [f.value]
    return Form(page_url=page_url, action=action, method=method, enctype=enctype, fields=fields, charset=charset,
                cookies=cookies, robots_rules=robots_rules)


def _parse(html: str, where: str):
    """The page's tree, each form and control marked with the form a browser gives it
    (``owners``: libxml2's tree ends a form where a browser does not), and whether the page was
    flattened: libxml2 reads 2,048 levels (``huge_tree``), and a page nested deeper, which it
    stops reading there, is read again flattened to the 512 levels Chromium builds
    (``flatten_deep``), as the features walk reads it."""
    text = mark_owners(html or "<html></html>")
    for flattened in (False, True):
        parser = lxml.html.HTMLParser(encoding="utf-8", huge_tree=True)
        try:
            # the decoded text handed to libxml2 as UTF-8 bytes: lxml refuses a str that starts with an
            # XML declaration naming an encoding (XHTML pages), which a browser reads as any other page
            root = lxml.html.document_fromstring(text.encode("utf-8", "replace"), parser=parser)
        except Exception as exc:  # noqa: BLE001 - lxml's errors vary
            raise FormError(f"{where}: not readable as HTML ({exc})") from None
        if flattened or not stopped_too_deep(parser):
            return root, flattened
        text = flatten_deep(text, MAX_DEPTH)


def _keyword(value: str | None, keywords: tuple[str, ...], default: str) -> str:
    """The state of an enumerated attribute (method, enctype) as a browser reads it: its value
    when one of ``keywords`` in any case, else ``default``; not trimmed (method=" post " is GET)."""
    value = (value or "").lower() if (value or "").isascii() else ""
    return value if value in keywords else default


def _document_base(root, page_url: str | None) -> str | None:
    """The URL the page's links resolve against: its first ``<base href>`` (resolved against
    the page URL), else the page URL."""
    base = next((b for b in root.iter("base") if b.get("href") is not None), None)
    if base is None:
        return page_url
    try:
        return urljoin(page_url or "", base.get("href").strip()) or page_url
    except ValueError:  # a <base href> that is no URL is ignored, as browsers ignore it
        return page_url


def _form_charset(form_el, page_encoding: str) -> str:
    """The encoding a browser submits the form in: the first encoding ``accept-charset`` names
    that a browser knows, else the page's own."""
    from hwnoise.decode import normalize_label

    for label in (form_el.get("accept-charset") or "").split():
        if normalize_label(label):
            return normalize_label(label)
    return page_encoding


def _pick_form(root, form_index: int | None, where: str, flattened: bool = False):
    """The form ``form_index`` names, by default the one with the most named controls."""
    forms = [f for f in root.iter("form") if f.get(OWNER) not in ("x", "n")]  # not in a <template>, <noscript>
    hidden = sum(1 for f in root.iter("form") if f.get(OWNER) == "n")
    if not forms and hidden:
        raise FormError(f"{where}: no <form> on the page with scripting on (as a browser shows it); its "
                        f"{counted(hidden, 'form')} {'is' if hidden == 1 else 'are'} inside <noscript>, shown only "
                        "with scripting off")
    if not forms and flattened:
        raise FormError(f"{where}: no <form> within the {MAX_DEPTH} levels of nesting a browser builds (the page "
                        "nests deeper; Chromium sends none of the fields of a form that deep)")
    if not forms:
        raise FormError(f"{where}: no <form> on the page")
    if form_index is None:
        sizes = [sum(1 for el in _controls(root, f) if el.get("name")) for f in forms]
        form_index = sizes.index(max(sizes))
    if not 0 <= form_index < len(forms):
        raise FormError(f"{where}: form index {form_index} out of range; the page has {len(forms)} form(s)")
    return forms[form_index]


def _form_fields(root, form_el, pressed=None) -> list[FormField]:
    """The fields a submission of the form sends, in document order: a group per radio or
    checkbox name; of the submit buttons, only ``pressed`` (``_pressed_button``) sends its
    value, the others are fields a value set may name."""
    labels_for = {}
    for lab in root.iter("label"):
        if lab.get("for"):
            labels_for.setdefault(lab.get("for"), lab)
    fields: list[FormField] = []
    by_name: dict[str, FormField] = {}
    for el in _controls(root, form_el):
        name = el.get("name")
        if not name or _disabled(el):
            continue
        tag = el.tag
        kind = _button_type(el) or (_keyword(el.get("type"), _INPUT_TYPES, "text") if tag == "input" else tag)
        if kind == "image" and el is pressed:
            # a click on an image button sends where it was clicked; Enter sends 0, 0
            fields += [FormField(f"{name}.{xy}", "image", "0", None, defaults=["0"]) for xy in "xy"]
            continue
        if kind in _NOT_SENT:
            continue
        label = None if kind == "hidden" else _visible_label(el, root, labels_for)
        if kind == "file":  # sent empty (no file chosen), as Chromium sends it: ``f=``
            fields.append(FormField(name, "file", "", label, defaults=[""]))
        elif kind == "submit":
            # an input without a value sends its default caption; a button only its value attribute
            value = el.get("value", "Submit") if tag == "input" else el.get("value", "")
            label = label or (value if tag == "input" else _text(el)) or value
            # an input's dirname is sent (a <button>'s is not), its dir=auto ltr: checked in Chromium
            dirname = el.get("dirname") if tag == "input" else None
            direction = _direction(el).replace("auto", "ltr") if dirname is not None else "ltr"
            fields.append(FormField(name, "submit", value, label, defaults=[value] if el is pressed else [],
                                    dirname=dirname, direction=direction))
        elif kind in ("radio", "checkbox"):
            group = by_name.get(name)
            if group is None or group.type != kind:
                group = FormField(name, kind, None, None)
                fields.append(group)
                by_name[name] = group
            _add_choice(group, el, root, labels_for)
        else:
            f = _value_field(el, name, kind, label)
            fields.append(f)
            by_name.setdefault(name, f)
    return fields


def _button_type(el) -> str | None:
    """"submit" or "image" for a control that submits its form (a ``<button>`` of no or an
    unknown type is one), "button"/"reset" for a button that does not, None for any other."""
    kind = _keyword(el.get("type"), _INPUT_TYPES, "")
    if el.tag == "button":
        return kind if kind in ("button", "reset") else "submit"
    if el.tag == "input" and kind in ("submit", "image", "button", "reset"):
        return kind
    return None


def _pressed_button(root, form_el):
    """The button a person submits the form with: its first submit button that is not
    disabled (the default button, which Enter presses), named or not; None if it has none."""
    return next((el for el in _controls(root, form_el)
                 if _button_type(el) in ("submit", "image") and not _disabled(el)), None)


def _disabled(el) -> bool:
    """Whether a control is disabled: by its own attribute, or by a disabled ``<fieldset>``
    around it (except inside that fieldset's first ``<legend>``); an option also by its
    disabled ``<optgroup>``."""
    if el.get("disabled") is not None:
        return True
    if el.tag == "option":
        parent = el.getparent()
        return parent is not None and parent.tag == "optgroup" and parent.get("disabled") is not None
    child = el
    for anc in el.iterancestors():
        if anc.tag == "fieldset" and anc.get("disabled") is not None:
            legend = next((c for c in anc if c.tag == "legend"), None)
            if legend is None or child is not legend:
                return True
        child = anc
    return False


def _add_choice(group: FormField, el, root, labels_for: dict) -> None:
    """One radio button or checkbox into its name's group (the group's label from the first)."""
    value = el.get("value", "on")
    opt_label = _visible_label(el, root, labels_for) or ""
    if not group.options:
        group.label = _group_label(el) or (opt_label if group.type == "checkbox" else None)
    group.options.append(value)
    group.option_labels.append(opt_label)
    if el.get("checked") is not None:
        if group.type == "radio":
            group.defaults = [value]
        else:
            group.defaults.append(value)
        group.value = group.defaults[0]


def _value_field(el, name: str, kind: str, label: str | None) -> FormField:
    """A select (its options, what a browser selects by default), a textarea or an input."""
    if el.tag == "select":
        opts = el.xpath(".//option")
        values = [o.get("value") if o.get("value") is not None else _text(o) for o in opts]
        texts = [_text(o) for o in opts]
        multiple = el.get("multiple") is not None
        selected = [i for i, o in enumerate(opts) if o.get("selected") is not None]
        if not multiple:
            # one selected option at most (the last); a drop-down (no size over 1) with none
            # selected shows its first enabled option, a list box shows none
            drop_down = not (el.get("size") or "").strip().isdigit() or int(el.get("size").strip()) <= 1
            first = [i for i, o in enumerate(opts) if not _disabled(o)][:1] if drop_down else []
            selected = selected[-1:] or first
        chosen = [values[i] for i in selected if not _disabled(opts[i])]  # a disabled option is not sent
        return FormField(name, "select", chosen[0] if chosen else None, label, values, texts, multiple, chosen)
    dirname = el.get("dirname") if el.tag == "textarea" or kind in _ONE_LINE or kind == "hidden" else None
    direction = _direction(el) if dirname is not None else "ltr"
    if el.tag == "textarea":
        value = el.text or ""
        value = value[1:] if value.startswith("\n") else value
        return FormField(name, "textarea", value, label, defaults=[value], dirname=dirname, direction=direction)
    value = _sanitized(kind, el.get("value", ""))
    return FormField(name, kind, value, label, defaults=[value], dirname=dirname, direction=direction)


def _direction(el) -> str:
    """A control's directionality: its own ``dir`` (``auto``: from the value it sends), else its
    nearest ancestor's ``ltr`` or ``rtl``, else ltr (an ancestor's ``auto`` is taken as ltr)."""
    own = (el.get("dir") or "").strip().lower()
    if own in ("ltr", "rtl", "auto"):
        return own
    for anc in el.iterancestors():
        d = (anc.get("dir") or "").strip().lower()
        if d in ("ltr", "rtl"):
            return d
        if d == "auto":
            return "ltr"
    return "ltr"


def _auto_direction(value: str) -> str:
    """``dir=auto``: rtl when the value's first strong character is right-to-left, else ltr."""
    for ch in value:
        kind = unicodedata.bidirectional(ch)
        if kind in ("R", "AL"):
            return "rtl"
        if kind == "L":
            return "ltr"
    return "ltr"


def _with_dirnames(form: Form, sent: list[dict]) -> list[dict]:
    """``sent`` with each ``dirname`` entry after its control's, as a browser sends it (``q.dir=ltr``;
    an empty dirname, as Chromium, ``=ltr``). A submit input's goes before the button's value, and
    is sent, where the button stands, whether the button is pressed or not (as Chromium sends it;
    the HTML standard sends the pressed button's only)."""
    dirnamed = {f.name: f for f in form.fields if f.dirname is not None and f.type != "submit"}
    buttons = [i for i, f in enumerate(form.fields) if f.dirname is not None and f.type == "submit"]
    if not dirnamed and not buttons:
        return sent
    out = []
    for x in sent:
        out.append(x)
        f = dirnamed.get(x["name"])
        if f is not None and x["type"] != "submit":
            direction = _auto_direction(x["value"] or "") if f.direction == "auto" else f.direction
            out.append({"name": f.dirname, "value": direction, "label": None, "type": "hidden"})
    for i in buttons:
        b = form.fields[i]
        at = next((j for j, x in enumerate(out) if x["name"] == b.name and x["type"] == "submit"), None)
        if at is None:  # not pressed: where the button stands among the fields sent (before the first
            # entry of a field after it only)
            later = {f.name for f in form.fields[i + 1:]} - {f.name for f in form.fields[:i + 1]}
            at = next((j for j, x in enumerate(out) if x["name"] in later), len(out))
        out.insert(at, {"name": b.dirname, "value": b.direction, "label": None, "type": "hidden"})
    return out


def _sanitized(kind: str, value: str) -> str:
    """An input's value as a browser keeps it (HTML's value sanitization): a one-line field
    loses its line breaks (a url or email field its outer whitespace too), any other is as given."""
    if kind not in _ONE_LINE:
        return value
    value = value.replace("\r", "").replace("\n", "")
    return value.strip(" \t\n\f\r") if kind in ("url", "email") else value


def _crlf(text: str) -> str:
    """``text`` with each line break (CR, LF or CRLF) a CRLF, as a browser sends names and values."""
    return _LINE_BREAK_RE.sub("\r\n", text)


def _controls(root, form_el) -> list:
    """The form's controls in document order: those a browser's parser gives it (``owners``), and
    those anywhere with form="ID" where the page's first element of that ID is the form."""
    fid, mark = form_el.get("id"), form_el.get(OWNER)
    ours = "c" + mark[1:] if mark else None
    first_of_id = root.get_element_by_id(fid, None) if fid else None  # the first of that ID
    out = []
    for el in root.iter(*CONTROLS):
        ref = el.get("form")
        if el.get(OWNER) in ("x", "n"):  # in a <template> or <noscript>: no form's, whatever its form=
            continue
        if ref is not None:  # form="" or an ID no form has first: no form's (Chromium)
            if ref and ref == fid and first_of_id is form_el:
                out.append(el)
        elif el.get(OWNER) is not None:
            if el.get(OWNER) == ours:
                out.append(el)
        elif form_el in el.iterancestors():  # a control the scan of the tags did not see
            out.append(el)
    return out


def _group_label(el) -> str | None:
    """The label of a radio/checkbox group: its fieldset's legend, else the cell before it."""
    fs = next((a for a in el.iterancestors() if a.tag == "fieldset"), None)
    if fs is not None:
        legend = fs.find("legend")
        if legend is not None and _text(legend):
            return _text(legend)
    return _cell_label(el) or None


def submissions_from_form(form: Form, values: list[dict]) -> list[dict]:
    """One submission per value set: the form's defaults and hidden inputs, with the fields
    a value set names (by field name, else by visible label) set to its values (a list
    value sends the name once per item). Names the form lacks are added (label unknown;
    ``unknown_fields`` finds them, and ``hwnoise collect`` warns of them). A form whose action
    is ``javascript:`` or no http(s) URL (a page file's relative action) is a ``FormError``."""
    _check_submittable(form)
    out = []
    for vs in values:
        sent = form.default_fields()
        for key, value in vs.items():
            f = _named(form, key)
            name = f.name if f else str(key)
            items = value if isinstance(value, list) else [value]
            items = ["" if v is None else str(v) for v in items]
            if f and f.type == "select" and f.options:
                items = [_option_value(f, v) for v in items]
            if f:
                items = [_sanitized(f.type, v) for v in items]
            new = [{"name": name, "value": v, "label": f.label if f else None, "type": f.type if f else "text"}
                   for v in items]
            positions = [i for i, x in enumerate(sent) if x["name"] == name]
            if positions:
                at = positions[0]
                sent = [x for x in sent if x["name"] != name]
                sent[at:at] = new
            else:
                # a control with no default (unchecked box, unselected radio) goes where the form has it
                order = [x.name for x in form.fields]
                at = len(sent)
                if name in order:
                    later = set(order[order.index(name) + 1:])
                    at = next((i for i, x in enumerate(sent) if x["name"] in later), len(sent))
                sent[at:at] = new
        sent = _with_dirnames(form, sent)
        # line breaks sent as CRLF (a textarea's, a hidden field's), in names too, as browsers send them
        sent = [{**x, "name": _crlf(x["name"]), "value": _crlf("" if x["value"] is None else x["value"])}
                for x in sent]
        out.append(make_submission(form.method, form.action, sent, enctype=form.enctype, charset=form.charset,
                                   **({"form": form.page_url} if form.page_url else {})))
    return out


def _check_submittable(form: Form) -> None:
    """Refuse a form no request can be built for (it was made into submissions to
    ``javascript:void(0)?q=...``, each journaled as a failure)."""
    where = form.page_url or "the form"
    scheme = urlsplit(form.action).scheme.lower()
    if scheme == "javascript":
        raise FormError(f"{where}: the form's action is {form.action[:80]!r}: a script on the page sends this "
                        "search, and hwnoise runs no script; give the requests the page makes (a HAR file "
                        "exported by the browser, or their URLs) as SUBMISSIONS")
    if scheme not in ("http", "https"):
        hint = (": a form page read from a file resolves a relative action against the file; give the page's "
                "http(s) URL" if scheme == "file" and where.startswith("file:") else
                ": a relative action, and no page URL to resolve it against (pass base_url)" if not scheme else "")
        raise FormError(f"{where}: the form's action {form.action[:120]!r} is not an http or https URL{hint}")


def _named(form: Form, key: object) -> FormField | None:
    """The form's field a value set names: by its name, else by its visible label."""
    return form.field(key) or next((x for x in form.fields if x.label and x.label.casefold() == str(key).casefold()),
                                   None)


def unknown_fields(form: Form, values: list[dict]) -> list[str]:
    """The names in ``values`` that name no field of ``form`` (neither a name nor a label): sent
    as given, which is what a typo in a field's name does too."""
    return list(dict.fromkeys(str(k) for vs in values for k in vs if _named(form, k) is None))


def unchoosable_values(form: Form, values: list[dict]) -> list[str]:
    """What ``values`` sets a select or a radio group to that none of its options is (by value
    or by text): ``["value set N: 'v' for 'name' (options: ...)"]``, and any value for a file
    field. A browser cannot send it."""
    out = []
    for n, vs in enumerate(values, 1):
        for key, value in vs.items():
            f = _named(form, key)
            if f is not None and f.type == "file":
                out.append(f"value set {n}: {f.name!r} is a file field, and hwnoise uploads no file (it is sent "
                           "empty, as a browser sends it when no file is chosen)")
                continue
            if f is None or f.type not in ("select", "radio") or not f.options:
                continue
            for v in (value if isinstance(value, list) else [value]):
                v = "" if v is None else str(v)
                if _option_value(f, v) not in f.options:  # neither an option's value nor its text
                    shown = ", ".join(repr(o) for o in f.options[:8]) + (", ..." if len(f.options) > 8 else "")
                    out.append(f"value set {n}: {v!r} for {f.name!r} is none of its options ({shown})")
    return out


def _option_value(f: FormField, v: str) -> str:
    """A select's value for ``v``: ``v`` itself when it is an option's value, else the value of
    the option whose text is ``v`` (users write what they see)."""
    if v in f.options:
        return v
    for value, text in zip(f.options, f.option_labels):
        if text.casefold() == v.casefold():
            return value
    return v


def _check_value_set(obj: dict, where: str) -> dict:
    """``obj`` when each value is one a form field takes (a string, a number, null, or a list of
    them for a field sent once per item); else a FormError naming ``where`` and the field."""
    def plain(v: object) -> bool:
        return v is None or isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                                   and math.isfinite(v))

    for key, value in obj.items():
        if not (plain(value) or (isinstance(value, list) and all(plain(v) for v in value))):
            raise FormError(f"{where}: the value of {key!r} is {json.dumps(value)[:80]}; a field takes a string "
                            "or a number (or a list of them, sent once each)")
    return obj


def read_values(path: str | os.PathLike) -> list[dict]:
    """Value sets from JSON lines (``{field: value}`` a line), a JSON array, or CSV with a
    header (an empty cell leaves that field at the form's default). Decoded as a text file a
    person gives (``decode.decode_text``: a CSV Excel saved in cp1252, or in UTF-16, is read as
    written; it was decoded as UTF-8 with its accented letters replaced by U+FFFD and sent)."""
    from hwnoise.decode import decode_text

    path = Path(path)
    if not path.is_file():
        raise FormError(f"{path}: no such values file")
    text = decode_text(path.read_bytes())
    head = text.lstrip()
    if head.startswith("["):
        items = parse_json(head, str(path), FormError)
        if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
            raise FormError(f"{path}: the JSON array must hold objects of {{field: value}}")
        for i, obj in enumerate(items):
            _check_value_set(obj, f"{path}: item {i}")
        return items
    if head.startswith("{"):
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            obj = parse_json(line, f"{path}:{n}", FormError, at_line=True)
            if not isinstance(obj, dict):
                raise FormError(f"{path}:{n}: expected an object of {{field: value}}")
            out.append(_check_value_set(obj, f"{path}:{n}"))
        return out
    reader = csv.reader(io.StringIO(text), strict=True)
    try:
        rows = list(reader)
    except csv.Error as exc:  # a quote never closed took the rest of the file into one cell
        why = "; a quote opened and never closed runs to the end of the file" if "end of data" in str(exc) else ""
        raise FormError(f"{path}:{reader.line_num}: not CSV ({exc}){why}") from None
    rows_n = [(n, r) for n, r in enumerate(rows, 1) if any(c.strip() for c in r)]
    if not rows_n:
        return []
    (_, header), body = rows_n[0], rows_n[1:]
    header = [h.strip() for h in header]
    if not all(header):
        raise FormError(f"{path}:1: the CSV header has an empty column name")
    twice = next((h for i, h in enumerate(header) if h in header[:i]), None)
    if twice is not None:  # the later column's values silently replaced the earlier's
        raise FormError(f"{path}:1: the CSV header names the column {twice!r} twice; give each field one column")
    out = []
    for n, row in body:
        if len(row) != len(header):
            raise FormError(f"{path}:{n}: {counted(len(row), 'column')} where the header has {len(header)}")
        out.append({h: v for h, v in zip(header, row) if v != ""})
    return out
