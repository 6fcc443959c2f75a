"""A Markdown note as a person wrote it: frontmatter, headings and sections, links and tags.

Parsing never changes a byte. `Note.text` is the file exactly as read; everything else points into
it. Edits (`replace_section`, `set_frontmatter_field`) work on text and touch only the lines they
are about, so what a person wrote elsewhere survives byte for byte and user frontmatter is never
re-serialised (python-frontmatter's round trip sorts keys and drops comments).

This is the only module that imports python-frontmatter (for its YAML loader), PyYAML (to measure
nesting before loading) and markdown-it-py; frontmatter in YAML's plainest form is read without
loading it, to the same values (plain_yaml.py, which types its words by PyYAML's own table).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import frontmatter
import yaml

from brainiac.core.errors import NoteParseError
from brainiac.formats import plain_yaml
from brainiac.formats.fences import Fences

_FENCE_RE = re.compile(r"^---[ \t]*\r?$")
_END_RE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$")
# [[target]], [[target#Heading]], [[target#^block]], [[target|shown]] (`\|` inside a table).
_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]|#^\n]+)(?:[#^][^\[\]|\n]*)?(?:\\?\|([^\[\]\n]*))?\]\]")
# "#" first, the character before it checked after: a pattern that starts with a lookbehind is
# tried at every position of the text, one that starts with "#" jumps from "#" to "#" (a build
# looks for tags in every note).
_TAG_RE = re.compile(r"#(?<![\w/&#]#)([\w][\w/-]*)")
_CODE_SPAN_RE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@functools.cache
def _markdown() -> MarkdownIt:
    # Imported on first use: only link and tag finding parses Markdown, and importing
    # markdown_it would slow every `brainiac` call (a context call, the agent hook's path).
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


@dataclass(frozen=True)
class Section:
    """A heading and the lines under it, up to the next heading of the same or a higher level."""

    title: str
    level: int
    heading_line: int  # index into Note.lines
    end_line: int  # one past the section's last line


@dataclass(frozen=True)
class Note:
    path: str
    text: str
    meta: Mapping[str, Any]
    frontmatter_lines: tuple[int, int] | None  # (first YAML line, closing fence line), indexes
    body_line: int  # index of the first line after the frontmatter
    sections: tuple[Section, ...]

    @functools.cached_property
    def lines(self) -> list[str]:
        # Kept: showing a note's excerpt asks for its lines five times (sections, sources).
        return split_lines(self.text)

    @property
    def body(self) -> str:
        return "".join(self.lines[self.body_line :])

    def section(self, title: str) -> Section | None:
        wanted = title.casefold()
        return next((s for s in self.sections if s.title.casefold() == wanted), None)

    def section_text(self, title: str) -> str | None:
        """The lines under a heading (not the heading itself); None if there is no such heading."""
        s = self.section(title)
        if s is None:
            return None
        return "".join(self.lines[s.heading_line + 1 : s.end_line])

    @property
    def title(self) -> str:
        value = self.meta.get("title")
        if isinstance(value, str) and value.strip():
            return value.strip()
        h1 = next((s for s in self.sections if s.level == 1), None)
        if h1 is not None:
            return h1.title
        stem = self.path.rsplit("/", 1)[-1]
        return stem[:-3] if stem.endswith(".md") else stem

    def meta_list(self, key: str) -> list[str]:
        """A frontmatter list (`tags`, `aliases`), accepting a single string as a one-item list."""
        value = self.meta.get(key)
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",")] if key == "tags" else [value]
        if not isinstance(value, list):
            return []
        return [str(v).strip().lstrip("#") if key == "tags" else str(v).strip() for v in value if v]

    def meta_float(self, key: str, default: float) -> float:
        value = self.meta.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return default
        try:
            number = float(value)
        except OverflowError:  # an integer past float's range
            return default
        # `.nan` or `.inf` in YAML: a job computing from it wrote `strength: nan` back
        return number if math.isfinite(number) else default

    def meta_time(self, key: str) -> dt.datetime | None:
        return as_datetime(self.meta.get(key))


def split_lines(text: str) -> list[str]:
    """Lines ending in "\n" (kept). Unlike str.splitlines, other separators such as U+2028 or a
    form feed stay inside their line, as every editor shows them."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def as_datetime(value: Any) -> dt.datetime | None:
    """A frontmatter date or datetime (YAML-typed or a string) as a naive datetime."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is None else _naive_local(value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return parsed if parsed.tzinfo is None else _naive_local(parsed)
    return None


def _naive_local(value: dt.datetime) -> dt.datetime | None:
    # Vault times are the person's wall-clock time (see clock.py). An offset can take a time near
    # year 1 or 9999 out of range (`0001-01-01T00:00+14:00`): no time, as for any unreadable one.
    try:
        return value.astimezone().replace(tzinfo=None)
    except (OverflowError, ValueError):
        return None


def parse(text: str, path: str = "<text>") -> Note:
    """Parse a note; NoteParseError (with the line) when its frontmatter is not valid YAML."""
    lines = split_lines(text)
    meta: Mapping[str, Any] = {}
    fm: tuple[int, int] | None = None
    body_line = 0
    if lines and _FENCE_RE.match(lines[0].lstrip("\ufeff")):
        close = next((i for i in range(1, len(lines)) if _END_RE.match(lines[i])), None)
        if close is None:
            raise NoteParseError(
                path, "frontmatter starts with --- but never ends; add a closing --- line", 1
            )
        fm = (1, close)
        meta = _load_yaml("".join(lines[1:close]), path)
        body_line = close + 1
    # Without three backticks or tildes in a row there is no fence to track (the fence check was
    # a third of finding a long-term note's headings).
    fenced = "```" in text or "~~~" in text
    note = Note(path, text, meta, fm, body_line, _sections(lines, body_line, fenced))
    note.__dict__["lines"] = lines  # `Note.lines`' cache: the text is split once, here
    return note


# libyaml's composer, the C loader python-frontmatter uses, recurses in C without a limit:
# frontmatter nested ~30,000 levels deep (`a: [[[[...`, 60 KB) crashed the process with SIGSEGV.
# So the nesting is measured first on libyaml's event stream (no recursion there) whenever the
# frontmatter holds enough of the characters a level needs (a flow `[` or `{`, a block `-` or `?`,
# a new line under a key); a note that nests deeper than anyone writes by hand is skipped.
_NESTING_CHARS = "[{-?:\n"
_MAX_NESTING = 100
_EventLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(source: str, path: str) -> Mapping[str, Any]:
    if not source.strip():
        return {}
    plain = plain_yaml.load(source)
    if plain is not None:
        return plain
    if sum(map(source.count, _NESTING_CHARS)) > _MAX_NESTING and _too_deep(source):
        raise NoteParseError(
            path,
            f"frontmatter nests deeper than {_MAX_NESTING} levels; fix it, the note is skipped "
            "until then",
            2,
        )
    try:
        loaded = frontmatter.YAMLHandler().load(source)
    except Exception as exc:  # yaml.YAMLError and friends; translated at this boundary
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None  # +1 for the fence, +1 for 1-based
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise NoteParseError(
            path,
            f"frontmatter is not valid YAML ({problem}); fix it, the note is skipped until then",
            line,
        ) from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise NoteParseError(
            path, "frontmatter must be key: value pairs; fix it, the note is skipped until then", 2
        )
    if _expands_beyond(loaded, 2 * len(source) + 1000):
        # A "billion laughs": aliases of aliases load as shared lists, cheap until something walks
        # them (str() of a tag list took 9 GB and never ended). Without aliases a value takes at
        # least a character or two, so more values than that can only come from them.
        raise NoteParseError(
            path,
            "frontmatter repeats YAML aliases (*name) into more values than the file holds; "
            "fix it, the note is skipped until then",
            2,
        )
    return loaded


def _too_deep(source: str) -> bool:
    depth = 0
    try:
        for event in yaml.parse(source, Loader=_EventLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > _MAX_NESTING:
                    return True
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        # libyaml's scanner has a nesting limit of its own (1000; newer PyYAML wheels) and stops
        # there, before its events reach ours. Any other error: not deep before it, and loading
        # stops at it too and says where.
        return "maximum nesting depth" in str(exc)
    return False


def _expands_beyond(value: Any, limit: int) -> bool:
    """Whether `value` counts more than `limit` values with every alias use counted apart, as a
    walk over it meets them. Iterative, and it stops at the limit (a recursive alias never ends)."""
    stack = [value]
    count = 0
    while stack:
        item = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
    return False


_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?\n?$")


def _sections(lines: list[str], body_line: int, fenced: bool) -> tuple[Section, ...]:
    # A line scanner for ATX headings outside fenced code, rather than a full CommonMark parse:
    # the short-term document is read on every context call and grows to thousands of lines.
    headings: list[tuple[int, int, str]] = []  # (line, level, title)
    fences = Fences()
    for i in range(body_line, len(lines)):
        line = lines[i]
        if fenced and fences.code(line):
            continue
        if line.startswith(("#", " #", "  #", "   #")):
            m = _ATX_RE.match(line)
            if m:
                headings.append((i, len(m.group(1)), (m.group(2) or "").strip()))
    sections = []
    for k, (line_no, level, title) in enumerate(headings):
        end = len(lines)
        for later_line, later_level, _ in headings[k + 1 :]:
            if later_level <= level:
                end = later_line
                break
        sections.append(Section(title, level, line_no, end))
    return tuple(sections)


# What can make Markdown text not prose: code (backticks, a ~~~ fence, text indented four
# columns: after a list marker or `>` too, so any tab or run of four spaces), HTML (blocks,
# comments, autolinks all start with `<`), a link reference definition.
# Looked for with `in` (a scan in C; one regex with all of them is far slower), the
# reference definition's pattern only when "]:" is there. A definition may start a list item
# or a quote ("- [ref]: #tag" hides the tag), a label may hold escaped brackets or span lines:
# any bracketed label before "]:" counts, wherever it stands.
_MAY_HIDE = ("`", "<", "\t", "~~~", "    ")
_REFERENCE_DEFINITION_RE = re.compile(r"\[(?:[^\]\\]|\\.){0,999}\]:", re.S)


def _may_hide(text: str) -> bool:
    return any(sign in text for sign in _MAY_HIDE) or (
        "]:" in text and _REFERENCE_DEFINITION_RE.search(text) is not None
    )


def prose_of(text: str) -> str:
    """The text outside code fences and code spans (where links and tags mean something)."""
    if not _may_hide(text):
        # Performance: the Markdown parse is most of parsing a vault for a full build. Text
        # with none of those is prose as it stands (a link or tag never spans lines, so the
        # block structure cannot split one); tests/test_note.py checks the two paths agree.
        return text
    return markdown_prose(text)


def markdown_prose(text: str) -> str:
    """prose_of by the Markdown parse itself, whatever the text holds."""
    out = []
    for tok in _markdown().parse(text):
        if tok.type == "inline":
            out.append(_CODE_SPAN_RE.sub(" ", tok.content))
    return "\n".join(out)


def wikilinks(text: str) -> list[str]:
    """Targets of [[links]] and ![[embeds]] outside code, in order, without duplicates."""
    seen: dict[str, None] = {}
    if "[[" not in text:
        return []  # nothing to find: skip the Markdown parse (slow on a note of 1,000 events)
    for m in _WIKILINK_RE.finditer(prose_of(text)):
        seen.setdefault(_target(m), None)
    return list(seen)


def link_parts(link: str) -> tuple[str, str] | None:
    """The target and the shown text of one `[[link]]` (the shown text is the target when the
    link has none): `[[anna-berg|Anna Berg]]` -> ("anna-berg", "Anna Berg"). None if `link` is
    not a wikilink."""
    m = _WIKILINK_RE.fullmatch(link.strip())
    if m is None:
        return None
    target = _target(m)
    shown = (m.group(2) or "").strip()
    return target, shown or target


def _target(m: re.Match[str]) -> str:
    # In a table the pipe is escaped (`[[anna-berg\|Anna]]`); the backslash is not the target's.
    return m.group(1).rstrip("\\").strip()


def inline_tags(text: str) -> list[str]:
    """#tags in the prose; a tag needs at least one non-digit (Obsidian's rule)."""
    seen: dict[str, None] = {}
    if not _TAG_RE.search(text):
        return []  # the prose is part of the text: no candidate there, none in the prose
    for m in _TAG_RE.finditer(prose_of(text)):
        tag = m.group(1).rstrip("/-")
        if tag and not tag.isdigit():
            seen.setdefault(tag, None)
    return list(seen)


def replace_section(text: str, title: str, new_body: str, level: int = 2) -> str:
    """Replace the lines under heading `title` with `new_body`; append the section if missing.

    Only those lines change: the heading line itself and everything around it keep their bytes.
    """
    note = parse(text)
    lines = note.lines
    if not new_body.endswith("\n") and new_body:
        new_body += "\n"
    section = note.section(title)
    if section is None:
        prefix = text
        if prefix and not prefix.endswith("\n"):
            prefix += "\n"
        if prefix and not prefix.endswith("\n\n"):
            prefix += "\n"
        return f"{prefix}{'#' * level} {title}\n{new_body}"
    before = "".join(lines[: section.heading_line + 1])
    if before and not before.endswith("\n"):
        before += "\n"
    after = "".join(lines[section.end_line :])
    if after and new_body and not new_body.endswith("\n\n"):
        new_body += "\n"  # keep a blank line before the next heading
    return before + new_body + after


def yaml_number(value: float, places: int) -> str:
    """A number for a frontmatter line, rounded to `places` decimals and never in exponent form:
    YAML 1.1 (PyYAML, so brainiac itself) reads `1e-05` as a string, Obsidian as a number."""
    text = f"{round(value, places):.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def set_frontmatter_field(text: str, key: str, yaml_value: str) -> str:
    """Set one top-level frontmatter key by editing its line; every other byte stays as it was.

    `yaml_value` is already YAML (the caller decides quoting). A key whose value spans several lines
    (a block list) is replaced together with its indented continuation lines. A key written twice
    is set on its last line, the one YAML reads.

    Frontmatter that is not laid out as `key: value` lines can make a line edit unreadable (a flow
    mapping `{title: x}`, an empty document `~`, a tab-only line, an alias of an anchor on the line
    replaced). Such an edit is read back first, and when the key does not read back the text is
    returned as it was: the note stays as its person wrote it, without the field.
    """
    note = parse(text)
    lines = note.lines
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    new_line = f"{key}: {yaml_value}{newline}"
    if note.frontmatter_lines is None:
        return f"---{newline}{new_line}---{newline}{text}"
    first, close = note.frontmatter_lines
    key_re = re.compile(rf"^{re.escape(key)}\s*:")
    found = [i for i in range(first, close) if key_re.match(lines[i])]
    if found:
        i = found[-1]
        j = i + 1
        while j < close and (lines[j].startswith((" ", "\t", "-")) or not lines[j].strip()):
            if lines[j].startswith("-") and not lines[i].rstrip().endswith(":"):
                break
            j += 1
        new = [*lines[:i], new_line, *lines[j:]]
        new_close = close - (j - i) + 1
    else:
        new = [*lines[:close], new_line, *lines[close:]]
        new_close = close + 1
    source = "".join(lines[first:close])
    content = [line for line in lines[first:close] if line.strip() and line.lstrip()[:1] != "#"]
    # `~` or `{}`; a mapping indented as a whole; a document end (`...`) before the last line
    risky = not note.meta or not content or content[0][:1].isspace()
    risky = risky or any(line.startswith(("...", "---")) for line in content)
    if (risky or _RISKY_LAYOUT.search(source)) and not _reads_back(
        "".join(new[first:new_close]), key, new_line
    ):
        return text
    return "".join(new)


# What can make a line edit of frontmatter unreadable, so that it is read back before it is kept:
# flow collections, anchors and aliases, tags, complex keys, directives, block scalars, nulls, tabs,
# byte order marks, and the line breaks YAML knows beside "\n" (U+0085, U+2028, U+2029): a key after
# one of them starts a line for YAML but not for this line editor, which would miss it.
_RISKY_LAYOUT = re.compile(r"[{}&*!?%|>~\t\ufeff\x85\u2028\u2029]")


def _reads_back(source: str, key: str, line: str) -> bool:
    try:
        meta = _load_yaml(source, "<frontmatter>")
        return key in meta and meta[key] == _load_yaml(line, "<frontmatter>").get(key)
    except NoteParseError:
        return False
