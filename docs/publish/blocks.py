"""Generated blocks on user pages: the one place a page's measured figures are written.

owns: the marker format, finding blocks in a page, rewriting one block's body.
never: what goes inside a block (its producer decides), which run is the latest (publish does).

A block is marked so that a reader and a script both see it:

    <!-- generated NAME from RUN -->
    ...body written by a script...
    <!-- end generated -->

NAME names the block on its page (letters, digits, '-', '_', '.'); RUN names the published run the
figures come from (for example a lab run's id such as 2026-12-04-1420, or a file under docs/lab/).
Everything between the two marker lines belongs to the script; hand edits there are overwritten.
"""
import re

BEGIN = re.compile(r"^<!-- generated (?P<name>[A-Za-z0-9_.-]+) from (?P<run>[^ ]+) -->\s*$")
END = "<!-- end generated -->"


class BlockError(ValueError):
    pass


def find(text):
    """The blocks of a page: a list of dicts with name, run, first and last line numbers (1-based,
    the marker lines themselves) and body (the lines between them, joined). Raises BlockError on an
    unclosed block, a nested one, an end without a begin, or a name used twice."""
    out, cur, seen = [], None, set()
    for n, line in enumerate(text.split("\n"), 1):
        m = BEGIN.match(line)
        if m:
            if cur is not None:
                raise BlockError("line %d: block %r opened inside block %r (line %d)"
                                 % (n, m["name"], cur["name"], cur["first"]))
            if m["name"] in seen:
                raise BlockError("line %d: block %r appears twice" % (n, m["name"]))
            seen.add(m["name"])
            cur = {"name": m["name"], "run": m["run"], "first": n, "lines": []}
        elif line.strip() == END:
            if cur is None:
                raise BlockError("line %d: '%s' without its begin" % (n, END))
            cur["last"] = n
            cur["body"] = "\n".join(cur.pop("lines"))
            out.append(cur)
            cur = None
        elif line.startswith("<!-- generated"):
            raise BlockError("line %d: malformed begin marker %r (want '<!-- generated NAME from RUN -->')"
                             % (n, line.strip()))
        elif cur is not None:
            cur["lines"].append(line)
    if cur is not None:
        raise BlockError("line %d: block %r is never closed" % (cur["first"], cur["name"]))
    return out


def outside(text):
    """The page's lines outside every generated block, as (line number, line) pairs: what a hand
    wrote, and what a figure check reads."""
    inside = set()
    for b in find(text):
        inside.update(range(b["first"], b["last"] + 1))
    return [(n, l) for n, l in enumerate(text.split("\n"), 1) if n not in inside]


def replace(text, name, run, body):
    """The page with block NAME's body and run replaced. Raises BlockError when the page has no such
    block: a producer never invents where its figures go; the page's author places the markers."""
    for b in find(text):
        if b["name"] == name:
            lines = text.split("\n")
            new = ["<!-- generated %s from %s -->" % (name, run)] + body.rstrip("\n").split("\n") + [END]
            lines[b["first"] - 1:b["last"]] = new
            return "\n".join(lines)
    raise BlockError("no block %r on the page (add '<!-- generated %s from RUN -->' and '%s' where it goes)"
                     % (name, name, END))


def rewrite(path, name, run, body):
    """replace() on a file in place; returns True when its text changed."""
    with open(path) as f:
        old = f.read()
    new = replace(old, name, run, body)
    if new != old:
        with open(path, "w") as f:
            f.write(new)
    return new != old
