"""Every relative link of the repository's Markdown files leads somewhere:
the file or folder exists, and a #fragment names a heading of the
Markdown file it points to (GitHub's anchors)."""

import os
import re
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# [text](target) and [text](target "title"); images too.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_files():
    """The Markdown files git knows (tracked, or new and not ignored)."""
    p = subprocess.run(["git", "ls-files", "--cached", "--others",
                        "--exclude-standard", "*.md"], cwd=TOP,
                       stdout=subprocess.PIPE, text=True, check=True)
    return sorted(f for f in p.stdout.split()
                  if os.path.exists(os.path.join(TOP, f)))


def prose_lines(path):
    """The lines of a Markdown file outside fenced code blocks, with
    inline code spans blanked (a link inside code is not a link)."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield number, re.sub(r"`[^`]*`", "", line)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """Anchors of the headings of a Markdown file (repeats get -1, -2)."""
    seen, out = {}, set()
    for _, line in prose_lines(path):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def links(path):
    for number, line in prose_lines(path):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue        # http:, https:, mailto:, file:
            yield number, target


FILES = markdown_files()


def test_markdown_files_found():
    assert "README.md" in FILES, FILES


@pytest.mark.parametrize("md", FILES)
def test_relative_links_resolve(md):
    here = os.path.dirname(os.path.join(TOP, md))
    broken = []
    for number, target in links(os.path.join(TOP, md)):
        name, _, fragment = target.partition("#")
        dest = os.path.normpath(os.path.join(here, name)) if name else \
            os.path.join(TOP, md)
        if not dest.startswith(TOP + os.sep) and dest != TOP:
            broken.append("%d: %s leaves the repository" % (number, target))
        elif not os.path.exists(dest):
            broken.append("%d: %s does not exist" % (number, target))
        elif fragment and dest.endswith(".md") and \
                fragment not in anchors(dest):
            broken.append("%d: %s: no heading #%s" % (number, target,
                                                     fragment))
    assert not broken, "\n".join(broken)


def test_slug_follows_github():
    assert slug("Database roles") == "database-roles"
    assert slug("PostgreSQL: restarts, failover, backups") == \
        "postgresql-restarts-failover-backups"
    assert slug("The `psd2ctl` CLI (operator)") == "the-psd2ctl-cli-operator"
